import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { kindOfStored } from '../../rig/marks';
import { FakeHermes, pollUntil, useRigAndHermes } from '../support/e2e';

/**
 * Issue 33 §1, end to end in the real engine: an answer shown as Hermes writes it. Its message
 * is posted with the first words (after status_delay_seconds) and edited as the answer grows,
 * at most once per stream_edit_seconds, through the rig's copy of the server's update path
 * (apps/meteor/app/apps/server/bridges/messages.ts → lib/server/functions/updateMessage.ts:
 * no size check, no edit window, no rate limit, IPostMessageUpdated fired for the app's own
 * edits too). The final edit is the answer as it is posted without streaming, byte for byte.
 */
const env = useRigAndHermes({ status_delay_seconds: 1, stream_edit_seconds: '1', hermes_timeout_seconds: 10 });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

/** The cursor the app ends a growing answer with (written out here, not imported: the test says what users see). */
const CURSOR = ' ▉';
const EDIT_MS = 1000;

/**
 * Message_MaxAllowedSize for the whole file, set before the first answer: the app reads it with
 * its first answer and keeps it five minutes. Every answer here fits but the long one.
 */
const MAX_SIZE = 400;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
    rig.server.store.serverSettings.set('Message_MaxAllowedSize', MAX_SIZE);
});

beforeEach(() => {
    hermes.reset();
    hermes.configure({ slowIntervalMs: 100, slowWords: 40, toolPreamble: '' });
});

afterEach(async () => {
    await rig.settle();
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
/** The scripted model's SLOW answer: "SLOW:" and then a " tick" per further word. */
const slowAnswer = (words: number) => `SLOW:${' tick'.repeat(words - 1)}`;

/** Every text each message of the bot showed, in order, with when the rig saved it (posts and edits). */
function watch(): {
    texts: (id: string) => string[];
    times: (id: string) => number[];
    log: () => Array<{ id: string; text: string; kind: 'post' | 'edit' }>;
    stop: () => void;
} {
    const seen: Array<{ id: string; text: string; at: number; kind: 'post' | 'edit' }> = [];
    const onPost = (m: StoredMessage) => m.senderId === rig.bot.id && seen.push({ id: m.id, text: m.text, at: Date.now(), kind: 'post' });
    const onEdit = (m: StoredMessage) => m.senderId === rig.bot.id && seen.push({ id: m.id, text: m.text, at: Date.now(), kind: 'edit' });
    rig.server.events.on('message', onPost);
    rig.server.events.on('update', onEdit);
    return {
        texts: (id) => seen.filter((s) => s.id === id).map((s) => s.text),
        times: (id) => seen.filter((s) => s.id === id).map((s) => s.at),
        log: () => seen,
        stop: () => {
            rig.server.events.off('message', onPost);
            rig.server.events.off('update', onEdit);
        },
    };
}

/** Waits until the bot's messages in the room, read together, end with the whole answer (no cursor), and the app settled. */
async function answered(room: StoredRoom, whole: string, timeoutMs = 20_000): Promise<StoredMessage[]> {
    const done = () =>
        rig
            .botMessages(room)
            .filter((m) => kindOfStored(m) === 'answer')
            .map((m) => m.text)
            .join(' ')
            .endsWith(whole);
    await rig.waitForMessage((m) => m.rid === room.id && done(), timeoutMs, `the answer "${whole}"`);
    await rig.settle();
    return rig.botMessages(room);
}

async function withStreaming<T>(on: boolean, run: () => Promise<T>): Promise<T> {
    await rig.setting('stream_answers', on);
    try {
        return await run();
    } finally {
        await rig.setting('stream_answers', true);
    }
}

describe('a streamed answer', () => {
    it('grows in one message, one edit per stream_edit_seconds at most, and ends as the answer posted whole would', async () => {
        const alice = person('alice');
        const room = rig.room(`stream${n}`, [alice, rig.bot]);
        const shown = watch();
        const question = await rig.post(alice, room, `@${bot()} SLOW tell me`);
        const messages = await answered(room, slowAnswer(40));
        shown.stop();
        // One message: the answer itself, no status message left and no second message.
        expect(messages).toHaveLength(1);
        const answer = messages[0];
        expect(kindOfStored(answer)).toBe('answer');
        expect(answer.text).toBe(`[ ](http://127.0.0.1:3000/channel/${room.name}?msg=${question.id}) @${alice.username} ${slowAnswer(40)}`);
        const texts = shown.texts(answer.id);
        const growing = texts.filter((t) => t.endsWith(CURSOR));
        // Seen growing: at least three different texts before the final one, each the start of the answer.
        expect(new Set(growing).size).toBeGreaterThanOrEqual(3);
        growing.forEach((t) => expect(answer.text.startsWith(t.slice(0, -CURSOR.length))).toBe(true));
        expect(texts[texts.length - 1]).toBe(answer.text);
        // The post and every edit but the final one at least stream_edit_seconds apart.
        const times = shown.times(answer.id).slice(0, -1);
        times.slice(1).forEach((at, i) => expect(at - times[i]).toBeGreaterThanOrEqual(EDIT_MS));
        // Every partial text ends on a whole word: "tick" or "SLOW:", never a piece of one.
        growing.forEach((t) => expect(t.slice(0, -CURSOR.length).endsWith('tick') || t.slice(0, -CURSOR.length).endsWith('SLOW:')).toBe(true));
    }, 30_000);

    it('is byte for byte the answer of the same question with streaming off, in a DM', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const streamed = await (async () => {
            const dm = rig.direct([alice, rig.bot]);
            await rig.post(alice, dm, 'SLOW please');
            return answered(dm, slowAnswer(40));
        })();
        const whole = await withStreaming(false, async () => {
            const dm = rig.direct([bob, rig.bot]);
            const shown = watch();
            await rig.post(bob, dm, 'SLOW please');
            const messages = await answered(dm, slowAnswer(40));
            shown.stop();
            // Off: the status message came and went, and the answer was posted once, never edited.
            expect(shown.texts(messages[0].id)).toEqual([messages[0].text]);
            return messages;
        });
        expect(streamed.map((m) => m.text)).toEqual(whole.map((m) => m.text));
        expect(streamed.map((m) => m.text)).toEqual([slowAnswer(40)]);
    }, 40_000);

    it('stops at an approval request: what was written stays, the answer comes below the approval', async () => {
        const alice = person('alice');
        const room = rig.room(`approve${n}`, [alice, rig.bot]);
        const preamble = 'Let me clean the scratch folder first and then report back on it.';
        hermes.configure({ toolPreamble: preamble, slowIntervalMs: 250 });
        const question = await rig.post(alice, room, `@${bot()} DANGER clean up`);
        const approval = await rig.waitForMessage((m) => m.rid === room.id && kindOfStored(m) === 'approval', 15_000, 'the approval');
        const before = rig.botMessages(room).filter((m) => m.id !== approval.id);
        // The words so far, whole and without the cursor, in the one message above the approval.
        expect(before).toHaveLength(1);
        expect(before[0].text).toBe(`[ ](http://127.0.0.1:3000/channel/${room.name}?msg=${question.id}) @${alice.username} ${preamble}`);
        expect(before[0].createdAt.getTime()).toBeLessThan(approval.createdAt.getTime());
        await rig.clickButton(alice, approval, 'hermes-approval', `${question.id}|once`);
        const reply = await rig.waitForMessage(
            (m) => m.rid === room.id && m.senderId === rig.bot.id && m.text.includes('TOOL_RESULT_SEEN') && !m.text.endsWith(CURSOR),
            15_000,
            'the answer after the approval',
        );
        await rig.settle();
        expect(reply.createdAt.getTime()).toBeGreaterThan(approval.createdAt.getTime());
        // The streamed words before the approval were left as they were.
        expect(rig.server.store.messages.get(before[0].id)?.text).toBe(before[0].text);
        expect(rig.botMessagesOfKind(room, 'status')).toEqual([]);
    }, 40_000);

    it('streams a chat-completions answer too', async () => {
        await rig.setting('hermes_transport', 'chat');
        try {
            const alice = person('alice');
            const dm = rig.direct([alice, rig.bot]);
            const shown = watch();
            await rig.post(alice, dm, 'SLOW over chat');
            const messages = await answered(dm, slowAnswer(40));
            shown.stop();
            expect(messages.map((m) => m.text)).toEqual([slowAnswer(40)]);
            expect(new Set(shown.texts(messages[0].id).filter((t) => t.endsWith(CURSOR))).size).toBeGreaterThanOrEqual(3);
            expect(hermes.turns.map((t) => t.kind)).toEqual(['chat']);
        } finally {
            await rig.setting('hermes_transport', 'auto');
        }
    }, 30_000);

    it('goes on in a new message when it outgrows Message_MaxAllowedSize, split as the whole answer is', async () => {
        const alice = person('alice');
        const bob = person('bob');
        // 600 characters over 12 s: past the limit (at 8 s) well before the end, even on a busy machine.
        const words = 120;
        hermes.configure({ slowWords: words, slowIntervalMs: 100 });
        const dm = rig.direct([alice, rig.bot]);
        const shown = watch();
        await rig.post(alice, dm, 'SLOW a long one');
        const parts = await answered(dm, slowAnswer(words));
        shown.stop();
        expect(parts.length).toBe(2);
        parts.forEach((p) => expect(p.text.length).toBeLessThanOrEqual(MAX_SIZE));
        expect(parts.map((p) => p.text).join(' ')).toBe(slowAnswer(words));
        // The first part was finished (its text final, no cursor) before the second was posted, which then grew.
        const log = shown.log();
        const firstDone = log.findIndex((e) => e.id === parts[0].id && e.text === parts[0].text);
        const secondPosted = log.findIndex((e) => e.id === parts[1].id && e.kind === 'post');
        expect(firstDone).toBeGreaterThanOrEqual(0);
        expect(secondPosted).toBeGreaterThan(firstDone);
        expect(shown.texts(parts[1].id)[0].endsWith(CURSOR)).toBe(true);
        // Never a message of the cursor alone, and no part over the limit while it grew either.
        log.forEach((e) => expect(e.text.length).toBeGreaterThan(CURSOR.length));
        log.forEach((e) => expect(e.text.length).toBeLessThanOrEqual(MAX_SIZE));
        // The same split as without streaming.
        const whole = await withStreaming(false, async () => {
            const other = rig.direct([bob, rig.bot]);
            await rig.post(bob, other, 'SLOW a long one');
            return answered(other, slowAnswer(words));
        });
        expect(parts.map((p) => p.text)).toEqual(whole.map((p) => p.text));
    }, 60_000);

    it('never opens a turn from its own edits', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.post(alice, dm, 'SLOW once');
        await answered(dm, slowAnswer(40));
        expect(hermes.turns).toHaveLength(1);
    }, 30_000);
});

describe('a restart mid-stream', () => {
    /** Kills the app's process once the answer shows `ticks` words, and checks that the answer ends in that same message. */
    async function killAfter(ticks: number, betweenJobs: boolean): Promise<void> {
        const alice: StoredUser = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        hermes.configure({ slowIntervalMs: 200 });
        await rig.post(alice, dm, 'SLOW through a restart');
        const first = await rig.waitForMessage(
            (m) => m.rid === dm.id && m.senderId === rig.bot.id && m.text.endsWith(CURSOR) && m.text.split(' tick').length > ticks,
            20_000,
            'the answer growing',
        );
        // Between two jobs: a process killed inside a job holds that job's lane for the engine's 30 s
        // request timeout (src/engine/turnLanes.ts), which restarts.test.ts covers; this test is about the message.
        if (betweenJobs) {
            await pollUntil('no job running', () => (rig.server.bridges.scheduler.runs.some((r) => r.end === undefined) ? undefined : true), 10_000);
        }
        await rig.server.killAppProcess(rig.appId);
        const back = Date.now();
        const messages = await answered(dm, slowAnswer(40), 60_000);
        // The bound of every restart test (restarts.test.ts): the answer within 30 s of the process being back.
        expect(Date.now() - back).toBeLessThan(30_000);
        expect(messages.map((m) => m.id)).toEqual([first.id]);
        expect(messages[0].text).toBe(slowAnswer(40));
        expect(hermes.turns).toHaveLength(1);
    }

    // Its first words are posted inside the message event that carries the turn (status_delay_seconds 1, within QUICK_MS).
    it('right after its first words (their message id not saved yet): the answer ends in that message', () => killAfter(2, false), 90_000);

    it('after several edits: the answer ends in the same message, no second one', () => killAfter(12, true), 90_000);
});
