import { EngineTurns } from '../../src/engine/adapters/engineTurns';
import { queuedTurn } from '../support/turnPorts';
import { MemoryPersistence } from '../support/memoryPersistence';

/** The turn store on the engine's persistence, with Rocket.Chat's association matching. */
describe('EngineTurns', () => {
    it('a stop asked for just as its turn ended is removed by the sweep; a live turn keeps its stop (defect 13)', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        await turns.save(queuedTurn('LIVE'));
        await turns.requestStop('LIVE', 'alice');
        // The turn ended and was removed; the stop arrived a moment later.
        await turns.requestStop('GONE', 'bob');
        await turns.removeOrphanStops(Date.now());
        expect(await turns.stopRequest('LIVE')).toBe('alice');
        expect(await turns.stopRequest('GONE')).toBeUndefined();
    });

    it('decisions are records of their own, removed with their turn', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        await turns.save(queuedTurn('T'));
        await turns.decide('T', { messageId: 'm1', decided: { by: 'alice', choice: 'once' } });
        await turns.decide('T', { messageId: 'm2', timedOut: true });
        expect((await turns.decision('T', 'm1'))?.decided?.choice).toBe('once');
        expect((await turns.decision('T', 'm2'))?.timedOut).toBe(true);
        await turns.remove('T');
        expect(await turns.decision('T', 'm1')).toBeUndefined();
        expect(await turns.get('T')).toBeUndefined();
    });
});
