import { slotBlockers, wakeWaiters } from '../../../src/turns/slots';
import { TickJob } from '../../../src/turns/tickPorts';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { queuedTurn } from '../../support/turnPorts';

/**
 * max_parallel_turns, the waiting side: which running turns a waiter marks (so their end wakes
 * it), and which waiters a finishing turn (or the sweep) wakes. Records as another instance
 * wrote them (none of them started in this process).
 */
const NOW = 1_000_000;
const FAR = NOW + 600_000;

function ports(max: number) {
    const woken: Array<{ job: TickJob; delay: number }> = [];
    return {
        woken,
        config: { maxParallelTurns: max, turnTimeoutMinutes: 10 },
        schedule: async (job: TickJob, delay: number) => void woken.push({ job, delay }),
        log: {},
        now: () => NOW,
    };
}
const running = (id: string, seq: number, over: Partial<TurnRecord> = {}) =>
    queuedTurn(id, { seq, phase: 'running', slot: { state: 'running', until: FAR }, sessionKey: `k-${id}`, ...over });
const waiting = (id: string, seq: number, over: Partial<TurnRecord> = {}) =>
    queuedTurn(id, { seq, slot: { state: 'waiting', until: Number.MAX_SAFE_INTEGER }, sessionKey: `k-${id}`, ...over });

describe('slotBlockers: the running turns a waiter marks', () => {
    it('among the first max waiters: every running turn that may end without reading the tickets', () => {
        const open = [
            running('r1', 1),
            running('r2', 2, { waiting: true }),
            running('r3', 3, { alone: false }),
            running('r4', 4, { slot: { state: 'running', until: NOW - 1 } }),
            waiting('w1', 5),
            waiting('w2', 6),
        ];
        expect(slotBlockers(open[4], open, ports(2))).toEqual(['r1']);
        // The second waiter has one waiter ahead of it, still fewer than max: it marks them too.
        expect(slotBlockers(open[5], open, ports(2))).toEqual(['r1']);
    });

    it('a waiter with max waiters ahead of it marks none', () => {
        const open = [running('r1', 1), waiting('w1', 2), waiting('w2', 3), waiting('w3', 4)];
        expect(slotBlockers(open[3], open, ports(2))).toEqual([]);
        expect(slotBlockers(open[2], open, ports(2))).toEqual(['r1']);
        expect(slotBlockers(open[3], open, ports(3))).toEqual(['r1']);
    });

    it('a running turn not among the open records (read elsewhere) is marked', () => {
        const rec = waiting('w1', 5);
        expect(slotBlockers(rec, [running('r1', 1), rec], ports(1))).toEqual(['r1']);
    });
});

describe('wakeWaiters: the oldest waiters, as many as slots are free', () => {
    it('wakes in arrival order up to the free slots, each on its own chain with the read and its session', async () => {
        const p = ports(3);
        const open = [
            running('r1', 1),
            waiting('w3', 30),
            waiting('w1', 10),
            waiting('w2', 20),
            running('gone', 2, { slot: { state: 'running', until: NOW - 1 } }),
        ];
        expect(await wakeWaiters(open, p)).toBe(2);
        expect(p.woken.map((w) => [w.job.turnId, w.job.chain, w.job.sessionKey, w.delay])).toEqual([
            ['w1', 'chain-w1', 'k-w1', 0],
            ['w2', 'chain-w2', 'k-w2', 0],
        ]);
        expect(p.woken[0].job.open).toBe(open);
    });

    it('no free slot, none woken; a session held back is skipped; no bound, nothing to do', async () => {
        const full = ports(1);
        expect(await wakeWaiters([running('r1', 1), waiting('w1', 2)], full)).toBe(0);
        expect(full.woken).toEqual([]);
        const p = ports(2);
        const open = [waiting('w1', 1, { sessionKey: 'held' }), waiting('w2', 2), waiting('w3', 3)];
        expect(await wakeWaiters(open, p, 'held')).toBe(2);
        expect(p.woken.map((w) => w.job.turnId)).toEqual(['w2', 'w3']);
        const off = ports(0);
        expect(await wakeWaiters(open, off)).toBe(0);
        expect(off.woken).toEqual([]);
    });

    it("another instance's fresh claim does not take a free slot here (the woken turn claims again on its own read)", async () => {
        const p = ports(1);
        const fresh = running('f1', 1, { owner: { as: 'sending', fresh: true, process: 'another-process', until: FAR } });
        expect(await wakeWaiters([fresh, waiting('w1', 2)], p)).toBe(1);
        expect(p.woken.map((w) => w.job.turnId)).toEqual(['w1']);
    });
});
