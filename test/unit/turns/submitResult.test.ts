import { HermesError } from '../../../src/hermes/errors';
import { PROCESS_ID } from '../../../src/turns/processId';
import { submit } from '../../../src/turns/submit';
import { SentRecord, TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, ScriptedRuns, TEST_CONFIG, settleBackground, VirtualScheduler } from '../../support/turnPorts';

/**
 * The second tick of a turn's submission (submit.ts): what a tick returns, the result written
 * for the other instances when no tick here took it within 250 ms (`handOver`), a result
 * another instance handed over (`takeOver`), and a chat turn sent without the images its
 * sender read.
 */

let n = 0;
/** Per-process state (submissions, pending images) is kept by turn id: every test uses fresh ids. */
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;

const settle = settleBackground;

/** The runs whose events were asked for, in order. */
const eventReads = (transport: ScriptedRuns) =>
    transport.requests.map((r) => /^\/v1\/runs\/([^/]+)\/events$/.exec(new URL(r.url).pathname)?.[1]).filter((id): id is string => Boolean(id));

async function setup(over: Partial<TurnRecord> = {}, ports: Partial<Parameters<typeof memoryTickPorts>[0]> = {}) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched, ...ports });
    const rec = queuedTurn(uid('R'), { createdAt: sched.time, ...over });
    await env.store.save(rec);
    const transport = env.transport as ScriptedRuns;
    // Every hand-over record this process drops, in order.
    const dropped: string[] = [];
    const dropSent = env.store.dropSent.bind(env.store);
    env.store.dropSent = async (id) => {
        dropped.push(id);
        return dropSent(id);
    };
    return {
        ...env,
        sched,
        rec,
        transport,
        dropped,
        runsCreated: () => transport.count('POST', /^\/v1\/runs$/),
        wakes: () => sched.pending.filter((p) => p.job.turnId === rec.id && p.job.wake).map((p) => p.at - sched.time),
    };
}

/** A turn another instance is sending: its claim lasts 15 s more. */
const sentElsewhere = (sched: VirtualScheduler) => ({
    attempts: 1,
    transport: 'runs' as const,
    sessionId: 'rc_s_elsewhere',
    owner: { as: 'sending' as const, process: 'another-instance', until: sched.time + 15_000, at: sched.time - 1_000 },
});

describe('a submission whose result no tick here took within 250 ms', () => {
    beforeEach(() => {
        jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    });
    afterEach(() => {
        jest.useRealTimers();
    });

    it('is written for the other instances with its run, and dropped by the tick here that takes it after all', async () => {
        const env = await setup();
        // The wake-up must follow the write: one that came first could run on an instance with nothing to take.
        const wakesAtWrite: number[] = [];
        const recordSent = env.store.recordSent.bind(env.store);
        env.store.recordSent = async (id, sent) => {
            wakesAtWrite.push(env.wakes().length);
            return recordSent(id, sent);
        };
        await submit(env.rec, env.ports);
        await settle();
        // The submission's own wake-up (run on another instance, say: nothing here took it).
        expect(env.wakes()).toEqual([0]);
        env.sched.pending.length = 0;
        jest.advanceTimersByTime(249);
        await settle();
        expect(env.store.sents.size).toBe(0);
        expect(env.wakes()).toEqual([]);
        jest.advanceTimersByTime(1);
        await settle();
        // Written with the process that reads the run's events: this one, subscribed as Hermes named the run.
        expect(env.store.sents.get(env.rec.id)).toEqual({ attempt: 1, runId: 'run_1', holder: PROCESS_ID });
        // And the turn woken once more, after the write: whichever instance runs it takes the run (npm run chaos: not the chain tick 2 s on).
        expect(env.wakes()).toEqual([0]);
        expect(wakesAtWrite).toEqual([0]);
        expect(await submit(env.rec, env.ports)).toBe(true);
        expect(env.dropped).toEqual([env.rec.id]);
        expect(env.store.sents.size).toBe(0);
        expect(await env.store.get(env.rec.id)).toMatchObject({ phase: 'running', runId: 'run_1' });
    });

    it("is written with Hermes's refusal, every field of it", async () => {
        const env = await setup();
        env.transport.createFailures.push({ status: 429, headers: { 'retry-after': '7' }, code: 'rate_limit_exceeded' });
        await submit(env.rec, env.ports);
        await settle();
        jest.advanceTimersByTime(1_000);
        await settle();
        expect(env.store.sents.get(env.rec.id)).toEqual({
            attempt: 1,
            error: {
                kind: 'rate-limited',
                detail: 'HTTP 429 rate_limit_exceeded: rate_limit_exceeded',
                status: 429,
                retryAfterSeconds: 7,
                code: 'rate_limit_exceeded',
            },
        });
    });

    it('is not written when it failed on something other than Hermes (the claim lapses and the turn is sent again)', async () => {
        const env = await setup(
            {},
            {
                markNewestToken: async () => {
                    throw new Error('the asker key could not be written');
                },
            },
        );
        await submit(env.rec, env.ports);
        await settle();
        jest.advanceTimersByTime(5_000);
        await settle();
        expect(env.store.sents.size).toBe(0);
        await expect(submit(env.rec, env.ports)).rejects.toThrow('the asker key could not be written');
        expect(env.dropped).toEqual([]);
    });

    it("has opened the run's events before any tick took it, and the tick that takes it opens them no second time", async () => {
        const env = await setup();
        await submit(env.rec, env.ports);
        await settle();
        // v0.18.2 counts an unread run's event buffer against max_concurrent_runs for 5 minutes: a
        // process that dies before its tick comes must not leave one behind.
        expect(eventReads(env.transport)).toEqual(['run_1']);
        expect(await submit(env.rec, env.ports)).toBe(true);
        await settle();
        expect(eventReads(env.transport)).toEqual(['run_1']);
        expect(env.ports.live.get(env.rec.id)?.runId).toBe('run_1');
    });

    it.each([
        ['ended', { event: 'run.completed', output: 'hi' }],
        ['asked for an approval', { event: 'approval.request', command: 'rm -rf /tmp/x', description: 'delete', choices: ['once', 'deny'] }],
    ])('whose run %s before the tick took it wakes the turn again as it is taken (not at the next chain tick)', async (_what, event) => {
        const env = await setup();
        await submit(env.rec, env.ports);
        await settle();
        expect(env.wakes()).toEqual([0]);
        // The stream's news comes while the submission's wake-up is still pending: that wake-up is all there is.
        env.transport.eventStreams.get('run_1')?.(event);
        expect(env.wakes()).toEqual([0]);
        // The tick of that wake-up (tick.ts marks the turn woken first) takes the run: a second wake-up.
        env.sched.pending.splice(0);
        env.ports.live.woke(env.rec.id);
        expect(await submit(env.rec, env.ports)).toBe(true);
        expect(env.wakes()).toEqual([0]);
    });

    it('whose run has no news when the tick takes it asks for no wake-up (the stream wakes it later)', async () => {
        const env = await setup();
        await submit(env.rec, env.ports);
        await settle();
        env.sched.pending.splice(0);
        env.ports.live.woke(env.rec.id);
        expect(await submit(env.rec, env.ports)).toBe(true);
        expect(env.wakes()).toEqual([]);
    });

    it('taken by a tick here in time, is neither written nor dropped', async () => {
        const env = await setup();
        await submit(env.rec, env.ports);
        await settle();
        expect(await submit(env.rec, env.ports)).toBe(true);
        jest.advanceTimersByTime(5_000);
        await settle();
        expect(env.store.sents.size).toBe(0);
        expect(env.dropped).toEqual([]);
    });
});

describe('a turn another instance is sending', () => {
    /** The turn as another instance sends it, with what its sender handed over (nothing yet when `sent` is undefined). */
    async function sendingThere(sent?: SentRecord) {
        const env = await setup();
        Object.assign(env.rec, sentElsewhere(env.sched));
        await env.store.save(env.rec);
        if (sent) {
            await env.store.recordSent(env.rec.id, sent);
        }
        return env;
    }

    it('is recorded here from the run its sender handed over; the tick says it runs and asks for no other look', async () => {
        const env = await sendingThere({ attempt: 1, runId: 'run_there' });
        expect(await submit(env.rec, env.ports)).toBe(true);
        expect(env.wakes()).toEqual([]);
        expect(env.dropped).toEqual([env.rec.id]);
        expect(await env.store.get(env.rec.id)).toMatchObject({ phase: 'running', runId: 'run_there' });
        expect(env.runsCreated()).toBe(0);
    });

    it("leaves the run's events to the sender that reads them: no second reader here, the record names the sender", async () => {
        const env = await sendingThere({ attempt: 1, runId: 'run_there', holder: 'another-instance' });
        expect(await submit(env.rec, env.ports)).toBe(true);
        await settle();
        expect(eventReads(env.transport)).toEqual([]);
        expect(env.ports.live.get(env.rec.id)).toBeUndefined();
        expect(await env.store.get(env.rec.id)).toMatchObject({
            phase: 'running',
            runId: 'run_there',
            owner: { as: 'streaming', process: 'another-instance' },
        });
    });

    it('reads the events itself when the sender handed over no reader (a result written before readers were named)', async () => {
        const env = await sendingThere({ attempt: 1, runId: 'run_there' });
        expect(await submit(env.rec, env.ports)).toBe(true);
        await settle();
        expect(eventReads(env.transport)).toEqual(['run_there']);
        expect(await env.store.get(env.rec.id)).toMatchObject({ owner: { as: 'streaming', process: PROCESS_ID } });
    });

    it("raises the refusal its sender handed over, as Hermes's error", async () => {
        const refusal = { kind: 'rate-limited' as const, detail: 'HTTP 429', status: 429, retryAfterSeconds: 7, code: 'rate_limit_exceeded' };
        const env = await sendingThere({ attempt: 1, error: refusal });
        const raised = await submit(env.rec, env.ports).catch((e: unknown) => e);
        expect(raised).toBeInstanceOf(HermesError);
        expect(raised).toMatchObject(refusal);
        expect(env.rec.owner).toBeUndefined();
        expect(env.dropped).toEqual([env.rec.id]);
        expect(env.store.sents.size).toBe(0);
        expect(env.runsCreated()).toBe(0);
    });

    it('with nothing handed over yet, is left to its sender: the tick says it does not run', async () => {
        const env = await sendingThere();
        expect(await submit(env.rec, env.ports)).toBe(false);
        expect(env.wakes()).toEqual([250]);
        expect(env.runsCreated()).toBe(0);
    });
});

describe('a chat turn with files that another instance sent', () => {
    const files = [{ id: 'F1', name: 'photo.png', type: 'image/png', size: 10 }];
    const contextFiles = { files: [{ id: 'F2', name: 'chart.png', type: 'image/png', size: 10 }], max: 3, overCount: 0, unreadable: 0 } as never;

    async function handedOverChat(over: Partial<TurnRecord>) {
        const env = await setup({ ...over }, { config: { ...TEST_CONFIG, hermesTransport: 'chat' } });
        Object.assign(env.rec, sentElsewhere(env.sched), { transport: 'chat' });
        await env.store.save(env.rec);
        // The chat transport has no run: its sender hands over an answer without one.
        await env.store.recordSent(env.rec.id, { attempt: 1 });
        expect(await submit(env.rec, env.ports)).toBe(true);
        expect(env.ports.live.get(env.rec.id)?.kind).toBe('chat');
        return env;
    }

    it.each([
        ['its own files', { files }],
        ["its context's files", { contextFiles }],
    ])('with %s, is sent without their images, and the log says so', async (_what, over) => {
        const env = await handedOverChat(over);
        expect(env.logs).toEqual([
            `Turn message ${env.rec.id} in room R1 is sent without its images: the app process restarted while it was being sent.`,
            `Turn message ${env.rec.id} in room R1 sent to Hermes (chat, session rc_s_elsewhere, attempt 1).`,
        ]);
    });

    it('without files, is sent with no such warning', async () => {
        const env = await handedOverChat({});
        expect(env.logs).toEqual([`Turn message ${env.rec.id} in room R1 sent to Hermes (chat, session rc_s_elsewhere, attempt 1).`]);
    });

    it('sent by this process, keeps what it read and logs no warning', async () => {
        const env = await setup({ files }, { config: { ...TEST_CONFIG, hermesTransport: 'chat' } });
        await submit(env.rec, env.ports);
        await settle();
        expect(await submit(env.rec, env.ports)).toBe(true);
        expect(env.logs).toEqual([`Turn message ${env.rec.id} in room R1 sent to Hermes (chat, session ${env.rec.sessionId}, attempt 1).`]);
    });
});
