import { sweepTurns } from '../../../src/turns/sweep';
import { TickJob } from '../../../src/turns/tickPorts';
import { heldSlot, TurnRecord } from '../../../src/turns/turnRecord';
import { sendingClaim } from '../../../src/turns/owner';
import { PROCESS_ID } from '../../../src/turns/processId';
import { MemoryTurnStore, queuedTurn, VirtualScheduler } from '../../support/turnPorts';

/**
 * The sweep (sweep.ts) and the claims it reads on a turn's record (turnRecord.ts, owner.ts): turns
 * waiting for a slot under max_parallel_turns are woken in their own chain instead of
 * restarted, every other stale turn is restarted, and a sending claim lasts until its
 * `until` and no longer. How long a sending claim and a held slot last.
 */

let n = 0;
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;

const CONFIG = { maxParallelTurns: 2, turnTimeoutMinutes: 30 };

function sweep(config?: typeof CONFIG) {
    const sched = new VirtualScheduler();
    const store = new MemoryTurnStore();
    const logs: string[] = [];
    const scheduled: Array<{ job: TickJob; delay: number }> = [];
    const ports = {
        store,
        schedule: async (job: TickJob, delay: number) => void scheduled.push({ job, delay }),
        log: { info: (m: string) => logs.push(m) },
        now: () => sched.time,
        config,
    };
    /** A turn that has not moved for a minute. */
    const stale = (over: Partial<TurnRecord> = {}) => queuedTurn(uid('W'), { createdAt: sched.time - 60_000, sessionKey: uid('session'), ...over });
    return { sched, store, logs, scheduled, stale, run: () => sweepTurns(ports) };
}

describe('the sweep with max_parallel_turns configured', () => {
    it('wakes a stale turn waiting for a slot in its own chain, without restarting it', async () => {
        const s = sweep(CONFIG);
        const waiter = s.stale({ waiting: 'slot', slot: { state: 'waiting', until: s.sched.time + 600_000 } });
        await s.store.save(waiter);
        expect(await s.run()).toBe(0);
        expect(s.logs).toEqual([]);
        expect(s.scheduled.map((x) => [x.job.turnId, x.job.chain, x.delay])).toEqual([[waiter.id, waiter.chain, 0]]);
        expect((await s.store.get(waiter.id))?.chain).toBe(waiter.chain);
    });

    it.each([
        ['a queued turn not waiting', {}],
        ['a queued turn waiting behind its session', { waiting: true }],
        ['a running turn whose record still says it waited for a slot', { phase: 'running' as const, waiting: 'slot' as const }],
        ['a running turn', { phase: 'running' as const }],
    ])('restarts %s that went stale', async (_what, over) => {
        const s = sweep(CONFIG);
        const rec = s.stale(over);
        await s.store.save(rec);
        expect(await s.run()).toBe(1);
        expect(s.logs).toEqual([`Turn message ${rec.id} in room R1 had no tick for 60 s; restarted.`]);
        expect((await s.store.get(rec.id))?.chain).not.toBe(rec.chain);
    });
});

describe('the sweep without max_parallel_turns', () => {
    it('restarts a stale turn waiting for a slot like any other (nothing else would wake it)', async () => {
        const s = sweep();
        const waiter = s.stale({ waiting: 'slot' });
        await s.store.save(waiter);
        expect(await s.run()).toBe(1);
        expect(s.logs).toEqual([`Turn message ${waiter.id} in room R1 had no tick for 60 s; restarted.`]);
    });
});

describe("a stale turn's sending claim", () => {
    it('keeps the sweep away before its end, and no longer once its end is reached', async () => {
        const s = sweep();
        const rec = s.stale({ owner: { as: 'sending', process: 'another-process', until: s.sched.time + 1, at: s.sched.time - 60_000 } });
        await s.store.save(rec);
        expect(await s.run()).toBe(0);
        s.sched.time += 1;
        expect(await s.run()).toBe(1);
        expect(s.logs).toEqual([`Turn message ${rec.id} in room R1 had no tick for 60 s; restarted.`]);
    });
});

describe('how long claims last', () => {
    it('a sending claim: the Hermes timeout and 5 s more, from when it was made, by this process', () => {
        expect(sendingClaim(1_000_000, 120)).toEqual({ as: 'sending', process: PROCESS_ID, until: 1_125_000, at: 1_000_000 });
        expect(sendingClaim(2_000_000, 30)).toEqual({ as: 'sending', process: PROCESS_ID, until: 2_035_000, at: 2_000_000 });
    });

    it("a held slot: the turn's timeout and a minute more", () => {
        expect(heldSlot(1_000_000, 30)).toEqual({ state: 'running', until: 2_860_000 });
        expect(heldSlot(5_000_000, 2)).toEqual({ state: 'running', until: 5_180_000 });
    });
});
