import { tick } from '../../../src/turns/tick';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

/**
 * A queued turn that may not go yet (waitTurn.ts wait, sessionBlockers): which turns it marks so
 * their end wakes it, what it writes and logs, a claim on it that is not this process's, and a
 * turn that waits inside its own message event (a quick call): a job for it that came meanwhile,
 * or a turn ahead that ended between the read and the mark, brings it back once the call is over.
 */

let n = 0;
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;

function setup(config = TEST_CONFIG) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched, config });
    const jobsOf = (turnId: string) =>
        sched.pending.filter((p) => p.job.turnId === turnId).map((p) => ({ chain: p.job.chain, wake: p.job.wake === true, in: p.at - sched.time }));
    return { sched, jobsOf, ...env };
}

type Env = ReturnType<typeof setup>;

/** Whether `waiter` left its mark on each of `on` (its end wakes the waiter). */
const marked = (env: Env, waiter: string, on: Record<string, string>) =>
    Object.fromEntries(Object.entries(on).map(([name, id]) => [name, env.store.marks.get(id)?.has(waiter) ?? false]));

describe('a turn behind others of its session marks', () => {
    it('the running one and the one right before it, not an earlier queued one', async () => {
        const env = setup();
        const t = env.sched.time;
        const running = queuedTurn(uid('R'), { seq: t + 1, phase: 'running', runId: 'run_r', createdAt: t, startedAt: t, tickAt: t });
        const earlier = queuedTurn(uid('P'), { seq: t + 2, createdAt: t });
        const before = queuedTurn(uid('B'), { seq: t + 3, createdAt: t });
        const rec = queuedTurn(uid('W'), { seq: t + 4, createdAt: t });
        // Stored out of order: the one right before it is found by its place in the session, not by the read's order.
        for (const r of [before, running, earlier, rec]) {
            await env.store.save(r);
        }
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect((await env.store.get(rec.id))?.waiting).toBe(true);
        expect(marked(env, rec.id, { running: running.id, earlier: earlier.id, before: before.id })).toEqual({ running: true, earlier: false, before: true });
        expect(env.sched.pending).toEqual([]);
    });

    it('none when the turn ahead waits itself, and looks again only when woken', async () => {
        const env = setup();
        const t = env.sched.time;
        const ahead = queuedTurn(uid('A'), { seq: t + 1, createdAt: t, waiting: 'slot', slot: { state: 'waiting', until: Number.MAX_SAFE_INTEGER } });
        const rec = queuedTurn(uid('W'), { seq: t + 2, createdAt: t });
        await env.store.save(ahead);
        await env.store.save(rec);
        const asked: string[][] = [];
        const waitOn = env.store.waitOn.bind(env.store);
        env.store.waitOn = async (id, blockers) => {
            asked.push(blockers);
            return waitOn(id, blockers);
        };
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect((await env.store.get(rec.id))?.waiting).toBe(true);
        expect(asked).toEqual([]);
        expect(env.store.marks.size).toBe(0);
        expect(env.sched.pending).toEqual([]);
    });

    it('with a store that keeps no marks, just waits: nothing asks for another look', async () => {
        const env = setup();
        const t = env.sched.time;
        await env.store.save(queuedTurn(uid('R'), { seq: t + 1, phase: 'running', runId: 'run_r', createdAt: t, startedAt: t, tickAt: t }));
        const rec = queuedTurn(uid('W'), { seq: t + 2, createdAt: t });
        await env.store.save(rec);
        (env.store as { waitOn?: unknown }).waitOn = undefined;
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect((await env.store.get(rec.id))?.waiting).toBe(true);
        expect(env.sched.pending).toEqual([]);
    });

    it('keeps a sending claim it does not own (the sender’s answer is looked for before the turn is sent again)', async () => {
        const env = setup();
        const t = env.sched.time;
        const claim = { as: 'sending' as const, process: 'a-process-that-died', until: t - 1, at: t - 60_000 };
        await env.store.save(queuedTurn(uid('R'), { seq: t + 1, phase: 'running', runId: 'run_r', createdAt: t, startedAt: t, tickAt: t }));
        const rec = queuedTurn(uid('W'), { seq: t + 2, createdAt: t, owner: claim });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect(await env.store.get(rec.id)).toMatchObject({ waiting: true, owner: claim });
    });
});

describe('a turn waiting for a free slot', () => {
    it('says so in the log, and not that it waits for its session', async () => {
        const env = setup({ ...TEST_CONFIG, maxParallelTurns: 1 });
        const t = env.sched.time;
        await env.store.save(
            queuedTurn(uid('R'), {
                seq: t + 1,
                roomId: 'R2',
                sessionKey: 'agent:main:rocketchat:channel:R2',
                phase: 'running',
                runId: 'run_r',
                createdAt: t,
                startedAt: t,
                tickAt: t,
                slot: { state: 'running', until: Number.MAX_SAFE_INTEGER },
            }),
        );
        const rec = queuedTurn(uid('W'), { seq: t + 2, createdAt: t });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect((await env.store.get(rec.id))?.waiting).toBe('slot');
        expect(env.logs).toEqual([`Turn message ${rec.id} in room R1 waits for a free slot (max_parallel_turns 1).`]);
    });
});

describe('a turn that waits in its own message event', () => {
    /** A running turn of its session, ahead of the quick turn `rec`. */
    async function behind(env: Env) {
        const t = env.sched.time;
        const ahead = queuedTurn(uid('A'), { seq: t + 1, phase: 'running', runId: 'run_a', createdAt: t, startedAt: t, tickAt: t });
        const rec = queuedTurn(uid('W'), { seq: t + 2, createdAt: t });
        await env.store.save(ahead);
        await env.store.save(rec);
        return { ahead, rec };
    }
    const firstStep = (env: Env, rec: TurnRecord) => tick({ turnId: rec.id, chain: rec.chain, quick: true, record: structuredClone(rec) }, env.ports);

    it('costs no job: it is woken when the turn ahead ends', async () => {
        const env = setup();
        const { rec } = await behind(env);
        await firstStep(env, rec);
        expect((await env.store.get(rec.id))?.waiting).toBe(true);
        expect(env.sched.pending).toEqual([]);
    });

    it('gets a job that came for it during the call once the call is over', async () => {
        const env = setup();
        const { rec } = await behind(env);
        const save = env.store.save.bind(env.store);
        let came: Promise<void> | undefined;
        env.store.save = async (r, opts) => {
            if (r.id === rec.id && !came) {
                // A chain job of the turn runs while the call is saving that it waits.
                came = tick({ turnId: rec.id, chain: rec.chain }, env.ports);
                await came;
                expect(env.sched.pending).toEqual([]);
            }
            return save(r, opts);
        };
        await firstStep(env, rec);
        expect(env.jobsOf(rec.id)).toEqual([{ chain: rec.chain, wake: false, in: 0 }]);
    });

    it('looks again once the call is over when the turn ahead ended between its read and its mark', async () => {
        const env = setup();
        const { ahead, rec } = await behind(env);
        const waitOn = env.store.waitOn.bind(env.store);
        env.store.waitOn = async (id, blockers) => {
            await env.store.remove(ahead.id);
            return waitOn(id, blockers);
        };
        await firstStep(env, rec);
        expect(env.jobsOf(rec.id)).toEqual([{ chain: rec.chain, wake: false, in: 0 }]);
    });
});
