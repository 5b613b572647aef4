import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 34 §1–2: `/hermes retry` and `/hermes undo` on v0.18.2, whose runs are sent their
 * history by the app. What Hermes receives is the proof: after a retry the same question goes
 * again with the history before it, and later turns never carry the retried or undone exchange.
 * Only the exchange's asker (or an admin) may; a forged room, a running turn and a server that
 * loads its own history are refused privately, and nothing changes.
 */
const env = useRigAndHermes({ admin_user_ids: '', progress_in_channel: 'off', stream_answers: false });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;
let answers = 0;

type Run = { input: string; conversation_history?: Array<{ role: string; content: string }> };
const runs = (): Run[] => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs').map((r) => r.json as Run);
const lastRun = () => runs()[runs().length - 1];
const historyTexts = (run: Run) => (run.conversation_history ?? []).map((m) => `${m.role}: ${m.content}`);
const person = (name: string) => rig.user(`${name}${++n}`);
const cmd = (who: StoredUser, room: StoredRoom, line: string, tmid?: string) => rig.commandAnswer(who, room, `/hermes ${line}`, { tmid });
const textOf = (m: StoredMessage) => rig.server.store.messages.get(m.id)?.text;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    // Every answer is new, so a retried question's answer differs from the first.
    hermes.setReply((msg) => `answer ${++answers} to ${msg.split('\n').pop()}`);
});

/** A DM with two answered questions. */
async function dmWithTwo() {
    const alice = person('alice');
    const dm = rig.direct([alice, rig.bot]);
    const first = await rig.ask(alice, dm, 'first question');
    const second = await rig.ask(alice, dm, 'second question');
    return { alice, dm, first, second };
}

describe('retry', () => {
    it('asks the last question again with the history before it, and later turns never see the replaced answer', async () => {
        const { alice, dm, first, second } = await dmWithTwo();
        const [, secondRun] = runs();
        const oldAnswer = textOf(second.reply) as string;
        expect(historyTexts(secondRun)).toEqual(['user: first question', `assistant: ${textOf(first.reply)}`]);

        expect(await cmd(alice, dm, 'retry')).toBe(':repeat: Asking the last question again; Hermes no longer has the previous answer.');
        const fresh = await rig.waitForMessage(
            (m) =>
                m.rid === dm.id &&
                m.senderId === rig.bot.id &&
                m.id !== second.reply.id &&
                /^answer \d+ to second question$/.test(m.text) &&
                m.text !== oldAnswer,
            15_000,
            'the retried answer',
        );
        await rig.settle();
        const retried = lastRun();
        expect(retried.input).toBe(secondRun.input);
        expect(historyTexts(retried)).toEqual(historyTexts(secondRun));
        // The replaced answer is now a short line naming the retry, linking the question.
        expect(textOf(second.reply)).toMatch(
            new RegExp(`^:repeat: _Retried by @${alice.username}: \\[the question\\]\\(.*\\?msg=${second.question.id}\\) was asked again\\._$`),
        );

        await rig.ask(alice, dm, 'third question');
        expect(historyTexts(lastRun())).toEqual([
            'user: first question',
            `assistant: ${textOf(first.reply)}`,
            'user: second question',
            `assistant: ${fresh.text}`,
        ]);
        expect(JSON.stringify(lastRun())).not.toContain(oldAnswer);
    });

    it('retried twice, asks it a third time; with retry_old_answer remove the old answer goes', async () => {
        await rig.setting('retry_old_answer', 'remove');
        try {
            const { alice, dm, second } = await dmWithTwo();
            const secondRun = runs()[1];
            await cmd(alice, dm, 'retry');
            const again = await rig.waitForBotReply(dm, { after: second.reply });
            await rig.settle();
            expect(rig.botMessages(dm).map((m) => m.id)).not.toContain(second.reply.id);
            await cmd(alice, dm, 'retry');
            await rig.waitForMessage(
                (m) => m.rid === dm.id && m.senderId === rig.bot.id && m.createdAt > again.createdAt && /^answer \d+ to second question$/.test(m.text),
                15_000,
                'the third answer',
            );
            await rig.settle();
            expect(rig.botMessages(dm).map((m) => m.id)).not.toContain(again.id);
            expect(runs()).toHaveLength(4);
            expect(lastRun().input).toBe(secondRun.input);
            expect(historyTexts(lastRun())).toEqual(historyTexts(secondRun));
        } finally {
            await rig.setting('retry_old_answer', 'edit');
        }
    });

    it("in a room's main channel, typed as `@bot /retry`: the new answer quotes the same question and mentions its asker", async () => {
        const alice = person('alice');
        const room = rig.room(`plaza${n}`, [alice, rig.bot]);
        const { question, reply } = await rig.ask(alice, room, `@${rig.bot.username} when is the release?`);
        const quote = `?msg=${question.id}) @${alice.username} `;
        expect(textOf(reply)).toContain(quote);
        await rig.post(alice, room, `@${rig.bot.username} /retry`);
        const again = await rig.waitForMessage(
            (m) => m.rid === room.id && m.senderId === rig.bot.id && m.id !== reply.id && m.text.includes(quote),
            15_000,
            'the retried answer',
        );
        await rig.settle();
        expect(again.text).not.toBe(textOf(reply));
        expect(textOf(reply)).toMatch(/^:repeat: _Retried by @/);
        expect(lastRun().input).toBe(runs()[0].input);
    });

    it('in a shared thread only the asker of the last exchange (or an admin) may; a refusal changes nothing', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`team${n}`, [alice, bob, rig.bot]);
        const root = await rig.post(alice, room, 'the plan', { silent: true });
        const { reply } = await rig.ask(alice, room, `@${rig.bot.username} what is the plan?`, { tmid: root.id });
        const before = textOf(reply);
        const requests = hermes.requests.length;
        expect(await cmd(bob, room, 'retry', root.id)).toBe(`Only @${alice.username}, who asked it, or an admin can retry or undo the last exchange here.`);
        expect(await cmd(bob, room, 'undo', root.id)).toBe(`Only @${alice.username}, who asked it, or an admin can retry or undo the last exchange here.`);
        await rig.settle();
        expect(textOf(reply)).toBe(before);
        expect(hermes.requests.length).toBe(requests);

        await rig.setting('admin_user_ids', bob.id);
        try {
            expect(await cmd(bob, room, 'retry', root.id)).toBe(':repeat: Asking the last question again; Hermes no longer has the previous answer.');
            const again = await rig.waitForBotReply(room, { after: reply, tmid: root.id });
            await rig.settle();
            // Asked for alice, in her thread: the answer is hers.
            expect(again.text).toMatch(/^answer \d+ to /);
            expect(lastRun().input).toBe(runs()[0].input);
        } finally {
            await rig.setting('admin_user_ids', '');
        }
    });
});

describe('undo', () => {
    it('takes the last exchange out of what Hermes is sent and marks its answer; a second undo reaches the one before', async () => {
        const { alice, dm, first, second } = await dmWithTwo();
        const secondAnswer = textOf(second.reply);
        expect(await cmd(alice, dm, 'undo')).toBe(':leftwards_arrow_with_hook: Undone: Hermes no longer has the last exchange of this conversation.');
        expect(textOf(second.reply)).toBe(`:leftwards_arrow_with_hook: _Undone by @${alice.username}: Hermes no longer has this exchange._\n\n${secondAnswer}`);
        await rig.ask(alice, dm, 'third question');
        expect(historyTexts(lastRun())).toEqual(['user: first question', `assistant: ${textOf(first.reply)}`]);

        // The last exchange is now the third: undone, then the first.
        await cmd(alice, dm, 'undo');
        await cmd(alice, dm, 'undo');
        expect(textOf(first.reply)).toMatch(/^:leftwards_arrow_with_hook: _Undone by /);
        await rig.ask(alice, dm, 'fourth question');
        expect(lastRun().conversation_history ?? []).toEqual([]);
        expect(await cmd(alice, dm, 'undo')).toBe(':leftwards_arrow_with_hook: Undone: Hermes no longer has the last exchange of this conversation.');
        expect(await cmd(alice, dm, 'undo')).toBe('There is no answered exchange in this conversation to retry or undo.');
    });

    it("after /hermes new, the exchanges of the old session are not the conversation's", async () => {
        const { alice, dm } = await dmWithTwo();
        await cmd(alice, dm, 'new');
        expect(await cmd(alice, dm, 'retry')).toBe('There is no answered exchange in this conversation to retry or undo.');
    });
});

describe('the Hermes panel', () => {
    it('offers Retry and Undo, which run the same commands for the person clicking (forged panel clicks: trustBoundary.test.ts)', async () => {
        const { alice, dm, first, second } = await dmWithTwo();
        const panelOf = async (who: StoredUser, room: StoredRoom) => {
            const click = await rig.clickActionButton(who, { actionId: 'hermes-panel', room });
            return click.views.find((v) => v.type === 'contextualBar') as NonNullable<(typeof click.views)[number]>;
        };
        const bar = await panelOf(alice, dm);
        const labels = JSON.stringify(bar.view?.blocks);
        expect(labels).toContain('Retry last answer');
        expect(labels).toContain('Undo last exchange');

        const undone = await rig.clickViewButton(alice, bar, 'hermes-panel-undo', dm.id);
        expect(JSON.stringify(undone.views.find((v) => v.type === 'contextualBar')?.view?.blocks)).toContain(
            'Undone: Hermes no longer has the last exchange of this conversation.',
        );
        expect(textOf(second.reply)).toMatch(/^:leftwards_arrow_with_hook: _Undone by /);
        await rig.clickViewButton(alice, bar, 'hermes-panel-retry', dm.id);
        await rig.waitForMessage(
            (m) => m.rid === dm.id && m.senderId === rig.bot.id && m.createdAt > second.reply.createdAt && /^answer \d+ to first question$/.test(m.text),
            15_000,
            'the first question answered again',
        );
        await rig.settle();
        expect(lastRun().input).toBe(runs()[0].input);
        expect(lastRun().conversation_history ?? []).toEqual([]);
        expect(textOf(first.reply)).toMatch(/^:repeat: _Retried by /);
    });
});

describe('refusals', () => {
    it("a forged room (another person's DM) is refused at the gate: nothing read, nothing changed", async () => {
        const { dm, second } = await dmWithTwo();
        const mallory = person('mallory');
        const before = textOf(second.reply);
        const requests = hermes.requests.length;
        for (const verb of ['retry', 'undo']) {
            expect(await cmd(mallory, dm, verb)).toBe('`/hermes` is not available here.');
        }
        await rig.settle();
        expect(textOf(second.reply)).toBe(before);
        expect(hermes.requests.length).toBe(requests);
    });

    it('while a turn of the conversation runs, both are refused', async () => {
        const { alice, dm } = await dmWithTwo();
        // The scripted model, whose SLOW answer takes 30 intervals.
        hermes.setReply(null);
        hermes.configure({ slowIntervalMs: 150 });
        try {
            const slow = await rig.post(alice, dm, 'SLOW third');
            await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs' && JSON.stringify(r.json).includes('SLOW third'), 5_000);
            expect(await cmd(alice, dm, 'retry')).toBe(
                'Hermes is still working on a message here. Wait for the answer (or use `/hermes stop`), then try again.',
            );
            expect(await cmd(alice, dm, 'undo')).toBe(
                'Hermes is still working on a message here. Wait for the answer (or use `/hermes stop`), then try again.',
            );
            await rig.waitForBotReply(dm, { after: slow, timeoutMs: 30_000 });
        } finally {
            hermes.configure({ slowIntervalMs: 50 });
            await rig.settle();
        }
    });

    it('with chat completions (Hermes loads the history itself) both are refused, and the log says why', async () => {
        const { alice, dm, second } = await dmWithTwo();
        await rig.setting('hermes_transport', 'chat');
        try {
            expect(await cmd(alice, dm, 'retry')).toBe(
                'Retry and undo are not available with this Hermes server: it keeps the conversation history itself and offers no way to take an exchange out of it.',
            );
            expect(textOf(second.reply)).toMatch(/^answer \d+ to second question$/);
            expect(rig.logText({ appLinesOnly: true })).toContain(`retry by ${alice.id} in agent:main:rocketchat:dm:${dm.id} refused (exchange_unsupported).`);
        } finally {
            await rig.setting('hermes_transport', 'auto');
        }
    });
});
