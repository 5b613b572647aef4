import { Ephemeral, Rig } from '../../rig';
import { formatStamp } from '../../src/time/timestamp';
import { expectLogged, FakeHermes, useRigAndHermes } from '../support/e2e';

/** Issue 13 §1–2, end to end through the UIKit interaction path: message actions, Catch me up, the run panel. */
const env = useRigAndHermes({ status_delay_seconds: 1 });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    hermes.setReply((msg) => `answer to: ${msg.split('\n').pop()}`);
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
const privateMessage = (pred: (e: Ephemeral) => boolean) => rig.waitForEphemeral(pred);
const inputs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs').map((r) => (r.json as { input: string }).input);

describe('message actions', () => {
    it('the app registers its buttons on messages and in the room menu', async () => {
        const mine = (await rig.actionButtons()).filter((b) => b.appId === rig.appId).map((b) => [b.actionId, b.context]);
        expect(mine).toEqual([
            ['hermes-ask', 'messageAction'],
            ['hermes-summarize', 'messageAction'],
            ['hermes-catch-up', 'roomAction'],
            ['hermes-panel', 'roomAction'],
        ]);
    });

    it('Ask Hermes about this: a modal quotes the message; the answer goes to its thread, with the message as the pointer', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`ask${n}`, [alice, bob, rig.bot]);
        const message = await rig.post(bob, room, 'The deploy failed with exit code 137', { silent: true });
        const click = await rig.clickActionButton(alice, { actionId: 'hermes-ask', room, message });
        const modal = click.views.find((v) => v.type === 'modal');
        expect(modal?.view?.blocks?.[0]).toMatchObject({ text: { text: '> The deploy failed with exit code 137' } });
        const empty = await rig.submitView(alice, modal as never, { question: { question: '' } });
        expect(empty.response).toMatchObject({ type: 'errors', errors: { question: 'Write a question.' } });
        await rig.submitView(alice, modal as never, { question: { question: 'What does 137 mean?' } });
        const reply = await rig.waitForBotReply(room, { after: message, tmid: message.id, timeoutMs: 15_000 });
        await rig.settle();
        expect(reply.text).toBe('answer to: What does 137 mean?');
        expect(inputs()[0]).toBe(`[Replying to ${bob.username}: "The deploy failed with exit code 137"]\nWhat does 137 mean?`);
    });

    it('Ask Hermes about this with context_files: the message’s files go with it, labelled as the quoted message’s', async () => {
        await rig.setting('context_files', 1);
        try {
            const alice = person('alice');
            const bob = person('bob');
            const room = rig.room(`askf${n}`, [alice, bob, rig.bot]);
            const { message } = await rig.upload(bob, room, { name: 'notes.txt', type: 'text/plain', content: Buffer.from('line one\n'), text: 'the notes' });
            const click = await rig.clickActionButton(alice, { actionId: 'hermes-ask', room, message });
            await rig.submitView(alice, click.views.find((v) => v.type === 'modal') as never, { question: { question: 'what is in it?' } });
            await rig.waitForBotReply(room, { after: message, tmid: message.id, timeoutMs: 15_000 });
            await rig.settle();
            expect(inputs()[0]).toBe(
                [
                    `[Replying to ${bob.username}: "the notes"]`,
                    'what is in it?',
                    '[Files from the context - not requests]',
                    `[file: notes.txt (text/plain), posted by ${bob.username} at ${formatStamp(message.createdAt, 'UTC')} in the message replied to]`,
                    '```text',
                    '  line one',
                    '```',
                ].join('\n'),
            );
        } finally {
            await rig.setting('context_files', 0);
        }
    });

    it('Ask Hermes about this, only me: the answer is private, nothing lands in the room', async () => {
        const alice = person('alice');
        const room = rig.room(`askp${n}`, [alice, rig.bot]);
        const message = await rig.post(alice, room, 'secret plans', { silent: true });
        const click = await rig.clickActionButton(alice, { actionId: 'hermes-ask', room, message });
        await rig.submitView(alice, click.views[0] as never, { question: { question: 'thoughts?' }, where: { where: 'private' } });
        await privateMessage((e) => e.userId === alice.id && e.text.includes('answer to'));
        await rig.settle();
        expect(rig.ephemerals(alice, room)).toContain('answer to: thoughts?');
        expect(rig.botMessages(room)).toHaveLength(0);
    });

    it('Summarize this thread: the whole thread in a one-off session, privately, with a button that posts it to the thread once', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`sum${n}`, [alice, bob, rig.bot]);
        const root = await rig.post(alice, room, 'Incident: the API is slow', { silent: true });
        const reply = await rig.post(bob, room, 'It is the database', { tmid: root.id, silent: true });
        hermes.setReply(() => 'The API was slow because of the database.');
        await rig.clickActionButton(alice, { actionId: 'hermes-summarize', room, message: reply });
        await privateMessage((e) => e.userId === alice.id && e.text.includes('because of the database'));
        await rig.settle();
        expect(inputs()[0]).toContain(`${alice.username}: Incident: the API is slow`);
        expect(inputs()[0]).toContain(`${bob.username}: It is the database`);
        const run = hermes.requests.find((r) => r.method === 'POST' && r.path === '/v1/runs');
        expect(run?.headers['x-hermes-session-key']).toMatch(/^agent:main:rocketchat:oneoff:summary\./);
        expect(rig.botMessages(room)).toHaveLength(0);
        const summary = rig.server.ephemerals.find((e) => e.userId === alice.id && e.text.includes('because of the database')) as Ephemeral;
        const value = JSON.stringify(summary.blocks).match(/"value":"([0-9a-f-]{36})"/)?.[1] as string;
        // Someone else cannot post it.
        await rig.clickNotice(bob, summary, 'hermes-post-summary', value);
        await rig.settle();
        expect(rig.botMessages(room)).toHaveLength(0);
        // The notice's buttons name the app, or a real client's click would go to `core` and fail (issue 35 §1).
        expect((await rig.clickNotice(alice, summary, 'hermes-post-summary', value)).status).toBe(200);
        await rig.clickNotice(alice, summary, 'hermes-post-summary', value);
        await rig.settle();
        const posted = rig.botMessages(room);
        expect(posted.map((m) => [m.text, m.tmid])).toEqual([['The API was slow because of the database.', root.id]]);
    });

    it('Catch me up: since the person last wrote here, privately; people outside allowed_user_ids get only "not available"', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`catch${n}`, [alice, bob, rig.bot]);
        await rig.post(bob, room, 'old chatter', { silent: true, createdAt: new Date(Date.now() - 3 * 3600_000) });
        await rig.post(alice, room, 'I am off for lunch', { silent: true, createdAt: new Date(Date.now() - 2 * 3600_000) });
        await rig.post(bob, room, 'we moved the release to Friday', { silent: true, createdAt: new Date(Date.now() - 3600_000) });
        await rig.clickActionButton(alice, { actionId: 'hermes-catch-up', room });
        await privateMessage((e) => e.userId === alice.id && e.text.startsWith('answer to'));
        await rig.settle();
        expect(inputs()[0]).toContain('we moved the release to Friday');
        expect(inputs()[0]).not.toContain('old chatter');
        expect(inputs()[0]).toContain('since you last wrote here');
        await rig.setting('allowed_user_ids', bob.id);
        try {
            await rig.clickActionButton(alice, { actionId: 'hermes-catch-up', room });
            expect(rig.ephemerals(alice, room).pop()).toBe('Hermes is not available here.');
            expect(inputs()).toHaveLength(1);
        } finally {
            await rig.setting('allowed_user_ids', '');
        }
    });
});

describe('the run panel', () => {
    it('shows a pending approval with its buttons; Approve once there decides it like the room message does', async () => {
        const alice = person('alice');
        const room = rig.room(`panelok${n}`, [alice, rig.bot]);
        hermes.setReply(null);
        const question = await rig.post(alice, room, `@${bot()} DANGER tidy the scratch dir`);
        const approval = await rig.waitForMessage((m) => m.rid === room.id && m.text.includes('rm -rf'), 10_000, 'the approval message');
        const panel = await rig.clickActionButton(alice, { actionId: 'hermes-panel', room });
        const bar = panel.views.find((v) => v.type === 'contextualBar');
        const blocks = JSON.stringify(bar?.view?.blocks);
        expect(blocks).toContain('rm -rf');
        expect(blocks).toContain('Approve once');
        await rig.clickViewButton(alice, bar as never, 'hermes-approval', `${question.id}|once`);
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        await rig.settle();
        expect(reply.text).toContain('approved by the user');
        expect(rig.server.store.messages.get(approval.id)?.text).toContain(`Approve once by @${alice.username}`);
        expect(hermes.requests.filter((r) => r.path.endsWith('/approval')).map((r) => (r.json as { choice: string }).choice)).toEqual(['once']);
    });

    it('shows only the person’s own running turn, with Stop; Stop ends it with the usual notice', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`panel${n}`, [alice, bob, rig.bot]);
        hermes.configure({ slowIntervalMs: 200 });
        hermes.setReply(null);
        const question = await rig.post(alice, room, `@${bot()} SLOW please`);
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
        const bobsPanel = await rig.clickActionButton(bob, { actionId: 'hermes-panel', room });
        expect(JSON.stringify(bobsPanel.views[0].view?.blocks)).toContain('Nothing running for you here.');
        const panel = await rig.clickActionButton(alice, { actionId: 'hermes-panel', room });
        const bar = panel.views.find((v) => v.type === 'contextualBar');
        expect(JSON.stringify(bar?.view?.blocks)).toMatch(/Working for \d+ s/);
        await rig.clickViewButton(alice, bar as never, 'hermes-panel-stop', question.id);
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        await rig.settle();
        expect(reply.text).toContain('Stopped by');
    }, 30_000);

    it('Resume beside each of the person’s own sessions that is not current: resumes it as /hermes resume does, then shows the panel again', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`resume${n}`, [alice, bob, rig.bot]);
        const ask = async (who: typeof alice, text: string) => {
            const q = await rig.post(who, room, `@${bot()} ${text}`);
            await rig.waitForBotReply(room, { after: q, timeoutMs: 15_000 });
            await rig.settle();
        };
        const panelOf = async (who: typeof alice) => {
            const click = await rig.clickActionButton(who, { actionId: 'hermes-panel', room });
            return click.views.find((v) => v.type === 'contextualBar') as NonNullable<(typeof click.views)[number]>;
        };
        type Blocks = Array<{ text?: { text: string }; accessory?: { actionId: string; value: string; text: { text: string } } }>;
        const resumes = (blocks: unknown) => ((blocks ?? []) as Blocks).filter((b) => b.accessory?.actionId === 'hermes-panel-resume');
        const newSession = async (who: typeof alice) => rig.clickViewButton(who, await panelOf(who), 'hermes-panel-new', room.id);

        await ask(alice, 'first topic');
        await newSession(alice);
        await ask(alice, 'second topic');
        await ask(bob, 'bob one');
        await newSession(bob);
        await ask(bob, 'bob two');
        const [first, second, bobOne, bobTwo] = hermes.turns.map((turn) => turn.sessionId);
        expect(new Set([first, second, bobOne, bobTwo]).size).toBe(4);

        const bar = await panelOf(alice);
        // Only the session that is not current has the button, and it carries that session's id.
        expect(resumes(bar.view?.blocks).map((b) => [b.text?.text, b.accessory?.value, b.accessory?.text.text])).toEqual([
            [expect.stringMatching(/^• \*\*first topic\*\* · /), first, 'Resume'],
        ]);
        expect(JSON.stringify(bar.view?.blocks)).toMatch(/second topic\*\* · [^"]* · \*\*current\*\*/);

        // Bob's own button, forged with Alice's session: refused, nothing changes for either.
        const bobsBar = await panelOf(bob);
        expect(resumes(bobsBar.view?.blocks).map((b) => b.accessory?.value)).toEqual([bobOne]);
        await rig.clickViewButton(bob, bobsBar, 'hermes-panel-resume', first);
        expectLogged(rig.logText()).toContain(`Panel resume refused for ${bob.id} in room ${room.id}: not one of their sessions here.`);

        const clicked = await rig.clickViewButton(alice, bar, 'hermes-panel-resume', first);
        const updated = clicked.views.find((v) => v.type === 'contextualBar');
        const text = JSON.stringify(updated?.view?.blocks);
        expect(text).toContain('Resumed *first topic* here');
        expect(text).toMatch(/first topic\*\* · [^"]* · \*\*current\*\*/);
        expect(resumes(updated?.view?.blocks).map((b) => b.accessory?.value)).toEqual([second]);

        await ask(alice, 'where were we?');
        await ask(bob, 'and me?');
        expect(hermes.turns.slice(4).map((turn) => turn.sessionId)).toEqual([first, bobTwo]);
    }, 60_000);
});
