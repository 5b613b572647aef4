import { finish } from '../../../src/turns/finish';
import { tick } from '../../../src/turns/tick';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, ScriptedRuns, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

/**
 * Issue 16 §6: a quick turn whose run has ended hands its max_parallel_turns slot to the oldest
 * waiter of another session before it posts its answer (wakeAfterEnd.ts freeSlotEarly); its own
 * session's next turn still starts only after the answer.
 */
const S1 = 'agent:main:rocketchat:channel:R1';
const S2 = 'agent:main:rocketchat:channel:R2';
const WAITING_FOR_SLOT: Partial<TurnRecord> = { slot: { state: 'waiting', until: Number.MAX_SAFE_INTEGER }, waiting: 'slot' };

/**
 * `held`: the turns whose answers are held until so many runs in all have been requested (at
 * most 100 ms): a turn woken early has the time to reach Hermes before them, one woken at the
 * end cannot.
 */
function setup(max = 1, held: Record<string, number> = { A: 2 }, whileFirstRuns?: () => Promise<void>) {
    const sched = new VirtualScheduler();
    const transport = new ScriptedRuns();
    const env = memoryTickPorts({ sched, transport, config: { ...TEST_CONFIG, maxParallelTurns: max } });
    /** What happened, in order: `run:<turn>` when its run is requested, `answer:<turn>` when its answer is posted. */
    const order: string[] = [];
    /** Runs open at Hermes: from their creation to the end of their event stream. */
    const running = new Set<string>();
    let mostRunning = 0;
    const send = transport.send.bind(transport);
    transport.send = async (request) => {
        const result = await send(request);
        if (request.method === 'POST' && new URL(request.url).pathname === '/v1/runs') {
            order.push(`run:${request.headers?.['Idempotency-Key']}`);
            running.add(JSON.parse(result.body).run_id);
            mostRunning = Math.max(mostRunning, running.size);
        }
        return result;
    };
    // Hermes ends every run as soon as its event stream is open.
    const stream = transport.stream.bind(transport);
    transport.stream = (request, onText, signal) => {
        const streaming = stream(request, onText, signal);
        const run = /\/v1\/runs\/([^/]+)\/events$/.exec(new URL(request.url).pathname)?.[1] as string;
        const first = running.size === 1 && whileFirstRuns;
        whileFirstRuns = undefined;
        setImmediate(async () => {
            if (first) {
                await first();
            }
            running.delete(run);
            onText(`data: ${JSON.stringify({ event: 'run.completed', output: 'the answer' })}\n\n`);
        });
        return streaming;
    };
    const post = env.chat.post.bind(env.chat);
    const runs = () => order.filter((o) => o.startsWith('run:')).length;
    env.chat.post = async (target, text, kind, opts = {}) => {
        const until = held[opts.turnId as string];
        if (until && kind === 'answer') {
            for (let i = 0; i < 100 && runs() < until; i++) {
                await new Promise((resolve) => setTimeout(resolve, 1));
            }
        }
        const id = await post(target, text, kind, opts);
        if (kind === 'answer') {
            order.push(`answer:${opts.turnId}`);
        }
        return id;
    };
    return { ...env, sched, order, mostRunning: () => mostRunning };
}

describe('a quick turn frees its slot when its run ends', () => {
    it('the oldest waiter of another session reaches Hermes before the answer is posted; the session’s next turn only after it', async () => {
        const { store, ports, order, chat, mostRunning } = setup();
        const a = queuedTurn('A', { seq: 1, roomId: 'R1', sessionKey: S1 });
        await store.save(a);
        await store.save({ ...queuedTurn('A2', { seq: 2, roomId: 'R1', sessionKey: S1 }), waiting: true });
        await store.save({ ...queuedTurn('B', { seq: 3, roomId: 'R2', sessionKey: S2 }), ...WAITING_FOR_SLOT });

        await tick({ turnId: 'A', chain: a.chain, quick: true, record: structuredClone(a) }, ports);

        expect(order.indexOf('run:B')).toBeGreaterThan(order.indexOf('run:A'));
        expect(order.indexOf('run:B')).toBeLessThan(order.indexOf('answer:A'));
        expect(order.indexOf('run:A2')).toBeGreaterThan(order.indexOf('answer:A'));
        // Every turn answered once, all in the first turn's call, and never two runs at once.
        expect(chat.answers()).toHaveLength(3);
        expect(await store.open()).toEqual([]);
        expect(mostRunning()).toBe(1);
    });

    it('turns ending together each free their slot early: the woken turns all reach Hermes before any of their answers', async () => {
        const { store, ports, order, chat, mostRunning } = setup(2, { A: 4, C: 4 });
        const a = queuedTurn('A', { seq: 1, roomId: 'R1', sessionKey: S1 });
        const c = queuedTurn('C', { seq: 2, roomId: 'R3', sessionKey: 'agent:main:rocketchat:channel:R3' });
        await store.save(a);
        await store.save(c);
        await store.save({ ...queuedTurn('B1', { seq: 3, roomId: 'R2', sessionKey: S2 }), ...WAITING_FOR_SLOT });
        await store.save({ ...queuedTurn('B2', { seq: 4, roomId: 'R4', sessionKey: 'agent:main:rocketchat:channel:R4' }), ...WAITING_FOR_SLOT });

        await Promise.all([
            tick({ turnId: 'A', chain: a.chain, quick: true, record: structuredClone(a) }, ports),
            tick({ turnId: 'C', chain: c.chain, quick: true, record: structuredClone(c) }, ports),
        ]);

        const firstAnswer = Math.min(order.indexOf('answer:A'), order.indexOf('answer:C'));
        expect(order.indexOf('run:B1')).toBeLessThan(firstAnswer);
        expect(order.indexOf('run:B2')).toBeLessThan(firstAnswer);
        expect(chat.answers()).toHaveLength(4);
        expect(await store.open()).toEqual([]);
        expect(mostRunning()).toBe(2);
    });

    it('never to a turn of its own session, even one that waits for a slot (its read missed the turn ahead)', async () => {
        const { store, ports, order, chat } = setup();
        const a = queuedTurn('A', { seq: 1, roomId: 'R1', sessionKey: S1 });
        await store.save(a);
        await store.save({ ...queuedTurn('A2', { seq: 2, roomId: 'R1', sessionKey: S1 }), ...WAITING_FOR_SLOT });

        await tick({ turnId: 'A', chain: a.chain, quick: true, record: structuredClone(a) }, ports);

        expect(order).toEqual(['run:A', 'answer:A', 'run:A2', 'answer:A2']);
        expect(chat.answers()).toHaveLength(2);
    });

    it('a waiter that came after the turn started alone is woken when its run ends too (its mark was made in this process)', async () => {
        const b = queuedTurn('B', { seq: 2, roomId: 'R2', sessionKey: S2 });
        const env = setup(1, { A: 2 }, async () => {
            // B arrives while A runs: no free slot, so it waits and marks A.
            await env.store.save(b);
            await tick({ turnId: 'B', chain: b.chain, record: structuredClone(b) }, env.ports);
        });
        const { store, ports, order, chat } = env;
        const a = queuedTurn('A', { seq: 1, roomId: 'R1', sessionKey: S1 });
        await store.save(a);

        await tick({ turnId: 'A', chain: a.chain, quick: true, record: structuredClone(a) }, ports);

        // Woken by the end of A's run, not by the removal after A's answer (that is run:A, answer:A, run:B).
        expect(order.slice(0, 2)).toEqual(['run:A', 'run:B']);
        expect(order.indexOf('answer:A')).toBeGreaterThan(1);
        expect(chat.answers()).toHaveLength(2);
        expect(await store.open()).toEqual([]);
    });

    it('reads nothing more for a turn that started alone', async () => {
        const { store, ports, chat } = setup(1, {});
        const a = queuedTurn('A', { seq: 1, roomId: 'R1', sessionKey: S1 });
        await store.save(a);
        let reads = 0;
        const tickets = store.open.bind(store);
        store.open = async () => {
            reads += 1;
            return tickets();
        };

        await tick({ turnId: 'A', chain: a.chain, quick: true, record: structuredClone(a) }, ports);

        expect(chat.answers()).toHaveLength(1);
        // The start's read only: its end found no mark and nobody to wake.
        expect(reads).toBe(1);
    });
});

describe('a turn ended outside its event frees its slot with its lease', () => {
    it('its lease write shows the slot free, and the oldest waiter of another session is woken before the answer is posted', async () => {
        const sched = new VirtualScheduler();
        const env = memoryTickPorts({ sched, config: { ...TEST_CONFIG, maxParallelTurns: 1 } });
        const a = queuedTurn('LA', {
            seq: 1,
            roomId: 'R1',
            sessionKey: S1,
            phase: 'running',
            runId: 'run_a',
            slot: { state: 'running', until: Number.MAX_SAFE_INTEGER },
        });
        await env.store.save(a);
        await env.store.save({ ...queuedTurn('LB', { seq: 2, roomId: 'R2', sessionKey: S2 }), ...WAITING_FOR_SLOT });
        const order: string[] = [];
        const schedule = env.ports.schedule;
        env.ports.schedule = async (job, delay) => {
            order.push(`wake:${job.turnId}`);
            return schedule(job, delay);
        };
        const post = env.chat.post.bind(env.chat);
        env.chat.post = async (target, text, kind, opts = {}) => {
            order.push(`${kind}:${opts.turnId}`);
            return post(target, text, kind, opts);
        };
        const save = env.store.save.bind(env.store);
        const leaseWrites: Array<TurnRecord['slot']> = [];
        env.store.save = async (rec, opts) => {
            if (rec.id === 'LA' && rec.owner?.as === 'finishing') {
                leaseWrites.push(rec.slot);
            }
            return save(rec, opts);
        };

        await finish(structuredClone(a), { kind: 'answer', text: 'the answer' }, env.ports);

        expect(leaseWrites).toHaveLength(1);
        expect(leaseWrites[0]).toBeUndefined();
        expect(order.indexOf('wake:LB')).toBeGreaterThanOrEqual(0);
        expect(order.indexOf('wake:LB')).toBeLessThan(order.indexOf('answer:LA'));
        expect(order.filter((o) => o === 'answer:LA')).toHaveLength(1);
    });
});
