import { submit } from '../../../src/turns/submit';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, ScriptedRuns, VirtualScheduler } from '../../support/turnPorts';

/**
 * A turn whose sender is gone (its sending claim lapsed) may have been answered all the same
 * (answeredBefore.ts): before it is sent again, the bot's messages posted around its
 * sender's start (from it to 5 s after) are read. In a channel only the answer quoting this question counts (or one
 * quoting nothing); in a DM or a thread, any answer; a notice counts by its mark. Found, the
 * turn ends as delivered and nothing is sent or posted twice.
 */

let n = 0;
/** Per-process state is kept by turn id: every test uses fresh ids. */
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;

/** Lets work the app started in the background (the submission) settle. */
const settle = async () => {
    for (let i = 0; i < 10; i++) {
        await new Promise((r) => setImmediate(r));
    }
};

/** When the gone sender started sending: 7 s before the tick (answers "5 s ago" came 2 s after it); the turn was asked 30 s before it. */
const SENT_AGO = 7_000;

/** `reached`: Hermes's session holds the turn's question (it was sent before its sender died). */
async function setup(over: Partial<TurnRecord> = {}, reached = true) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched });
    const now = sched.time;
    const rec = queuedTurn(uid('A'), {
        createdAt: now - 30_000,
        attempts: 1,
        transport: 'runs',
        sessionId: 'sess_A',
        owner: { as: 'sending', process: 'a-gone-process', until: now - 1, at: now - SENT_AGO },
        ...over,
    });
    await env.store.save(rec);
    const transport = env.transport as ScriptedRuns;
    transport.transcripts.set('sess_A', [
        { role: 'user', content: 'the question before' },
        { role: 'assistant', content: 'its answer' },
        ...(reached ? [{ role: 'user', content: rec.user }] : []),
    ]);
    const target = { roomId: rec.roomId, threadId: rec.threadId };
    return {
        ...env,
        sched,
        rec,
        /** Posts as the bot did, `ago` ms before the tick. */
        posted: async (ago: number, text: string, kind: 'answer' | 'notice' | 'status' = 'answer', turnId = rec.id) => {
            sched.time = now - ago;
            const id = await env.chat.post(target, text, kind, { turnId });
            sched.time = now;
            return id;
        },
        runsCreated: () => transport.count('POST', /^\/v1\/runs$/),
    };
}

type Env = Awaited<ReturnType<typeof setup>>;

/** The turn ended as answered before: no run, nothing posted again, its record gone, and the log says so. */
async function expectAnsweredBefore(env: Env, parts: string[], where = 'room R1') {
    const messages = env.chat.visible().length;
    expect(await submit(env.rec, env.ports)).toBe(true);
    await settle();
    expect(env.runsCreated()).toBe(0);
    expect(env.chat.visible()).toHaveLength(messages);
    expect(env.rec.delivery?.parts).toEqual(parts);
    expect(await env.store.get(env.rec.id)).toBeUndefined();
    expect(env.logs).toEqual([`Turn message ${env.rec.id} in ${where} was answered before its app process stopped after 30000 ms.`]);
}

/** Nothing found: the turn is sent again. */
async function expectSentAgain(env: Env) {
    expect(await submit(env.rec, env.ports)).toBe(false);
    await settle();
    expect(env.runsCreated()).toBe(1);
    expect(env.rec.delivery).toBeUndefined();
    expect(await env.store.get(env.rec.id)).toMatchObject({ phase: 'queued', attempts: 2 });
}

describe('a channel turn whose sender is gone', () => {
    it('ends as answered when the answer quoting its question was posted', async () => {
        const env = await setup();
        const text = `[ ](https://chat.example/channel/general?msg=${env.rec.id}) the answer`;
        const id = await env.posted(5_000, text);
        await expectAnsweredBefore(env, [text]);
        expect(env.rec.delivery).toMatchObject({ kind: 'answer', posted: [id], summary: 'was answered before its app process stopped' });
        expect(env.rec.owner?.as).not.toBe('sending');
    });

    it('ends as answered on an answer quoting nothing (a server without Site_Url)', async () => {
        const env = await setup();
        await env.posted(5_000, 'the answer');
        await expectAnsweredBefore(env, ['the answer']);
    });

    it('is sent again when the only answer since quotes another question', async () => {
        const env = await setup();
        await env.posted(5_000, '[ ](https://chat.example/channel/general?msg=OTHER) another answer');
        await expectSentAgain(env);
    });
});

describe('a DM or thread turn whose sender is gone (its turns go one at a time)', () => {
    const quotingOther = '[ ](https://chat.example/direct/x?msg=OTHER) the answer';

    it('ends as answered on any answer in the DM', async () => {
        const env = await setup({ kind: 'dm', roomType: 'd' });
        await env.posted(5_000, quotingOther);
        await expectAnsweredBefore(env, [quotingOther]);
    });

    it('ends as answered on any answer in its thread of a channel', async () => {
        const env = await setup({ threadId: 'TH1' });
        await env.posted(5_000, quotingOther);
        await expectAnsweredBefore(env, [quotingOther], 'room R1 thread TH1');
    });

    it('takes the parts of a split answer in the order they were posted', async () => {
        const env = await setup({ kind: 'dm', roomType: 'd' });
        await env.posted(3_000, 'second part');
        await env.posted(4_000, 'first part');
        await env.posted(2_000, 'third part');
        await expectAnsweredBefore(env, ['first part', 'second part', 'third part']);
    });
});

describe('the bot messages that count', () => {
    it('are those posted once the sender started, not before: the answer of the turn ahead, which woke it, came just before', async () => {
        const edge = await setup({ kind: 'dm', roomType: 'd' });
        await edge.posted(SENT_AGO, 'the answer');
        await expectAnsweredBefore(edge, ['the answer']);

        const older = await setup({ kind: 'dm', roomType: 'd' });
        await older.posted(SENT_AGO + 1, 'the answer of the turn ahead');
        await expectSentAgain(older);
    });

    it('are those posted up to 5 s after the sender started, not later: a later one is the answer of the turn ahead', async () => {
        const edge = await setup({ kind: 'dm', roomType: 'd' });
        await edge.posted(SENT_AGO - 5_000, 'the answer');
        await expectAnsweredBefore(edge, ['the answer']);

        // The sender's claim was stored while the turn ahead ran, and never taken back: that turn's answer came after it.
        const later = await setup({ kind: 'dm', roomType: 'd' });
        await later.posted(SENT_AGO - 5_001, 'the answer of the turn ahead');
        await expectSentAgain(later);
    });

    it("in a DM, count only when Hermes's session holds the question: a claim that had to wait never sent it", async () => {
        // Its sender's claim was stored while the turn ahead ran, and not taken back: that turn's answer came 2 s after it.
        const waited = await setup({ kind: 'dm', roomType: 'd' }, false);
        await waited.posted(5_000, 'the answer of the turn ahead');
        await expectSentAgain(waited);
        expect((waited.transport as ScriptedRuns).count('GET', /^\/api\/sessions\/sess_A\/messages$/)).toBe(1);
    });

    it("in a DM, when Hermes's session cannot be read, the answer counts as before", async () => {
        const env = await setup({ kind: 'dm', roomType: 'd' }, false);
        const transport = env.transport as ScriptedRuns;
        const send = transport.send.bind(transport);
        transport.send = async (request) =>
            new URL(request.url).pathname.startsWith('/api/sessions/') ? { status: 500, headers: {}, body: 'boom' } : send(request);
        await env.posted(5_000, 'the answer');
        await expectAnsweredBefore(env, ['the answer']);
    });

    it('in a DM, a head without its session id asks Hermes about the session its record names', async () => {
        const env = await setup({ kind: 'dm', roomType: 'd', sessionId: undefined }, false);
        await env.ports.sessions.save({ key: env.rec.sessionKey, generation: 0, sessionId: 'sess_A', turns: 1 });
        await env.posted(5_000, 'the answer of the turn ahead');
        await expectSentAgain(env);
        expect((env.transport as ScriptedRuns).count('GET', /^\/api\/sessions\/sess_A\/messages$/)).toBe(1);
    });

    it('in a channel, the answer quoting this question counts without asking Hermes', async () => {
        const env = await setup({}, false);
        await env.posted(5_000, `[ ](https://chat.example/channel/general?msg=${env.rec.id}) the answer`);
        await expectAnsweredBefore(env, [`[ ](https://chat.example/channel/general?msg=${env.rec.id}) the answer`]);
        expect((env.transport as ScriptedRuns).count('GET', /^\/api\/sessions\//)).toBe(0);
    });

    it("include this turn's notice: the turn ends as failed, posting nothing again", async () => {
        const env = await setup({ kind: 'dm', roomType: 'd' });
        const id = await env.posted(5_000, 'Hermes is not reachable.', 'notice');
        const messages = env.chat.visible().length;
        expect(await submit(env.rec, env.ports)).toBe(true);
        await settle();
        expect(env.runsCreated()).toBe(0);
        expect(env.chat.visible()).toHaveLength(messages);
        expect(env.rec.delivery).toMatchObject({ kind: 'notice', parts: ['Hermes is not reachable.'], posted: [id] });
        expect(await env.store.get(env.rec.id)).toBeUndefined();
        expect(env.logs).toEqual([`Hermes turn failed for message ${env.rec.id} in room R1 after 30000 ms: notice posted before a restart`]);
    });

    it("leave out another turn's notice and this turn's status message", async () => {
        const env = await setup({ kind: 'dm', roomType: 'd' });
        await env.posted(5_000, 'Hermes is not reachable.', 'notice', 'ANOTHER_TURN');
        await env.posted(4_000, 'Working on it…', 'status');
        await expectSentAgain(env);
    });
});
