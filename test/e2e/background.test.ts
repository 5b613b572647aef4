import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { kindOfStored } from '../../rig/marks';
import { FakeHermes, pollUntil, storedTurnHead, useRigAndHermes } from '../support/e2e';

/**
 * Issue 34 §3: `/hermes background <prompt>` runs the prompt in a one-off session that never
 * blocks the conversation it was asked in. The bot posts a public "started" message naming the
 * task; the answer comes under it (a thread in a room; in a DM, quoting it) mentioning the
 * asker; `/hermes stop <id>` stops it for its asker or an admin, nobody else. It is admitted,
 * counted and slotted like any turn (daily budgets, max_parallel_turns).
 */
const env = useRigAndHermes({ admin_user_ids: '', progress_in_channel: 'off', stream_answers: false, status_delay_seconds: 0 });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

type Run = { input: string; conversation_history?: unknown[] };
const runRequests = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');
const runs = (): Run[] => runRequests().map((r) => r.json as Run);
const person = (name: string) => rig.user(`${name}${++n}`);
const mention = () => `@${rig.bot.username}`;
const SLOW_ANSWER = `SLOW:${' tick'.repeat(30)}`;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    // SLOW streams 30 words, one per interval: about 6 s here, long enough to talk meanwhile.
    hermes.configure({ slowIntervalMs: 200 });
});

afterAll(() => hermes.configure({ slowIntervalMs: 50 }));

/** Runs `/hermes background <prompt>` and returns the public "started" message and the task id it names. */
async function startTask(who: StoredUser, room: StoredRoom, prompt: string, tmid?: string): Promise<{ started: StoredMessage; id: string }> {
    const privateBefore = rig.ephemerals(who, room).length;
    await rig.command(who, room, `/hermes background ${prompt}`, { tmid });
    const started = await rig.waitForMessage(
        (m) => m.rid === room.id && m.senderId === rig.bot.id && kindOfStored(m) === 'command' && m.text.includes('Background task'),
        10_000,
        'the started message',
    );
    // The public message is the only answer: nothing private besides.
    expect(rig.ephemerals(who, room)).toHaveLength(privateBefore);
    const id = /`([0-9a-f]{8})`/.exec(started.text)?.[1] as string;
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    return { started, id };
}

describe('in a room', () => {
    it('answers in a thread under its "started" message, mentioning the asker; a question asked meanwhile is answered first', async () => {
        const alice = person('alice');
        const room = rig.room(`bg${n}`, [alice, rig.bot]);
        const { started, id } = await startTask(alice, room, 'SLOW write the quarterly report');
        expect(started.tmid).toBeUndefined();
        expect(started.text).toBe(
            `:hourglass_flowing_sand: Background task \`${id}\` started for @${alice.username}. The answer comes in this thread; \`/hermes stop ${id}\` stops it.`,
        );
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs' && JSON.stringify(r.json).includes('quarterly'), 5_000);

        // The conversation goes on: a mention asked now is answered while the task still runs.
        hermes.setReply((msg) => (msg.includes('standup') ? 'The standup is at ten.' : undefined));
        const quick = await rig.post(alice, room, `${mention()} when is the standup?`);
        const quickAnswer = await rig.waitForMessage(
            (m) => m.rid === room.id && m.senderId === rig.bot.id && m.text.endsWith('The standup is at ten.'),
            5_000,
            'the quick answer',
        );
        expect(rig.botMessages(room).some((m) => m.text.includes(SLOW_ANSWER))).toBe(false);

        const answer = await rig.waitForMessage((m) => m.tmid === started.id && m.senderId === rig.bot.id, 15_000, 'the background answer');
        expect(answer.text).toBe(`@${alice.username} ${SLOW_ANSWER}`);
        expect(answer.createdAt.getTime()).toBeGreaterThan(quickAnswer.createdAt.getTime());
        await rig.settle();

        // Its own one-off session: no history, another session than the room's; the room's turn never saw it.
        const [bgRun, quickRun] = runRequests();
        expect(bgRun.headers['x-hermes-session-key']).toBe(`agent:main:rocketchat:oneoff:bg.${id}`);
        expect(quickRun.headers['x-hermes-session-key']).not.toBe(bgRun.headers['x-hermes-session-key']);
        expect((bgRun.json as Run).input).toBe('SLOW write the quarterly report');
        expect((bgRun.json as Run).conversation_history ?? []).toEqual([]);
        expect(JSON.stringify(quickRun.json)).not.toContain('quarterly');
        expect(quick.tmid).toBeUndefined();
        // Its record is gone once answered, and it shows in the asker's usage like any turn.
        await pollUntil('the task ended', () => (storedTurnHead(rig, `bg.${id}`) === undefined ? true : undefined), 5_000);
        expect(await rig.commandAnswer(alice, room, '/hermes usage')).toMatch(/^\*Your usage\*\n• Today: 2 turns/);

        // Going on from it: a mention in the task's thread has the thread, the answer among it, as its context.
        hermes.setReply(() => 'Shorter.');
        await rig.post(alice, room, `${mention()} shorten it`, { tmid: started.id });
        await rig.waitForMessage((m) => m.tmid === started.id && m.text.endsWith('Shorter.'), 10_000, 'the thread answer');
        const threadRun = runs()[runs().length - 1];
        expect(threadRun.input).toContain(`(you): @${alice.username} ${SLOW_ANSWER}`);
        expect(threadRun.input).toMatch(/\[New message\]\n.*shorten it$/);
    }, 40_000);

    it('asked in a thread: "started" and the answer both in that thread (threads do not nest)', async () => {
        const alice = person('alice');
        const room = rig.room(`bgt${n}`, [alice, rig.bot]);
        const root = await rig.post(alice, room, 'the launch plan', { silent: true });
        hermes.setReply(() => 'Here is the checklist.');
        const { started } = await startTask(alice, room, 'draft a checklist', root.id);
        expect(started.tmid).toBe(root.id);
        const answer = await rig.waitForMessage((m) => m.tmid === root.id && m.senderId === rig.bot.id && m.id !== started.id, 10_000, 'the answer');
        expect(answer.text).toBe(`@${alice.username} Here is the checklist.`);
    });

    it("keeps a prompt's quotes (the server splits quoted spans into arguments) and refuses an empty prompt with the usage", async () => {
        const alice = person('alice');
        const room = rig.room(`bgq${n}`, [alice, rig.bot]);
        hermes.setReply(() => 'done');
        await startTask(alice, room, 'summarize "Q3 plan" briefly');
        await rig.settle();
        expect(runs()[0].input).toBe('summarize "Q3 plan" briefly');
        expect(await rig.commandAnswer(alice, room, '/hermes background')).toMatch(/^Usage: `\/hermes background <prompt>`/);
        expect(runs()).toHaveLength(1);
    });
});

describe('typed as text', () => {
    it('`@bot /background …` in a room and `!background …` in a DM start a task as the slash command does, with no reply besides', async () => {
        const alice = person('alice');
        const room = rig.room(`bgx${n}`, [alice, rig.bot]);
        hermes.setReply((msg) => `done: ${msg.split('\n').pop()}`);
        await rig.post(alice, room, `${mention()} /background check the logs`);
        const started = await rig.waitForMessage((m) => m.rid === room.id && m.text.includes('Background task'), 10_000, 'the started message');
        const answer = await rig.waitForMessage((m) => m.tmid === started.id && m.senderId === rig.bot.id, 10_000, 'the answer');
        expect(answer.text).toBe(`@${alice.username} done: check the logs`);
        const dm = rig.direct([alice, rig.bot]);
        await rig.post(alice, dm, '!background check the disks');
        const dmAnswer = await rig.waitForMessage((m) => m.rid === dm.id && m.text.endsWith('done: check the disks'), 10_000, 'the DM answer');
        await rig.settle();
        expect(dmAnswer.text).toContain(`@${alice.username} done: check the disks`);
        expect(rig.botMessages(room).map(kindOfStored)).toEqual(['command', 'answer']);
        expect(rig.botMessages(dm).map(kindOfStored)).toEqual(['command', 'answer']);
    });
});

describe('in a DM', () => {
    it('answers in the DM, quoting the "started" message and mentioning the asker', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        hermes.setReply(() => 'Report ready.');
        const { started, id } = await startTask(alice, dm, 'compile the report');
        expect(started.text).toContain(`Background task \`${id}\` started.`);
        const answer = await rig.waitForMessage((m) => m.rid === dm.id && m.senderId === rig.bot.id && m.text.endsWith('Report ready.'), 10_000, 'the answer');
        expect(answer.tmid).toBeUndefined();
        expect(answer.text).toMatch(new RegExp(`^\\[ \\]\\(.*/direct/${dm.id}\\?msg=${started.id}\\) @${alice.username} Report ready\\.$`));
    });
});

describe('/hermes stop <id>', () => {
    it('stops the task for its asker; another member, and anyone naming it from elsewhere, are told no such task of theirs runs', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`bgs${n}`, [alice, bob, rig.bot]);
        const { started, id } = await startTask(alice, room, 'SLOW long analysis');
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
        const refused = 'No background task of yours with that id is running.';
        // Forged: bob, a member of the room, names alice's task; then from his own DM with the bot.
        expect(await rig.commandAnswer(bob, room, `/hermes stop ${id}`)).toBe(refused);
        expect(await rig.commandAnswer(bob, rig.direct([bob, rig.bot]), `/hermes stop ${id}`)).toBe(refused);
        // Not an id at all, and one of nobody's.
        expect(await rig.commandAnswer(alice, room, '/hermes stop ../../x')).toBe(refused);
        expect(await rig.commandAnswer(alice, room, '/hermes stop 0badc0de')).toBe(refused);
        expect(hermes.requests.filter((r) => r.path.endsWith('/stop'))).toHaveLength(0);
        const stopRecords = () =>
            [...rig.server.bridges.persistence.records.values()].filter(
                (r) => (r.data as { id?: string; by?: string }).id === `bg.${id}` && 'by' in (r.data as object),
            );
        expect(stopRecords()).toHaveLength(0);

        expect(await rig.commandAnswer(alice, room, `/hermes stop ${id.toUpperCase()}`)).toBe(':stop_button: Stopping…');
        const stopped = await rig.waitForMessage((m) => m.tmid === started.id && m.senderId === rig.bot.id, 10_000, 'the stop notice');
        expect(stopped.text).toContain(`Stopped by @${alice.username}`);
        await rig.settle();
        expect(rig.botMessages(room).some((m) => m.text.includes(SLOW_ANSWER))).toBe(false);
        expect(hermes.requests.filter((r) => r.path.endsWith('/stop'))).toHaveLength(1);
    }, 30_000);

    it('an admin may stop anyone’s task', async () => {
        const alice = person('alice');
        const admin = person('admin');
        const room = rig.room(`bga${n}`, [alice, admin, rig.bot]);
        await rig.setting('admin_user_ids', admin.id);
        try {
            const { id } = await startTask(alice, room, 'SLOW audit');
            await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
            expect(await rig.commandAnswer(admin, room, `/hermes stop ${id}`)).toBe(':stop_button: Stopping…');
            await rig.settle();
            expect(hermes.requests.filter((r) => r.path.endsWith('/stop'))).toHaveLength(1);
        } finally {
            await rig.setting('admin_user_ids', '');
        }
    }, 30_000);
});

describe('like any turn', () => {
    it('over the daily budget: refused privately, nothing posted, nothing sent', async () => {
        const alice = person('alice');
        const room = rig.room(`bgb${n}`, [alice, rig.bot]);
        await rig.setting('budget_user_turns_per_day', 1);
        try {
            await rig.ask(alice, room, `${mention()} first`);
            await rig.command(alice, room, '/hermes background one more thing');
            await rig.settle();
            expect(rig.ephemerals(alice, room)).toEqual(['You have used your 1 turns for today. The budget resets at midnight (UTC).']);
            expect(rig.botMessagesOfKind(room, 'command')).toHaveLength(0);
            expect(runs()).toHaveLength(1);
        } finally {
            await rig.setting('budget_user_turns_per_day', 0);
        }
    });

    it('where the bot is muted: its "started" message is refused, so no task; the asker is told privately', async () => {
        const alice = person('alice');
        const room = rig.room(`bgm${n}`, [alice, rig.bot]);
        room.muted = [rig.bot.username];
        await rig.command(alice, room, '/hermes background one more thing');
        await rig.settle();
        expect(rig.ephemerals(alice, room)).toEqual(['The background task was not started: the bot could not post its message here.']);
        expect(rig.botMessages(room)).toHaveLength(0);
        expect(runs()).toHaveLength(0);
        expect(rig.logText({ appLinesOnly: true })).toMatch(/Background task [0-9a-f]{8} in room \S+ not started, its message refused: You_have_been_muted/);
    });

    it('takes a slot of max_parallel_turns: with one, a mention elsewhere waits for the task', async () => {
        const alice = person('alice');
        const room = rig.room(`bgp${n}`, [alice, rig.bot]);
        const other = rig.room(`bgp${n}b`, [alice, rig.bot]);
        await rig.setting('max_parallel_turns', 1);
        try {
            hermes.configure({ slowIntervalMs: 50 });
            const { started } = await startTask(alice, room, 'SLOW background work');
            await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
            const question = await rig.post(alice, other, `${mention()} quick one`);
            const reply = await rig.waitForBotReply(other, { after: question, timeoutMs: 15_000 });
            const answer = rig.botMessages(room).find((m) => m.tmid === started.id);
            expect(answer?.text).toBe(`@${alice.username} ${SLOW_ANSWER}`);
            expect(reply.createdAt.getTime()).toBeGreaterThanOrEqual((answer as StoredMessage).createdAt.getTime());
            expect(hermes.maxOpenRuns).toBe(1);
        } finally {
            await rig.setting('max_parallel_turns', 8);
        }
    }, 30_000);
});

// Last in the file: a killed process's calls time out.
describe('a restart', () => {
    it('the app process killed while the task runs: its answer comes once, under its "started" message', async () => {
        const alice = person('alice');
        const room = rig.room(`bgk${n}`, [alice, rig.bot]);
        hermes.configure({ slowIntervalMs: 100 });
        const { started, id } = await startTask(alice, room, 'SLOW survive this');
        // Killed once its run is saved: the new process follows that run (no second one).
        await pollUntil('the stored run', () => storedTurnHead(rig, `bg.${id}`)?.runId as string | undefined, 5_000);
        await rig.server.killAppProcess(rig.appId);
        // The bound after a restart (restarts.test.ts): 30 s from the process being back.
        const answer = await rig.waitForMessage((m) => m.tmid === started.id && m.senderId === rig.bot.id, 30_000, 'the background answer');
        expect(answer.text).toBe(`@${alice.username} ${SLOW_ANSWER}`);
        await pollUntil('the task ended', () => (storedTurnHead(rig, `bg.${id}`) === undefined ? true : undefined), 15_000);
        await rig.settle();
        expect(rig.botMessages(room).filter((m) => m.tmid === started.id)).toHaveLength(1);
        expect(rig.botMessagesOfKind(room, 'command')).toHaveLength(1);
        expect(runs()).toHaveLength(1);
    }, 60_000);
});
