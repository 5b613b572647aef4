import { EngineTurns } from '../../../src/engine/adapters/engineTurns';
import { finish } from '../../../src/turns/finish';
import { tick } from '../../../src/turns/tick';
import { mayEndUnread, mustWake, noteStart, noteWaitedOn, startedAlone, startedHere } from '../../../src/turns/waiters';
import { MemoryPersistence } from '../../support/memoryPersistence';
import { processMemory } from '../../../src/turns/processMemory';
import { memoryTickPorts, queuedTurn, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

/** A finishing turn reads the tickets only when somebody may wait for it (turns/waiters.ts). */
describe('who waits for a finishing turn', () => {
    it('a turn that started alone and was marked by nobody has nobody to wake; anything else reads', () => {
        noteStart('A', [
            { id: 'A', phase: 'queued' },
            { id: 'B', phase: 'running' },
        ]);
        expect(mustWake('A', { waiters: 0 })).toBe(false);
        // Asked once: the process forgets it.
        expect(mustWake('A', { waiters: 0 })).toBe(true);
        noteStart('C', [{ id: 'C', phase: 'queued' }]);
        expect(mustWake('C', { waiters: 1 })).toBe(true);
        noteStart('D', [{ id: 'D', phase: 'queued' }]);
        // The store keeps no marks.
        expect(mustWake('D', undefined)).toBe(true);
        noteStart('E', [
            { id: 'E', phase: 'queued' },
            { id: 'F', phase: 'queued' },
        ]);
        expect(mustWake('E', { waiters: 0 })).toBe(true);
        // Not started in this process (another instance, a restart).
        expect(mustWake('G', { waiters: 0 })).toBe(true);
    });

    it('a slot waiter of this process makes the turns it marks, started here alone, wake it when their run ends', () => {
        noteStart('N1', [{ id: 'N1', phase: 'queued' }]);
        noteStart('N2', [
            { id: 'N2', phase: 'queued' },
            { id: 'N3', phase: 'queued' },
        ]);
        noteWaitedOn(['N1', 'N2', 'elsewhere']);
        expect(startedAlone('N1')).toBe(false);
        expect(startedAlone('N2')).toBe(false);
        // Another instance's turn stays unknown here (its removal's marks tell it).
        expect(startedHere('elsewhere')).toBe(false);
        expect(mustWake('N1', { waiters: 0 })).toBe(true);
    });

    it('remembers the starts of at most 2,000 turns', () => {
        const size = () => processMemory.sizes()['waiters.started'];
        const filled: string[] = [];
        for (let i = 0; i < 3_000 && size() < 2_000; i++) {
            filled.push(`fill-${i}`);
            noteStart(`fill-${i}`, [{ id: `fill-${i}`, phase: 'queued' }]);
        }
        expect(size()).toBe(2_000);
        noteStart('one-more', [{ id: 'one-more', phase: 'queued' }]);
        expect(size()).toBe(2_000);
        expect(startedHere('one-more')).toBe(true);
        for (const id of [...filled, 'one-more']) {
            mustWake(id, { waiters: 0 });
        }
    });

    it('in the engine store: a mark rides on the turn it waits for, its removal returns it, a read by id ignores it, a late mark is dropped', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        await turns.save(queuedTurn('R'));
        await turns.save(queuedTurn('W'));
        expect(await turns.waitOn('W', ['R', 'GONE'])).toEqual(['GONE']);
        expect(db.withAssociation('hermes-turn-waiter:')).toHaveLength(1);
        expect((await turns.get('R'))?.id).toBe('R');
        expect(await turns.tickets()).toHaveLength(2);
        expect(await turns.remove('R', { stop: false, decisions: false })).toEqual({ waiters: 1 });
        expect(await turns.remove('W', { stop: false, decisions: false })).toEqual({ waiters: 0 });
        expect(db.rows.size).toBe(0);
        expect(db.withAssociation('hermes-turn:GONE')).toEqual([]);
    });

    it('a quick turn nobody waits for ends without reading the open turns; one with a waiter of its session wakes it', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        let reads = 0;
        const open = store.open.bind(store);
        store.open = async () => {
            reads++;
            return open();
        };
        const alone = { ...queuedTurn('ALONE'), phase: 'running' as const, runId: 'run_1', transport: 'runs' as const };
        await store.save(alone);
        noteStart('ALONE', [alone]);
        await finish(alone, { kind: 'answer', text: 'hi' }, ports);
        expect(reads).toBe(0);

        const ahead = { ...queuedTurn('AHEAD', { seq: 1 }), phase: 'running' as const, runId: 'run_2', transport: 'runs' as const };
        await store.save(ahead);
        noteStart('AHEAD', [ahead]);
        // The next question of the session arrives while it runs: it waits, and marks the turn ahead.
        const next = queuedTurn('NEXT', { seq: 2, sessionKey: ahead.sessionKey });
        await store.save(next);
        await tick({ turnId: 'NEXT', chain: next.chain }, ports);
        expect((await store.get('NEXT'))?.waiting).toBe(true);
        expect([...(store.marks.get('AHEAD') ?? [])]).toEqual(['NEXT']);
        sched.pending.splice(0);
        reads = 0;
        await finish(ahead, { kind: 'answer', text: 'hi' }, ports);
        expect(reads).toBe(1);
        expect(sched.pending.map((p) => p.job.turnId)).toEqual(['NEXT']);
    });

    it('a waiter marks only turns that may end without reading: not one that saw others at its start, not one waiting itself', async () => {
        expect(mayEndUnread({ id: 'x1', alone: false })).toBe(false);
        expect(mayEndUnread({ id: 'x2', alone: true, waiting: true })).toBe(false);
        expect(mayEndUnread({ id: 'x3', alone: true })).toBe(true);
        expect(mayEndUnread({ id: 'x4' })).toBe(true);
        expect(mayEndUnread(undefined)).toBe(true);
        // A turn this process started is known whatever its ticket shows yet.
        noteStart('x5', [
            { id: 'x5', phase: 'queued' },
            { id: 'x6', phase: 'queued' },
        ]);
        expect(mayEndUnread({ id: 'x5' })).toBe(false);
        noteStart('x7', [{ id: 'x7', phase: 'queued' }]);
        expect(mayEndUnread({ id: 'x7', alone: false })).toBe(true);
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const busy = { ...queuedTurn('BUSY', { seq: 1 }), phase: 'running' as const, runId: 'run_4', alone: false };
        const next = queuedTurn('N3', { seq: 2, sessionKey: busy.sessionKey });
        await store.save(busy);
        await store.save(next);
        await tick({ turnId: 'N3', chain: next.chain }, ports);
        expect((await store.get('N3'))?.waiting).toBe(true);
        expect(store.marks.size).toBe(0);
    });

    it('a turn records whether it started alone (its waiters read it)', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const first = queuedTurn('S1', { seq: 1 });
        await store.save(first);
        await tick({ turnId: 'S1', chain: first.chain }, ports);
        expect((await store.get('S1'))?.alone).toBe(true);
        const other = queuedTurn('S2', { seq: 2, sessionKey: 'another-session' });
        const third = queuedTurn('S3', { seq: 3, sessionKey: 'a-third-session' });
        await store.save(other);
        await store.save(third);
        await tick({ turnId: 'S2', chain: other.chain }, ports);
        expect((await store.get('S2'))?.alone).toBe(false);
    });

    it('a waiter whose turn ahead ended between its read and its mark looks again at once', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const ahead = { ...queuedTurn('A2', { seq: 1 }), phase: 'running' as const, runId: 'run_3' };
        const next = queuedTurn('N2', { seq: 2, sessionKey: ahead.sessionKey });
        await store.save(ahead);
        await store.save(next);
        const waitOn = store.waitOn.bind(store);
        store.waitOn = async (waiter, blockers) => {
            await store.remove('A2');
            return waitOn(waiter, blockers);
        };
        await tick({ turnId: 'N2', chain: next.chain }, ports);
        expect(sched.pending.filter((p) => p.job.turnId === 'N2' && !p.job.wake)).toHaveLength(1);
        expect(store.marks.get('A2')?.size ?? 0).toBe(0);
    });

    it('a woken turn claims on the tickets its waker read (used once) and reads none itself', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched, config: { ...TEST_CONFIG, maxParallelTurns: 1 } });
        const waiter = { ...queuedTurn('W2', { seq: 2 }), waiting: 'slot' as const, slot: { state: 'waiting' as const, until: Number.MAX_SAFE_INTEGER } };
        await store.save(waiter);
        let reads = 0;
        const open = store.open.bind(store);
        store.open = async () => {
            reads++;
            return open();
        };
        const job = { turnId: 'W2', chain: waiter.chain, open: [waiter] };
        await tick(job, ports);
        expect(reads).toBe(0);
        expect(job.open).toBeUndefined();
        expect((await store.get('W2'))?.slot?.state).toBe('running');
    });
});
