import { EngineTurns } from '../../../src/engine/adapters/engineTurns';
import { queuedTurn } from '../../support/turnPorts';
import { MemoryPersistence } from '../../support/memoryPersistence';
import { Receipts } from '../../../src/engine/adapters/receipts';

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

    it('lists return heads without the text (small however long the question); a read by id has it; a head saved from a list keeps it', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        const long = 'x'.repeat(50_000);
        await turns.save({ ...queuedTurn('BIG'), user: long, system: 'sys' });
        const [head] = await turns.open();
        expect(head.id).toBe('BIG');
        expect(head.user).toBeUndefined();
        expect(JSON.stringify(await turns.openInSession(head.sessionKey)).length).toBeLessThan(2_000);
        await turns.save({ ...head, tickAt: 5 });
        const whole = await turns.get('BIG');
        expect(whole?.user).toBe(long);
        expect(whole?.system).toBe('sys');
        expect(whole?.tickAt).toBe(5);
    });

    it('an unchanged payload is not written again; removal takes head and payload in one call', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        const rec = queuedTurn('P');
        await turns.save(rec);
        db.resetCalls();
        await turns.save({ ...rec, attempts: 1 });
        expect(db.calls).toEqual(['updateByAssociations']);
        await turns.save({ ...rec, attempts: 1, user: 'changed' });
        expect(db.calls).toEqual(['updateByAssociations', 'updateByAssociations', 'updateByAssociations']);

        db.resetCalls();
        await turns.remove('P', { stop: false, decisions: false });
        expect(db.calls).toEqual(['removeByAssociations']);
        expect(db.rows.size).toBe(0);
        db.resetCalls();
        // Stored: the head (its own ticket) and the payload, one call each.
        await turns.save(queuedTurn('NEW'));
        expect(db.calls).toEqual(['updateByAssociations', 'updateByAssociations']);
    });

    it('an open turn is its own receipt', async () => {
        const db = new MemoryPersistence();
        await new EngineTurns(db.read, db.write).save(queuedTurn('R1'));
        const receipts = new Receipts(db.read, db.write);
        expect(await receipts.taken('R1')).toBe(true);
        expect(await receipts.taken('R2')).toBe(false);
    });

    it('tickets: a small entry per open turn (its head), a sent or slot-holding turn counted as running, gone with the turn', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        const rec = { ...queuedTurn('TK'), user: 'x'.repeat(20_000) };
        await turns.save(rec);
        // Whose turn it is too: a follow-up joins only its own asker's turn (turns/followUps.ts).
        expect(await turns.tickets()).toEqual([
            { ticketOf: 'TK', id: 'TK', seq: rec.seq, chain: rec.chain, sessionKey: rec.sessionKey, askerId: 'U1', phase: 'queued' },
        ]);
        await turns.save({ ...rec, slot: { state: 'running', until: 10 } });
        const [ticket] = await turns.tickets();
        expect(ticket.phase).toBe('running');
        expect(JSON.stringify(ticket).length).toBeLessThan(400);
        // What the list reads is the head, without the text.
        expect(JSON.stringify(db.withAssociation('hermes-turn-tickets')).length).toBeLessThan(1_000);
        db.resetCalls();
        await turns.save({ ...rec, slot: { state: 'running', until: 10 }, tickAt: 99 });
        // The head only: it is the ticket.
        expect(db.calls).toEqual(['updateByAssociations']);
        await turns.remove('TK', { stop: false, decisions: false });
        expect(await turns.tickets()).toEqual([]);
    });

    it('a turn looking only for waiters to wake (inFlight) takes the tickets read already on its way', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        await turns.save(queuedTurn('A'));
        db.resetCalls();
        const [first, recent] = await Promise.all([turns.tickets(), turns.tickets({ inFlight: true })]);
        expect(db.calls).toEqual(['readByAssociations']);
        expect(recent).toBe(first);
        // Nothing on its way: a read of its own.
        await turns.tickets({ inFlight: true });
        expect(db.calls).toEqual(['readByAssociations', 'readByAssociations']);
    });

    it('turns of this process that ask for the tickets while a read is in flight share the next read and its answer, which nobody can change', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        await turns.save(queuedTurn('A'));
        await turns.save(queuedTurn('B'));
        db.resetCalls();
        const [first, second, third] = await Promise.all([turns.tickets(), turns.tickets(), new EngineTurns(db.read, db.write).tickets()]);
        // One read for the first, one shared by the two that asked while it was in flight.
        expect(db.calls).toEqual(['readByAssociations', 'readByAssociations']);
        expect([first, second, third].map((t) => t.map((x) => x.id).sort())).toEqual([
            ['A', 'B'],
            ['A', 'B'],
            ['A', 'B'],
        ]);
        expect(third).toBe(second);
        expect(() => {
            second[0].phase = 'done';
        }).toThrow(TypeError);
        expect(() => second.pop()).toThrow(TypeError);
        expect(third[0].phase).toBe('queued');
    });
    it("a woken turn is taken from its waker's read of the tickets with the text this process wrote: no read of its own", async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        await turns.save({ ...queuedTurn('WOKEN-1'), user: 'the question', system: 'the room', waiting: 'slot' });
        // Stored by this process without its text (a fresh claim): not known here, read instead.
        await turns.save({ ...queuedTurn('FRESH-1'), user: 'kept in the event' }, { textKept: true });
        await turns.save({ ...queuedTurn('RUNNING-1'), user: 'sent', system: 's', phase: 'running', runId: 'run_1' });
        const open = await turns.tickets();
        db.resetCalls();
        const taken = turns.fromTickets('WOKEN-1', open);
        expect(db.calls).toEqual([]);
        expect(taken).toEqual(await turns.get('WOKEN-1'));
        expect(taken?.user).toBe('the question');
        expect(taken?.waiting).toBe('slot');
        // Its own copy: changing it changes neither the read's heads nor the next turn taken from them.
        taken!.slot = { state: 'running', until: 1 };
        taken!.progress.push({ at: 1, text: 'x' } as never);
        expect(turns.fromTickets('WOKEN-1', open)?.slot).toBeUndefined();
        expect(turns.fromTickets('WOKEN-1', open)?.progress).toEqual([]);
        expect(turns.fromTickets('FRESH-1', open)).toBeUndefined();
        // Only a queued turn: a running one's outcome may have changed elsewhere.
        expect(turns.fromTickets('RUNNING-1', open)).toBeUndefined();
        // The waker passes on its read filtered (itself left out): the tickets still know their heads.
        expect(
            turns.fromTickets(
                'WOKEN-1',
                open.filter((t) => t.id !== 'RUNNING-1'),
            ),
        ).toEqual(await turns.get('WOKEN-1'));
        // A list that is not a tickets read of this store knows no heads.
        expect(turns.fromTickets('WOKEN-1', await turns.open())).toBeUndefined();
        expect(
            turns.fromTickets(
                'WOKEN-1',
                open.map((t) => ({ ...t })),
            ),
        ).toBeUndefined();
    });
});
