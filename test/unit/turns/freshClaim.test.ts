import { EngineTurns } from '../../../src/engine/adapters/engineTurns';
import { claimFresh, FRESH_RELOOK_MS, takeFresh, turnsAhead } from '../../../src/turns/freshClaim';
import { PROCESS_ID } from '../../../src/turns/processId';
import { entriesOf, mayStart } from '../../../src/turns/slots';
import { tick } from '../../../src/turns/tick';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { noteStart } from '../../../src/turns/waiters';
import { MemoryPersistence } from '../../support/memoryPersistence';
import { memoryTickPorts, queuedTurn, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

const NOW = 1_000_000;
const CLAIM = { maxParallelTurns: 8, turnTimeoutMinutes: 30, hermesTimeoutSeconds: 120 };

/** A turn another instance stored fresh (its process is not this one). */
function freshElsewhere(id: string, seq: number, over: Partial<TurnRecord> = {}): TurnRecord {
    return {
        ...queuedTurn(id, { seq, ...over }),
        owner: { as: 'sending', fresh: true, process: 'another-instance', until: NOW + 60_000, at: NOW },
        slot: { state: 'running', until: NOW + 3_600_000 },
    };
}

describe('a fresh claim (stored claimed, decided on the next read)', () => {
    it('in a session: another instance’s is ahead of every turn while it lasts; this process’s own only once it went', () => {
        const mine = queuedTurn('ME', { seq: 1 });
        const later = freshElsewhere('OTHER', 2);
        expect(turnsAhead(mine, [mine, later], NOW).map((r) => r.id)).toEqual(['OTHER']);
        // Its claim lapsed (its process died): an ordinary queued turn after this one.
        expect(turnsAhead(mine, [mine, later], NOW + 61_000)).toEqual([]);

        const own = queuedTurn('OWN', { seq: 5 });
        claimFresh(own, CLAIM, NOW);
        const earlier = queuedTurn('EARLY', { seq: 4 });
        // Undecided, it is a queued turn after the earlier one.
        expect(turnsAhead(earlier, [earlier, own], NOW)).toEqual([]);
        // Gone ahead (its start noted here): running, so ahead of everything.
        noteStart('OWN', [own]);
        expect(turnsAhead(earlier, [earlier, own], NOW).map((r) => r.id)).toEqual(['OWN']);
        expect(takeFresh(own)).toBe(true);
        expect(own.owner?.fresh).toBeUndefined();
        expect(own.owner?.as).toBe('sending');
        // Taken once; another process's claim is never this process's to take.
        const theirs = freshElsewhere('THEIRS', 6);
        expect(takeFresh(theirs)).toBe(false);
    });

    it('for max_parallel_turns: another instance’s holds a slot against the turns after it only; this process’s own undecided one none', () => {
        const others = [freshElsewhere('F1', 1), freshElsewhere('F2', 2)];
        const entries = entriesOf(others, NOW);
        expect(entries.map((e) => [e.id, e.fresh])).toEqual([
            ['F1', true],
            ['F2', true],
        ]);
        // With one slot: a turn after both waits; one before both goes (they counted it when they went).
        expect(mayStart({ id: 'LATE', seq: 3 }, entries, 2, NOW)).toBe(false);
        expect(mayStart({ id: 'LATE', seq: 3 }, entries, 3, NOW)).toBe(true);
        expect(mayStart({ id: 'EARLY', seq: 0 }, entries, 1, NOW)).toBe(true);
        const own = queuedTurn('OWNSLOT', { seq: 1 });
        claimFresh(own, CLAIM, NOW);
        expect(entriesOf([own], NOW)).toEqual([]);
    });

    it('a fresh turn that may go is sent without writing its record again', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const rec = queuedTurn('GO', { seq: 1 });
        claimFresh(rec, ports.config, ports.now());
        await store.save(rec);
        await tick({ turnId: 'GO', chain: rec.chain, record: JSON.parse(JSON.stringify(rec)) as TurnRecord }, ports);
        expect(ports.live.submission('GO')).toBeTruthy();
        expect(store.saves).toBe(1);
        const stored = await store.get('GO');
        expect(stored?.owner?.fresh).toBe(true);
        expect(stored?.owner?.as).toBe('sending');
        expect(stored?.owner?.process).toBe(PROCESS_ID);
    });

    it('a fresh turn that must wait takes its claim back in the save that says so, and asks for no extra look', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const ahead = { ...queuedTurn('RUNNING', { seq: 1 }), phase: 'running' as const, runId: 'run_1' };
        await store.save(ahead);
        const rec = queuedTurn('BEHIND', { seq: 2, sessionKey: ahead.sessionKey });
        claimFresh(rec, ports.config, ports.now());
        await store.save(rec);
        await tick({ turnId: 'BEHIND', chain: rec.chain, record: JSON.parse(JSON.stringify(rec)) as TurnRecord }, ports);
        const stored = await store.get('BEHIND');
        expect(stored?.waiting).toBe(true);
        expect(stored?.owner).toBeUndefined();
        expect(stored?.slot).toBeUndefined();
        expect(ports.live.submission('BEHIND')).toBeUndefined();
        // Its own claim taken back costs this process nothing more: no look again scheduled (the turn ahead wakes it).
        expect(sched.pending.filter((p) => p.job.turnId === 'BEHIND')).toEqual([]);
    });

    it('a fresh turn that must wait reads no stop; a stop asked for meanwhile is not lost: its wake-up brings the turn back to see it', async () => {
        const sched = new VirtualScheduler();
        const { ports, store, chat } = memoryTickPorts({ sched });
        const ahead = { ...queuedTurn('AHEAD-S', { seq: 1 }), phase: 'running' as const, runId: 'run_1' };
        await store.save(ahead);
        const rec = queuedTurn('BEHIND-S', { seq: 2, sessionKey: ahead.sessionKey });
        claimFresh(rec, ports.config, ports.now());
        await store.save(rec);
        let stopReads = 0;
        const readStop = store.stopRequest.bind(store);
        store.stopRequest = (id: string) => {
            stopReads += 1;
            return readStop(id);
        };
        // /hermes stop lands while the first step is deciding to wait: the stop is written, and its
        // wake-up job runs here while the step still holds the turn.
        let woken: Promise<void> | undefined;
        const save = store.save.bind(store);
        store.save = async (r, opts) => {
            if (r.id === 'BEHIND-S' && r.waiting && !woken) {
                await store.requestStop('BEHIND-S', 'alice');
                woken = tick({ turnId: 'BEHIND-S', chain: rec.chain, wake: true }, ports);
            }
            return save(r, opts);
        };
        await tick({ turnId: 'BEHIND-S', chain: rec.chain, record: JSON.parse(JSON.stringify(rec)) as TurnRecord }, ports);
        await woken;
        expect(stopReads).toBe(0);
        expect((await store.get('BEHIND-S'))?.waiting).toBe(true);
        // The wake-up that found it busy is passed on when the step ends: that tick reads the stop.
        await sched.runUntil(sched.time + 1_000, (job) => tick(job, ports));
        expect(stopReads).toBe(1);
        expect(await store.get('BEHIND-S')).toBeUndefined();
        expect(chat.messages.some((m) => m.text.includes('alice'))).toBe(true);
    });

    it('two instances’ fresh turns of one session that see each other both wait, and the earlier goes on its next look', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const now = ports.now();
        const mine = queuedTurn('MINE', { seq: 1 });
        claimFresh(mine, ports.config, now);
        await store.save(mine);
        const theirs = {
            ...freshElsewhere('THEIRS', 2, { sessionKey: mine.sessionKey }),
            owner: { as: 'sending' as const, fresh: true, process: 'another-instance', until: now + 60_000, at: now },
        };
        await store.save(theirs);
        await tick({ turnId: 'MINE', chain: mine.chain, record: JSON.parse(JSON.stringify(mine)) as TurnRecord }, ports);
        expect((await store.get('MINE'))?.waiting).toBe(true);
        expect([...(store.marks.get('THEIRS') ?? [])]).toEqual(['MINE']);
        // A claim may be taken back instead of ending: it looks again a second later.
        const relook = sched.pending.filter((p) => p.job.turnId === 'MINE' && !p.job.wake);
        expect(relook.map((p) => p.at - now)).toEqual([FRESH_RELOOK_MS]);
        // The other instance saw this one too (earlier, queued) and took its claim back.
        await store.save({ ...theirs, owner: undefined, waiting: true, slot: undefined });
        await tick(relook[0].job, ports);
        expect(ports.live.submission('MINE')).toBeTruthy();
    });

    it('a waiter whose fresh blocker took its claim back by the time of its mark looks again at once', async () => {
        const sched = new VirtualScheduler();
        const { ports, store } = memoryTickPorts({ sched });
        const now = ports.now();
        const theirs = {
            ...freshElsewhere('T2', 1),
            owner: { as: 'sending' as const, fresh: true, process: 'another-instance', until: now + 60_000, at: now },
        };
        await store.save(theirs);
        const next = queuedTurn('N2', { seq: 2, sessionKey: theirs.sessionKey });
        await store.save(next);
        const waitOn = store.waitOn.bind(store);
        store.waitOn = async (waiter, blockers) => {
            // Taken back between this turn's read and its mark.
            await store.save({ ...theirs, owner: undefined, waiting: true });
            return waitOn(waiter, blockers);
        };
        await tick({ turnId: 'N2', chain: next.chain }, ports);
        expect(sched.pending.filter((p) => p.job.turnId === 'N2' && !p.job.wake).map((p) => p.at - now)).toEqual([0]);
    });
});

describe('a fresh claim in the engine store', () => {
    it('is a head and its payload as any turn; its ticket shows it queued and whose claim it is, never its text', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        const rec = queuedTurn('FRESHREC', { user: 'the question' });
        claimFresh(rec, { ...TEST_CONFIG }, NOW);
        await turns.save(rec);
        expect(db.withAssociation('hermes-turn-payload:')).toEqual([expect.objectContaining({ user: 'the question' })]);
        const [ticket] = await turns.tickets();
        expect(ticket.phase).toBe('queued');
        expect(ticket.owner?.fresh).toBe(true);
        expect(ticket.owner?.as).toBe('sending');
        expect(ticket.owner?.process).toBe(PROCESS_ID);
        expect((ticket as { user?: string }).user).toBeUndefined();
        // Saved again (taken back, waiting): an ordinary turn, running or not by its own fields.
        const read = (await turns.get('FRESHREC')) as TurnRecord;
        expect(read.user).toBe('the question');
        read.owner = undefined;
        read.waiting = true;
        await turns.save(read);
        const [after] = await turns.tickets();
        expect(after.owner).toBeUndefined();
        // Any other head being sent counts as running, as before.
        await turns.save({ ...queuedTurn('SENDING'), owner: { as: 'sending', process: 'p', until: NOW + 1_000, at: NOW } });
        expect((await turns.tickets()).find((t) => t.id === 'SENDING')?.phase).toBe('running');
    });

    it('a blocker waiting by the time of the mark counts as gone (its mark dropped)', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        await turns.save(queuedTurn('BL'));
        await turns.save({ ...queuedTurn('BW'), waiting: true });
        expect(await turns.waitOn('WT', ['BL', 'BW'])).toEqual(['BW']);
        expect(db.withAssociation('hermes-turn-waiter:BL:')).toHaveLength(1);
        expect(db.withAssociation('hermes-turn-waiter:BW:')).toEqual([]);
    });
});
