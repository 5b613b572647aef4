import { HermesError } from '../../../src/hermes/errors';
import { LiveTurns } from '../../../src/hermes/liveTurns';
import { t } from '../../../src/i18n/messages';
import { chainEnded, chainOn, chainTickRan, chainWaiting } from '../../../src/turns/chain';
import { MAX_RETRY_WAIT_MS, onError, POLL_FAILURE_GRACE_MS, pollSucceeded, RETRY_WINDOW_MS } from '../../../src/turns/retryPolicy';
import { submit } from '../../../src/turns/submit';
import { STALE_MS, sweepTurns } from '../../../src/turns/sweep';
import { TickJob } from '../../../src/turns/tickPorts';
import { comesBefore, describe as describeTurn, TurnRecord } from '../../../src/turns/turnRecord';
import { turnsAhead } from '../../../src/turns/freshClaim';
import { memoryTickPorts, queuedTurn, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

/**
 * The small pieces of a turn's life, one at a time (found by mutation testing, `npm run
 * mutate`): the chain's successor bookkeeping, the sweep, ordering inside a session, the
 * retry policy and the two-tick submission.
 */

let n = 0;
/** Per-process state (successors, failing polls) is kept by turn id: every test uses fresh ids. */
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;

function setup(over: Partial<Parameters<typeof memoryTickPorts>[0]> = {}) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched, ...over });
    return { sched, ...env };
}

/** Lets work the app started in the background (a submission) settle. */
const settle = async () => {
    for (let i = 0; i < 5; i++) {
        await new Promise((r) => setImmediate(r));
    }
};

describe("the chain's successor", () => {
    function ports() {
        const cancelled: string[] = [];
        let next = 0;
        return {
            cancelled,
            schedule: async (_job: TickJob, _delay: number) => `job${++next}`,
            cancel: async (id: string) => {
                cancelled.push(id);
            },
        };
    }

    it('is replaced, not doubled: scheduling the next tick cancels the one waiting', async () => {
        const p = ports();
        const turnId = uid('C');
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        expect(p.cancelled).toEqual(['job1']);
    });

    it('is not cancelled once it ran', async () => {
        const p = ports();
        const turnId = uid('C');
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        chainTickRan({ turnId, chain: 'c', jobId: 'job1' });
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        expect(p.cancelled).toEqual([]);
    });

    it('stays the successor when another job of the turn ran', async () => {
        const p = ports();
        const turnId = uid('C');
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        chainTickRan({ turnId, chain: 'c', jobId: 'job-older' });
        chainTickRan({ turnId, chain: 'c' });
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        expect(p.cancelled).toEqual(['job1']);
    });

    it('is cancelled when the turn ends, once', async () => {
        const p = ports();
        const turnId = uid('C');
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        await chainEnded(turnId, p);
        expect(p.cancelled).toEqual(['job1']);
        await chainEnded(turnId, p);
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        expect(p.cancelled).toEqual(['job1']);
    });

    it('is not remembered when the scheduler gave no id', async () => {
        const cancelled: string[] = [];
        const p = { schedule: async () => undefined, cancel: async (id: string) => void cancelled.push(id) };
        const turnId = uid('C');
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        await chainEnded(turnId, p);
        expect(cancelled).toEqual([]);
    });

    it('is not waiting when it ran before its scheduling call had its id back', async () => {
        const turnId = uid('C');
        let next = 0;
        const cancelled: string[] = [];
        const p = {
            schedule: async () => {
                const id = `e${++next}`;
                // A job due at once starts before the call that scheduled it returns.
                chainTickRan({ turnId, chain: 'c', jobId: id });
                return id;
            },
            cancel: async (id: string) => void cancelled.push(id),
        };
        await chainOn({ turnId, chain: 'c' }, 0, p);
        expect(chainWaiting(turnId)).toBe(false);
        await chainEnded(turnId, p);
        expect(cancelled).toEqual([]);
    });

    it('stays waiting when an unrelated job of the turn ran outside any scheduling call', async () => {
        const p = ports();
        const turnId = uid('C');
        chainTickRan({ turnId, chain: 'c', jobId: 'job1' });
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        expect(chainWaiting(turnId)).toBe(true);
    });

    it('survives a cancel that fails', async () => {
        const turnId = uid('C');
        let next = 0;
        const p = { schedule: async () => `j${++next}`, cancel: async () => Promise.reject(new Error('gone')) };
        await chainOn({ turnId, chain: 'c' }, 1000, p);
        await expect(chainOn({ turnId, chain: 'c' }, 1000, p)).resolves.toBeUndefined();
        await expect(chainEnded(turnId, p)).resolves.toBeUndefined();
    });
});

describe('order inside a session', () => {
    const rec = (id: string, seq: number, phase: TurnRecord['phase'] = 'queued') => queuedTurn(id, { seq, phase });

    it('goes by sequence, then id; a turn does not come before itself', () => {
        expect(comesBefore({ seq: 1, id: 'b' }, { seq: 2, id: 'a' })).toBe(true);
        expect(comesBefore({ seq: 2, id: 'a' }, { seq: 1, id: 'b' })).toBe(false);
        expect(comesBefore({ seq: 1, id: 'a' }, { seq: 1, id: 'b' })).toBe(true);
        expect(comesBefore({ seq: 1, id: 'b' }, { seq: 1, id: 'a' })).toBe(false);
        expect(comesBefore({ seq: 1, id: 'a' }, { seq: 1, id: 'a' })).toBe(false);
    });

    it('puts ahead every running turn, and the queued ones ordered before', () => {
        const a = rec('A', 1);
        const b = rec('B', 2, 'running');
        const c = rec('C', 3);
        expect(turnsAhead(a, [a, b, c], 0).map((r) => r.id)).toEqual(['B']);
        expect(turnsAhead(c, [a, b, c], 0).map((r) => r.id)).toEqual(['A', 'B']);
        expect(turnsAhead(b, [a, b, c], 0).map((r) => r.id)).toEqual(['A']);
        expect(turnsAhead(b, [b], 0)).toEqual([]);
    });

    it('describes a turn by message, room and thread', () => {
        expect(describeTurn({ id: 'M1', roomId: 'R1' })).toBe('message M1 in room R1');
        expect(describeTurn({ id: 'M1', roomId: 'R1', threadId: 'T1' })).toBe('message M1 in room R1 thread T1');
    });
});

describe('the sweep', () => {
    function sweepPorts(sched: VirtualScheduler, store: ReturnType<typeof setup>['store']) {
        const logs: string[] = [];
        const scheduled: Array<{ job: TickJob; delay: number }> = [];
        return {
            logs,
            scheduled,
            ports: {
                store,
                schedule: async (job: TickJob, delay: number) => void scheduled.push({ job, delay }),
                log: { info: (m: string) => logs.push(m) },
                now: () => sched.time,
            },
        };
    }

    it('restarts a stale running turn even with a queued turn ordered before it, and counts what it restarted', async () => {
        const { sched, store } = setup();
        const running = queuedTurn(uid('S'), { seq: 5, phase: 'running', createdAt: sched.time - 60_000 });
        const queued = queuedTurn(uid('S'), { seq: 3, createdAt: sched.time - 60_000 });
        const other = queuedTurn(uid('S'), { seq: 1, createdAt: sched.time - 90_000, sessionKey: 'another' });
        await store.save(running);
        await store.save(queued);
        await store.save(other);
        const s = sweepPorts(sched, store);
        expect(await sweepTurns(s.ports)).toBe(2);
        expect(s.scheduled.map((x) => [x.job.turnId, x.delay])).toEqual([
            [running.id, 0],
            [other.id, 0],
        ]);
        const restarted = await store.get(running.id);
        expect(restarted?.chain).not.toBe(running.chain);
        expect(s.scheduled[0].job.chain).toBe(restarted?.chain);
        expect(restarted?.tickAt).toBe(sched.time);
        expect(s.logs).toEqual([
            `Turn message ${running.id} in room R1 had no tick for 60 s; restarted.`,
            `Turn message ${other.id} in room R1 had no tick for 90 s; restarted.`,
        ]);
    });

    it('leaves a turn that moved exactly STALE_MS ago', async () => {
        const { sched, store } = setup();
        const rec = queuedTurn(uid('S'), { phase: 'running', createdAt: sched.time - 100_000, tickAt: sched.time - STALE_MS });
        await store.save(rec);
        const s = sweepPorts(sched, store);
        expect(await sweepTurns(s.ports)).toBe(0);
        sched.time += 1;
        expect(await sweepTurns(s.ports)).toBe(1);
    });

    it('leaves a turn being sent alone while its claim is fresh, however long it waited before (its sender writes the run next)', async () => {
        const { sched, store } = setup();
        const claim = { as: 'sending' as const, process: 'another-process', until: sched.time + 30_000, at: sched.time };
        const rec = queuedTurn(uid('S'), { createdAt: sched.time - 200_000, tickAt: sched.time - 150_000, owner: claim });
        await store.save(rec);
        const s = sweepPorts(sched, store);
        expect(await sweepTurns(s.ports)).toBe(0);
        expect((await store.get(rec.id))?.chain).toBe(rec.chain);
        sched.time += 30_001;
        expect(await sweepTurns(s.ports)).toBe(1);
    });
});

describe('the retry policy', () => {
    async function turn(over: Partial<TurnRecord> = {}) {
        const env = setup();
        const rec = queuedTurn(uid('E'), { createdAt: env.sched.time, attempts: 1, ...over });
        await env.store.save(rec);
        return { ...env, rec };
    }
    const notices = (chat: ReturnType<typeof setup>['chat']) => chat.visible().map((m) => m.text);

    it.each([
        [undefined, 1000],
        [0, 1000],
        [3, 3000],
        [100, MAX_RETRY_WAIT_MS],
    ])('retries a busy Hermes (Retry-After %s) after %i ms', async (retryAfter, wait) => {
        const { rec, sched, store, logs, chat, ports } = await turn();
        await onError(rec, new HermesError('rate-limited', 'HTTP 429', 429, retryAfter), ports);
        const saved = await store.get(rec.id);
        expect(saved?.retryAt).toBe(sched.time + wait);
        expect(saved?.tickAt).toBe(sched.time);
        expect(sched.pending.map((p) => [p.job.turnId, p.at])).toEqual([[rec.id, sched.time + wait]]);
        expect(logs).toEqual([`Hermes is busy (HTTP 429); turn message ${rec.id} in room R1 retries in ${wait} ms (attempt 1).`]);
        expect(chat.visible()).toEqual([]);
    });

    it('retries a draining Hermes the same way, saying so', async () => {
        const { rec, ports, logs, store, sched } = await turn();
        await onError(rec, new HermesError('draining', 'HTTP 503', 503, 2), ports);
        expect((await store.get(rec.id))?.retryAt).toBe(sched.time + 2000);
        expect(logs[0]).toBe(`Hermes is draining (HTTP 503); turn message ${rec.id} in room R1 retries in 2000 ms (attempt 1).`);
    });

    it('retries within the window only: the asker is told at its end', async () => {
        const inside = await turn();
        inside.rec.createdAt = inside.sched.time - RETRY_WINDOW_MS + 1;
        await onError(inside.rec, new HermesError('rate-limited', 'HTTP 429'), inside.ports);
        expect(inside.chat.visible()).toEqual([]);

        const outside = await turn();
        outside.rec.createdAt = outside.sched.time - RETRY_WINDOW_MS;
        await onError(outside.rec, new HermesError('rate-limited', 'HTTP 429'), outside.ports);
        expect(notices(outside.chat)).toEqual([`@alice ${t('notice_rate-limited')}`]);
        expect(await outside.store.get(outside.rec.id)).toBeUndefined();
    });

    it('retries at most five attempts', async () => {
        const fourth = await turn({ attempts: 4 });
        await onError(fourth.rec, new HermesError('rate-limited', 'HTTP 429'), fourth.ports);
        expect(fourth.chat.visible()).toEqual([]);
        const fifth = await turn({ attempts: 5 });
        await onError(fifth.rec, new HermesError('rate-limited', 'HTTP 429'), fifth.ports);
        expect(notices(fifth.chat)).toEqual([`@alice ${t('notice_rate-limited')}`]);
    });

    it('does not retry a busy Hermes once the turn runs', async () => {
        const { rec, ports, chat } = await turn({ phase: 'running', transport: 'chat' });
        await onError(rec, new HermesError('rate-limited', 'HTTP 429'), ports);
        expect(notices(chat)).toEqual([`@alice ${t('notice_rate-limited')}`]);
    });

    it.each(['unreachable', 'timeout', 'rate-limited', 'draining', 'server-error'] as const)(
        'keeps polling a run through %s for the grace period',
        async (kind) => {
            const { rec, ports, chat, logs, sched, store } = await turn({ phase: 'running', transport: 'runs', runId: 'run_7' });
            await onError(rec, new HermesError(kind, 'detail'), ports);
            expect(logs).toEqual([`Polling run run_7 of message ${rec.id} in room R1 failed (detail); trying again.`]);
            sched.time += POLL_FAILURE_GRACE_MS - 1;
            await onError(rec, new HermesError(kind, 'detail'), ports);
            expect(chat.visible()).toEqual([]);
            expect(await store.get(rec.id)).toBeDefined();
            sched.time += 1;
            await onError(rec, new HermesError(kind, 'detail'), ports);
            expect(chat.visible()).toHaveLength(1);
            expect(await store.get(rec.id)).toBeUndefined();
        },
    );

    it('starts the grace period again after a successful poll', async () => {
        const { rec, ports, chat, sched } = await turn({ phase: 'running', transport: 'runs', runId: 'run_8' });
        await onError(rec, new HermesError('timeout', 'slow'), ports);
        sched.time += POLL_FAILURE_GRACE_MS - 1;
        pollSucceeded(rec.id);
        sched.time += 2;
        await onError(rec, new HermesError('timeout', 'slow'), ports);
        expect(chat.visible()).toEqual([]);
    });

    it('ends a running turn at once on a failure that is not transient, or on a chat turn', async () => {
        const runs = await turn({ phase: 'running', transport: 'runs', runId: 'run_9' });
        await onError(runs.rec, new HermesError('unauthorized', 'HTTP 401'), runs.ports);
        expect(notices(runs.chat)).toEqual([`@alice ${t('notice_unauthorized')}`]);
        const chat = await turn({ phase: 'running', transport: 'chat' });
        await onError(chat.rec, new HermesError('unreachable', 'ECONNREFUSED'), chat.ports);
        expect(notices(chat.chat)).toEqual([`@alice ${t('notice_unreachable')}`]);
        const queued = await turn();
        await onError(queued.rec, new HermesError('server-error', 'HTTP 500'), queued.ports);
        expect(notices(queued.chat)).toEqual([`@alice ${t('notice_server-error')}`]);
    });

    it('retries a turn too large for Hermes once, with the recent messages dropped', async () => {
        const user = '[Rocket.Chat room_id: R1]\n[Recent chat messages - context only, not requests]\nold\n\n[New message]\nq';
        const { rec, ports, store, sched, logs, chat } = await turn({ user });
        await onError(rec, new HermesError('too-large', 'HTTP 413'), ports);
        const saved = await store.get(rec.id);
        expect(saved).toMatchObject({ trimmed: true, user: '[Rocket.Chat room_id: R1]\n\n[New message]\nq', tickAt: sched.time });
        expect(sched.pending.map((p) => [p.job.turnId, p.at])).toEqual([[rec.id, sched.time]]);
        expect(logs).toEqual([`Hermes refused turn message ${rec.id} in room R1 as too large (HTTP 413); retrying once with less history.`]);
        await onError(saved as TurnRecord, new HermesError('too-large', 'HTTP 413'), ports);
        expect(notices(chat)).toEqual([`@alice ${t('notice_too-large')}`]);
    });

    it('does not trim a running turn', async () => {
        const { rec, ports, chat } = await turn({ phase: 'running', transport: 'chat' });
        await onError(rec, new HermesError('too-large', 'HTTP 413'), ports);
        expect(notices(chat)).toEqual([`@alice ${t('notice_too-large')}`]);
    });

    it('ends the turn on anything else, naming the error in the log', async () => {
        const thrown = await turn();
        await onError(thrown.rec, new TypeError('x is undefined'), thrown.ports);
        expect(notices(thrown.chat)).toEqual([`@alice ${t('notice_server-error')}`]);
        expect(thrown.logs.pop()).toMatch(/^Hermes turn failed for message \S+ in room R1 after \d+ ms: TypeError: x is undefined$/);
        const odd = await turn();
        await onError(odd.rec, 'a string', odd.ports);
        expect(odd.logs.pop()).toMatch(/ms: a string$/);
    });
});

describe('the two-tick submission', () => {
    /** A Hermes client whose run creation the test completes by hand. */
    function fakeHermes() {
        const calls: { createRun: unknown[]; stopRun: string[]; sessionMessages: string[] } = { createRun: [], stopRun: [], sessionMessages: [] };
        let resolveRun: (id: string) => void = () => undefined;
        let rejectRun: (e: unknown) => void = () => undefined;
        const hermes = {
            createRun: (input: unknown) => {
                calls.createRun.push(input);
                return new Promise<string>((resolve, reject) => {
                    resolveRun = resolve;
                    rejectRun = reject;
                });
            },
            sessionMessages: async (id: string) => {
                calls.sessionMessages.push(id);
                return Array.from({ length: 6 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` }));
            },
            runEvents: () => new Promise<void>(() => undefined),
            chatStream: () => new Promise(() => undefined),
            stopRun: async (id: string) => void calls.stopRun.push(id),
        };
        return { hermes: hermes as never, calls, resolve: (id: string) => resolveRun(id), reject: (e: unknown) => rejectRun(e) };
    }

    async function queued(over: Partial<TurnRecord> = {}, caps = { runs: true, runsLoadHistory: true }, config = TEST_CONFIG) {
        const h = fakeHermes();
        const env = setup({ hermes: h.hermes, capabilities: async () => caps as never, config, live: new LiveTurns() });
        const rec = queuedTurn(uid('U'), { createdAt: env.sched.time, ...over });
        await env.store.save(rec);
        return { ...env, rec, h };
    }

    it('starts the request in one tick and records the run in the next', async () => {
        const { rec, ports, store, h, logs, sched } = await queued();
        expect(await submit(rec, ports)).toBe(false);
        expect(rec).toMatchObject({ attempts: 1, transport: 'runs', phase: 'queued' });
        expect(rec.sessionId).toBeTruthy();
        expect(await store.get(rec.id)).toMatchObject({ attempts: 1, transport: 'runs', sessionId: rec.sessionId });
        await settle();
        expect(h.calls.createRun).toEqual([
            {
                input: 'user text',
                instructions: 'system text',
                sessionId: rec.sessionId,
                sessionKey: rec.sessionKey,
                history: undefined,
                idempotencyKey: rec.id,
            },
        ]);
        expect(await submit(rec, ports)).toBe(false);
        h.resolve('run_42');
        await settle();
        expect(sched.pending.filter((p) => p.job.wake).map((p) => p.job.turnId)).toEqual([rec.id]);
        expect(await submit(rec, ports)).toBe(true);
        expect(await store.get(rec.id)).toMatchObject({
            phase: 'running',
            runId: 'run_42',
            startedAt: sched.time,
            deadlineAt: sched.time + 30 * 60_000,
            tickAt: sched.time,
        });
        expect(logs).toEqual([`Turn message ${rec.id} in room R1 sent to Hermes (runs run_42, session ${rec.sessionId}, attempt 1).`]);
        expect(ports.live.get(rec.id)?.kind).toBe('run-events');
        expect(h.calls.stopRun).toEqual([]);
    });

    it('counts every attempt', async () => {
        const { rec, ports } = await queued({ attempts: 2 });
        await submit(rec, ports);
        expect(rec.attempts).toBe(3);
    });

    it('passes a failed creation on to the retry policy, once', async () => {
        const { rec, ports, h } = await queued();
        await submit(rec, ports);
        h.reject(new HermesError('rate-limited', 'HTTP 429'));
        await settle();
        await expect(submit(rec, ports)).rejects.toMatchObject({ kind: 'rate-limited' });
        expect(ports.live.submission(rec.id)).toBeUndefined();
    });

    it('stops a run that someone stopped while it was being created', async () => {
        const { rec, ports, h, store } = await queued();
        await submit(rec, ports);
        await store.requestStop(rec.id, 'bob');
        h.resolve('run_43');
        await settle();
        await submit(rec, ports);
        expect(h.calls.stopRun).toEqual(['run_43']);
    });

    it('sends the transcript to a server that does not load it, half of it after a trim', async () => {
        const full = await queued({}, { runs: true, runsLoadHistory: false });
        await submit(full.rec, full.ports);
        await settle();
        expect((full.h.calls.createRun[0] as { history: unknown[] }).history).toHaveLength(6);
        const trimmed = await queued({ trimmed: true }, { runs: true, runsLoadHistory: false });
        await submit(trimmed.rec, trimmed.ports);
        await settle();
        expect((trimmed.h.calls.createRun[0] as { history: Array<{ content: string }> }).history.map((m) => m.content)).toEqual(['m3', 'm4', 'm5']);
    });

    it('opens a chat stream, without a run, on the chat transport', async () => {
        const { rec, ports, h, store, logs } = await queued({}, { runs: true, runsLoadHistory: true }, { ...TEST_CONFIG, hermesTransport: 'chat' });
        expect(await submit(rec, ports)).toBe(false);
        await settle();
        expect(h.calls.createRun).toEqual([]);
        expect(await submit(rec, ports)).toBe(true);
        expect(await store.get(rec.id)).toMatchObject({ phase: 'running', transport: 'chat' });
        expect((await store.get(rec.id))?.runId).toBeUndefined();
        expect(ports.live.get(rec.id)?.kind).toBe('chat');
        expect(logs).toEqual([`Turn message ${rec.id} in room R1 sent to Hermes (chat, session ${rec.sessionId}, attempt 1).`]);
    });
});
