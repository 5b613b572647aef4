import { tick } from '../../../src/turns/tick';
import { memoryTickPorts, queuedTurn, VirtualScheduler } from '../../support/turnPorts';

/**
 * A job that finds its turn busy in this process keeps the chain alive only when no chain tick
 * waits already: a stray job (an old chain's, or one without a chain, as a second scheduler
 * firing or another instance's leftover) must never replace the live chain's next tick.
 */
describe('a tick that finds its turn busy', () => {
    it('leaves the live chain’s waiting tick alone when it is a stray job', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const rec = queuedTurn('T1');
        await store.save(rec);
        // The chain's tick ran: its next tick waits. Then a wake-up and a stray job without a chain at once: the stray one finds the turn busy.
        await tick({ turnId: 'T1', chain: rec.chain }, ports);
        await Promise.all([tick({ turnId: 'T1', chain: rec.chain, wake: true }, ports), tick({ turnId: 'T1' }, ports)]);
        const waiting = sched.pending.filter((p) => p.job.turnId === 'T1' && !p.job.wake);
        expect(waiting.map((p) => p.job.chain)).toEqual([rec.chain]);
    });

    it('schedules the chain’s tick again when none waits (its own job, busy with a wake-up)', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const rec = queuedTurn('T2');
        await store.save(rec);
        await Promise.all([tick({ turnId: 'T2', chain: rec.chain, wake: true }, ports), tick({ turnId: 'T2', chain: rec.chain }, ports)]);
        const waiting = sched.pending.filter((p) => p.job.turnId === 'T2' && !p.job.wake);
        expect(waiting.map((p) => p.job.chain)).toEqual([rec.chain]);
    });

    it('passes a job on when it came while a quick call only made the turn wait (the turn ahead ended meanwhile)', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const ahead = { ...queuedTurn('A1', { seq: 1 }), phase: 'running' as const, runId: 'run_a' };
        const rec = queuedTurn('W1', { seq: 2 });
        await store.save(ahead);
        await store.save(rec);
        // The waiter's event step reads the turn ahead and waits; while it saves that, the turn
        // ahead ends and wakes it: that job finds the waiter busy in its quick call.
        const save = store.save.bind(store);
        let woken: Promise<void> | undefined;
        store.save = async (r) => {
            if (r.id === 'W1' && !woken) {
                await store.remove('A1');
                woken = tick({ turnId: 'W1', chain: rec.chain }, ports);
            }
            return save(r);
        };
        await tick({ turnId: 'W1', chain: rec.chain, quick: true, record: structuredClone(rec) }, ports);
        await woken;
        expect((await store.get('W1'))?.waiting).toBe(true);
        // Not lost: the job comes again, now that the call is over.
        expect(sched.pending.filter((p) => p.job.turnId === 'W1' && !p.job.wake)).toHaveLength(1);
    });
});
