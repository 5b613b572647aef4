import { tick } from '../../src/turns/tick';
import { memoryTickPorts, queuedTurn, VirtualScheduler } from '../support/turnPorts';

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
});
