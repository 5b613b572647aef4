import { RunStatus } from '../../../src/hermes/runs';
import { LiveTurn } from '../../../src/hermes/liveTurn';
import { observe } from '../../../src/turns/observe';
import { showProgress } from '../../../src/turns/progress';
import { PROCESS_ID } from '../../../src/turns/processId';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, VirtualScheduler } from '../../support/turnPorts';

/**
 * One look at a running turn (found by mutation testing, `npm run mutate`): when a run is
 * polled, how its end is read from the poll or the stream, the grace the stream gets, stops,
 * the deadline, and chat turns whose connection lives in one process; and what a private
 * turn's look shows (progress.ts).
 */

let n = 0;
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;

function liveTurn(over: Partial<LiveTurn> = {}): LiveTurn {
    return { kind: 'run-events', tools: [], toolsDropped: 0, text: '', truncated: false, done: false, abort: new AbortController(), ...over };
}

async function setup(over: Partial<TurnRecord> = {}) {
    const sched = new VirtualScheduler();
    const streams = new Map<string, LiveTurn>();
    const ended: string[] = [];
    const polls: string[] = [];
    const stops: string[] = [];
    let status: RunStatus = { status: 'running' };
    let stopFails: Error | undefined;
    const hermes = {
        runStatus: async (runId: string) => {
            polls.push(runId);
            return status;
        },
        stopRun: async (runId: string) => {
            stops.push(runId);
            if (stopFails) {
                throw stopFails;
            }
        },
    };
    const live = { get: (id: string) => streams.get(id), end: (id: string) => void ended.push(id) };
    const env = memoryTickPorts({ sched, hermes: hermes as never, live: live as never });
    const rec = queuedTurn(uid('O'), {
        phase: 'running',
        transport: 'runs',
        runId: 'run_1',
        startedAt: sched.time,
        deadlineAt: sched.time + 30 * 60_000,
        owner: { as: 'streaming', process: PROCESS_ID, until: sched.time + 30_000, at: sched.time },
        ...over,
    });
    await env.store.save(rec);
    return {
        ...env,
        sched,
        rec,
        polls,
        stops,
        ended,
        stream: (s: Partial<LiveTurn> | undefined) => (s ? streams.set(rec.id, liveTurn(s)) : streams.delete(rec.id)),
        setStatus: (s: RunStatus) => {
            status = s;
        },
        failStop: (e: Error) => {
            stopFails = e;
        },
        look: () => observe(rec, env.ports),
    };
}

describe('polling a run', () => {
    it('polls every look without a stream here', async () => {
        const env = await setup();
        await env.look();
        await env.look();
        expect(env.polls).toEqual(['run_1', 'run_1']);
    });

    it('with a stream here, polls now and then: again after exactly 5 s', async () => {
        const env = await setup();
        env.stream({});
        await env.look();
        expect(env.polls).toHaveLength(1);
        env.sched.time += 4_999;
        expect(await env.look()).toEqual({ outcome: undefined, live: expect.objectContaining({ kind: 'run-events' }), status: undefined });
        expect(env.polls).toHaveLength(1);
        env.sched.time += 1;
        await env.look();
        expect(env.polls).toHaveLength(2);
    });

    it('reports no status for a look that did not poll', async () => {
        const env = await setup();
        env.stream({});
        await env.look();
        env.sched.time += 1_000;
        expect(await env.look()).toEqual({ outcome: undefined, live: expect.objectContaining({ kind: 'run-events' }), status: undefined });
        expect(env.polls).toHaveLength(1);
    });

    it('polls at every look while the stream waits for an approval, and not once it was answered', async () => {
        const request = { command: 'ls', description: '', choices: ['once', 'deny'], allowPermanent: false };
        const env = await setup();
        env.stream({ approval: request });
        await env.look();
        await env.look();
        expect(env.polls).toHaveLength(2);
        env.stream({ approval: request, approvalResolution: 'once' });
        await env.look();
        expect(env.polls).toHaveLength(2);
    });

    it('polls once the stream ended without an end event; never when the stream settled the run', async () => {
        const env = await setup();
        env.stream({});
        await env.look();
        env.stream({ done: true });
        await env.look();
        expect(env.polls).toHaveLength(2);
        env.stream({ done: true, terminal: 'completed', output: 'from the stream' });
        expect((await env.look()).outcome).toEqual({ kind: 'answer', text: 'from the stream', incomplete: undefined });
        expect(env.polls).toHaveLength(2);
    });
});

describe('the end of a run', () => {
    it.each([
        ['completed', { kind: 'answer', text: 'done', incomplete: undefined }],
        ['failed', { kind: 'failed', failure: 'notice_incomplete', detail: 'run failed: no reason given' }],
        ['cancelled', { kind: 'failed', failure: 'notice_incomplete', detail: 'run cancelled by Hermes' }],
        ['interrupted', { kind: 'failed', failure: 'notice_incomplete', detail: 'run interrupted: no reason given' }],
    ] as const)('seen %s by the poll first, gives the stream 2 s to catch up', async (state, outcome) => {
        // A stream waiting for an approval is polled at every look.
        const env = await setup();
        env.stream({ approval: { command: 'ls', description: '', choices: ['once', 'deny'], allowPermanent: false } });
        env.setStatus({ status: state, output: 'done' });
        const first = await env.look();
        expect(first).toEqual({ live: expect.objectContaining({ kind: 'run-events' }), status: { status: 'running', output: 'done' } });
        env.sched.time += 1_999;
        expect(await env.look()).toMatchObject({ status: { status: 'running' } });
        expect(env.polls).toHaveLength(2);
        env.sched.time += 1;
        // Then the poll's end counts: the stream has no text, so a failed run gives no partial answer.
        expect((await env.look()).outcome).toEqual(outcome);
    });

    it('gives a stream that already ended no grace', async () => {
        const env = await setup();
        env.stream({ done: true });
        env.setStatus({ status: 'completed', output: 'polled' });
        expect((await env.look()).outcome).toEqual({ kind: 'answer', text: 'polled', incomplete: undefined });
    });

    it("takes the answer from the poll, else from the stream's output, else its text", async () => {
        const polled = await setup();
        polled.setStatus({ status: 'completed', output: 'polled' });
        expect((await polled.look()).outcome).toEqual({ kind: 'answer', text: 'polled', incomplete: undefined });
        const output = await setup();
        output.stream({ done: true, terminal: 'completed', output: 'streamed output', text: 'deltas' });
        expect((await output.look()).outcome).toEqual({ kind: 'answer', text: 'streamed output', incomplete: undefined });
        const text = await setup();
        text.stream({ done: true, terminal: 'completed', text: 'deltas' });
        expect((await text.look()).outcome).toEqual({ kind: 'answer', text: 'deltas', incomplete: undefined });
    });

    it('takes a run that completed with no text at all as an empty answer', async () => {
        const env = await setup();
        env.setStatus({ status: 'completed' });
        expect((await env.look()).outcome).toEqual({ kind: 'answer', text: '', incomplete: undefined });
    });

    it('marks the answer incomplete when the poll or the stream cut it', async () => {
        const polled = await setup();
        polled.setStatus({ status: 'completed', output: 'x', truncated: true });
        expect((await polled.look()).outcome).toEqual({ kind: 'answer', text: 'x', incomplete: true });
        const streamed = await setup();
        streamed.stream({ done: true, terminal: 'completed', output: 'y', truncated: true });
        expect((await streamed.look()).outcome).toEqual({ kind: 'answer', text: 'y', incomplete: true });
    });

    it('reads a run Hermes cancelled by itself as incomplete', async () => {
        const env = await setup();
        env.setStatus({ status: 'cancelled' });
        expect((await env.look()).outcome).toEqual({ kind: 'failed', failure: 'notice_incomplete', detail: 'run cancelled by Hermes' });
    });

    it('reads a failed or interrupted run with its reason, or the partial answer', async () => {
        const failed = await setup();
        failed.setStatus({ status: 'failed', error: 'model overloaded' });
        expect((await failed.look()).outcome).toEqual({ kind: 'failed', failure: 'notice_incomplete', detail: 'run failed: model overloaded' });
        const interrupted = await setup();
        interrupted.setStatus({ status: 'interrupted' });
        expect((await interrupted.look()).outcome).toEqual({ kind: 'failed', failure: 'notice_incomplete', detail: 'run interrupted: no reason given' });
        const streamed = await setup();
        streamed.stream({ done: true, terminal: 'failed', error: 'tool crashed' });
        expect((await streamed.look()).outcome).toEqual({ kind: 'failed', failure: 'notice_incomplete', detail: 'run failed: tool crashed' });
        const notText = await setup();
        notText.stream({ done: true, terminal: 'failed', error: new Error('x') });
        expect((await notText.look()).outcome).toEqual({ kind: 'failed', failure: 'notice_incomplete', detail: 'run failed: no reason given' });
        const partial = await setup();
        partial.stream({ done: true, terminal: 'failed', text: 'half an answer' });
        expect((await partial.look()).outcome).toEqual({ kind: 'answer', text: 'half an answer', incomplete: true });
        const blank = await setup();
        blank.stream({ done: true, terminal: 'failed', text: '  ' });
        expect((await blank.look()).outcome).toMatchObject({ kind: 'failed' });
    });

    it('has no outcome while the run goes on', async () => {
        const env = await setup();
        expect(await env.look()).toEqual({ outcome: undefined, live: undefined, status: { status: 'running' } });
    });
});

describe('a stopped run', () => {
    it('is stopped by whoever asked, seen stopping, cancelled, or by the stream', async () => {
        for (const [status, stream] of [
            [{ status: 'stopping' }, undefined],
            [{ status: 'cancelled' }, undefined],
            [{ status: 'running' }, { terminal: 'cancelled', done: true }],
        ] as Array<[RunStatus, Partial<LiveTurn> | undefined]>) {
            const env = await setup();
            env.setStatus(status);
            env.stream(stream);
            await env.store.requestStop(env.rec.id, 'bob');
            expect((await env.look()).outcome).toEqual({ kind: 'stopped', by: 'bob' });
        }
    });

    it('is not taken for stopped while it still runs, even with a stop asked for', async () => {
        const env = await setup();
        await env.store.requestStop(env.rec.id, 'bob');
        expect((await env.look()).outcome).toBeUndefined();
    });
});

describe('the turn deadline', () => {
    it('stops the run at the deadline exactly, not before', async () => {
        const env = await setup();
        env.sched.time = (env.rec.deadlineAt as number) - 1;
        expect((await env.look()).outcome).toBeUndefined();
        env.sched.time += 1;
        expect((await env.look()).outcome).toEqual({ kind: 'failed', failure: 'notice_turn-timeout', detail: 'turn deadline of 30 min passed' });
        expect(env.stops).toEqual(['run_1']);
        expect(env.ended).toEqual([env.rec.id]);
    });

    it('logs a stop that failed and gives up anyway', async () => {
        const env = await setup({ deadlineAt: 1 });
        env.failStop(new Error('unreachable'));
        expect((await env.look()).outcome).toMatchObject({ failure: 'notice_turn-timeout' });
        expect(env.logs).toEqual(['Stopping run run_1 at the deadline failed: unreachable']);
    });

    it('ends a chat turn without a run to stop', async () => {
        const env = await setup({ transport: 'chat', runId: undefined, startedAt: 0, deadlineAt: 5 * 60_000 });
        expect((await env.look()).outcome).toEqual({ kind: 'failed', failure: 'notice_turn-timeout', detail: 'turn deadline of 5 min passed' });
        expect(env.stops).toEqual([]);
    });
});

describe('a chat turn', () => {
    it('held by another live process: nothing to see here', async () => {
        const env = await setup({ transport: 'chat' });
        // Its liveness is the holder's own renewal of its claim (`at`), not any instance's tick (tickAt).
        env.rec.tickAt = env.sched.time;
        env.rec.owner = { as: 'streaming', process: 'other-process', until: env.sched.time + 1, at: env.sched.time - 29_999 };
        expect(await env.look()).toEqual({});
        env.rec.owner = { as: 'streaming', process: 'other-process', until: env.sched.time + 1 };
        env.rec.startedAt = env.sched.time - 1_000;
        expect(await env.look()).toEqual({});
    });

    it('whose process went silent for 30 s, or that this process lost: the asker is told, it is not run again', async () => {
        const lost = { kind: 'failed', failure: 'notice_lost', detail: 'the chat connection was lost with the app process' };
        const silent = await setup({ transport: 'chat' });
        // Another instance's ticks keep writing the record; the holder's heartbeat stopped 30 s ago.
        silent.rec.tickAt = silent.sched.time;
        silent.rec.owner = { as: 'streaming', process: 'other-process', until: silent.sched.time, at: silent.sched.time - 30_000 };
        expect((await silent.look()).outcome).toEqual(lost);
        expect(silent.logs).toEqual([
            `Turn message ${silent.rec.id} in room R1 lost its connection to Hermes (the app process restarted); the asker is told, the turn is not run again.`,
        ]);
        const here = await setup({ transport: 'chat', tickAt: Number.MAX_SAFE_INTEGER });
        expect((await here.look()).outcome).toEqual(lost);
    });

    it('lost, but stopped by someone: stopped', async () => {
        const env = await setup({ transport: 'chat' });
        await env.store.requestStop(env.rec.id, 'carol');
        expect((await env.look()).outcome).toEqual({ kind: 'stopped', by: 'carol' });
    });

    it('still streaming: its stream, no outcome', async () => {
        const env = await setup({ transport: 'chat' });
        env.rec.owner = { as: 'streaming', process: 'other-process', until: env.sched.time + 30_000, at: env.sched.time };
        env.stream({ kind: 'chat' });
        expect(await env.look()).toEqual({ live: expect.objectContaining({ kind: 'chat', done: false }) });
    });

    it('done: stopped if someone asked, else its error, else its answer', async () => {
        const stopped = await setup({ transport: 'chat' });
        stopped.stream({ kind: 'chat', done: true, answer: { text: 'x', finishReason: 'stop' } as never });
        await stopped.store.requestStop(stopped.rec.id, 'dave');
        expect(await stopped.look()).toEqual({ outcome: { kind: 'stopped', by: 'dave' }, live: expect.objectContaining({ kind: 'chat' }) });

        const failed = await setup({ transport: 'chat' });
        failed.stream({ kind: 'chat', done: true, error: new Error('stream broke') });
        await expect(failed.look()).rejects.toThrow('stream broke');

        const answered = await setup({ transport: 'chat' });
        answered.stream({ kind: 'chat', done: true, answer: { text: 'the answer', sessionId: 'S2', finishReason: 'stop' } as never });
        expect(await answered.look()).toEqual({
            outcome: { kind: 'answer', text: 'the answer', sessionId: 'S2', incomplete: false },
            live: expect.objectContaining({ kind: 'chat' }),
        });

        const empty = await setup({ transport: 'chat' });
        empty.stream({ kind: 'chat', done: true });
        expect((await empty.look()).outcome).toEqual({ kind: 'answer', text: '', sessionId: undefined, incomplete: false });
    });

    it.each([
        [{ finishReason: 'length' }, false],
        [{ finishReason: 'error' }, false],
        [{ finishReason: 'stop', truncated: true }, false],
        [{ finishReason: 'stop' }, true],
    ])('done with %j (stream cut: %s) is incomplete', async (answer, streamCut) => {
        const env = await setup({ transport: 'chat' });
        env.stream({ kind: 'chat', done: true, truncated: streamCut, answer: { text: 'part', ...answer } as never });
        expect((await env.look()).outcome).toMatchObject({ kind: 'answer', incomplete: true });
    });

    it('done normally is complete', async () => {
        const env = await setup({ transport: 'chat' });
        env.stream({ kind: 'chat', done: true, answer: { text: 'all', finishReason: 'stop', truncated: false } as never });
        expect((await env.look()).outcome).toMatchObject({ incomplete: false });
    });
});

describe('a turn looked at again after its outcome (its end is retried)', () => {
    it('is polled at once even with a stream here: the last poll was forgotten with the outcome', async () => {
        const env = await setup();
        env.setStatus({ status: 'completed', output: 'done' });
        expect((await env.look()).outcome).toMatchObject({ kind: 'answer', text: 'done' });
        env.stream({});
        env.setStatus({ status: 'running' });
        await env.look();
        expect(env.polls).toEqual(['run_1', 'run_1']);
    });

    it('gives a stream that is behind the poll its 2 s of grace again', async () => {
        const env = await setup();
        env.stream({ approval: { command: 'ls', description: '', choices: ['once', 'deny'], allowPermanent: false } });
        env.setStatus({ status: 'completed', output: 'done' });
        await env.look();
        env.sched.time += 2_000;
        expect((await env.look()).outcome).toMatchObject({ kind: 'answer', text: 'done' });
        env.sched.time += 10_000;
        const again = await env.look();
        expect(again.outcome).toBeUndefined();
        expect(again.status?.status).toBe('running');
    });
});

describe('the tokens of a completed run', () => {
    it('are taken from the poll', async () => {
        const env = await setup();
        env.setStatus({ status: 'completed', output: 'done', usage: { in: 120, out: 30 } });
        expect((await env.look()).outcome).toEqual({ kind: 'answer', text: 'done', incomplete: undefined, usage: { in: 120, out: 30 } });
    });

    it("are taken from the stream's end event when the run was not polled", async () => {
        const env = await setup();
        env.stream({ done: true, terminal: 'completed', output: 'streamed', usage: { in: 7, out: 3 } });
        expect((await env.look()).outcome).toEqual({ kind: 'answer', text: 'streamed', incomplete: undefined, usage: { in: 7, out: 3 } });
    });
});

describe("a private turn's progress (progress.ts)", () => {
    /** A private turn that has run for ten minutes (long past the status message's delay). */
    async function privateTurn() {
        const env = await setup({ privateTo: 'U1', startedAt: 0, progress: ['🔧 earlier: kept'] });
        return { ...env, show: (live?: Partial<LiveTurn>) => showProgress(env.rec, { live: live ? liveTurn(live) : undefined }, env.ports) };
    }

    it('keeps the tool lines the stream saw, and posts nothing in the room', async () => {
        const env = await privateTurn();
        const tools = [
            { tool: 'search', emoji: '🔎', label: 'hermes docs' },
            { tool: 'fetch', emoji: '🌐', label: 'example.org' },
        ];
        expect(await env.show({ tools })).toBe(false);
        expect(env.rec.progress).toEqual(['🔎 search: hermes docs', '🌐 fetch: example.org']);
        expect(env.rec.statusMessageId).toBeUndefined();
        expect(env.chat.visible()).toEqual([]);
    });

    it('keeps the newest 50 lines', async () => {
        const env = await privateTurn();
        const tools = Array.from({ length: 52 }, (_, i) => ({ tool: `t${i + 1}`, emoji: '🔧' }));
        await env.show({ tools });
        expect(env.rec.progress).toHaveLength(50);
        expect(env.rec.progress.slice(0, 2)).toEqual(['🔧 t3', '🔧 t4']);
        expect(env.rec.progress[49]).toBe('🔧 t52');
    });

    it('keeps the lines it had when no stream is here', async () => {
        const env = await privateTurn();
        expect(await env.show()).toBe(false);
        expect(env.rec.progress).toEqual(['🔧 earlier: kept']);
        expect(env.chat.visible()).toEqual([]);
    });
});
