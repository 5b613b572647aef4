import { BeatStore, oldBeats } from '../../../src/turns/beats';
import { deserted, endClaim, holderOf, Owner, release, streamHeldElsewhere } from '../../../src/turns/owner';
import { PROCESS_ID } from '../../../src/turns/processId';
import { ProcessBeat } from '../../../src/turns/processBeat';
import { sweepTurns } from '../../../src/turns/sweep';
import { TickJob } from '../../../src/turns/tickPorts';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { MemoryTurnStore, queuedTurn } from '../../support/turnPorts';

/**
 * A gone app process is known to be gone (issue 32 §1): each process with turns in hand beats
 * every 3 s; a turn whose claims are all held by processes silent for over 10 s (no beat, no
 * write of the turn) is taken over by the next sweep instead of waiting its claims out.
 */

const NOW = 1_800_000_000_000;

/** Beats as the app's persistence keeps them: newest per process. */
class MemoryBeats implements BeatStore {
    public readonly beats = new Map<string, number>();
    public writes: Array<[string, number]> = [];
    public dropped: string[] = [];
    public failNext = false;

    public async writeBeat(process: string, at: number): Promise<void> {
        if (this.failNext) {
            this.failNext = false;
            throw new Error('persistence unavailable');
        }
        this.writes.push([process, at]);
        this.beats.set(process, at);
    }

    public async readBeats(): Promise<Map<string, number>> {
        return new Map(this.beats);
    }

    public async dropBeats(processes: string[]): Promise<void> {
        this.dropped.push(...processes);
        processes.forEach((p) => this.beats.delete(p));
    }
}

const turn = (over: Partial<TurnRecord> = {}) => queuedTurn('T1', { createdAt: NOW - 60_000, ...over });

describe('who holds a turn (the owner rule)', () => {
    it('the owner whose claim lasts: its sender, the call carrying it, its finisher', () => {
        const claims: Array<[Owner, string]> = [
            [{ as: 'sending', process: 'sender', until: NOW + 1, at: NOW - 5_000 }, 'sender'],
            [{ as: 'carrying', process: 'carrier', until: NOW + 1, at: NOW - 1_000 }, 'carrier'],
            [{ as: 'finishing', token: 't', until: NOW + 1, process: 'finisher' }, 'finisher'],
        ];
        for (const [owner, holder] of claims) {
            expect(holderOf(turn({ phase: 'running', owner }), NOW)).toBe(holder);
        }
    });

    it('the process reading its stream while the turn runs, however long ago it renewed', () => {
        const owner: Owner = { as: 'streaming', process: 'streamer', until: NOW - 60_000, at: NOW - 90_000 };
        expect(holderOf(turn({ phase: 'running', owner }), NOW)).toBe('streamer');
    });

    it('nobody whose claim or lease has lapsed, or a stream of a turn not running', () => {
        const lapsed: Owner[] = [
            { as: 'sending', process: 'sender', until: NOW, at: NOW - 5_000 },
            { as: 'carrying', process: 'carrier', until: NOW - 1, at: NOW - 3_000 },
            { as: 'finishing', token: 't', until: NOW, process: 'finisher' },
            { as: 'streaming', process: 'streamer', until: NOW + 30_000, at: NOW },
        ];
        for (const owner of lapsed) {
            expect(holderOf(turn({ phase: 'queued', owner }), NOW)).toBeUndefined();
        }
        expect(holderOf(turn({ phase: 'queued' }), NOW)).toBeUndefined();
        expect(holderOf(turn({ phase: 'running', owner: null as unknown as Owner }), NOW)).toBeUndefined();
    });
});

describe('a deserted turn (the take-over rule)', () => {
    const fresh = (over: Partial<TurnRecord> = {}) =>
        turn({ tickAt: NOW - 10_001, owner: { as: 'sending', fresh: true, process: 'P', until: NOW + 120_000, at: NOW - 10_001 }, ...over });

    it('is held by a process with no beat and no write of it for over 10 s', () => {
        expect(deserted(fresh(), new Map(), NOW)).toBe(true);
        expect(deserted(fresh(), new Map([['P', NOW - 10_001]]), NOW)).toBe(true);
    });

    it('is not, while its holder beat within 10 s, or wrote the turn within 10 s', () => {
        expect(deserted(fresh(), new Map([['P', NOW - 10_000]]), NOW)).toBe(false);
        expect(deserted(fresh({ tickAt: NOW - 10_000 }), new Map(), NOW)).toBe(false);
        expect(deserted(fresh({ tickAt: undefined, createdAt: NOW - 3_000 }), new Map(), NOW)).toBe(false);
        const renewed: Owner = { as: 'streaming', process: 'P', until: NOW + 28_000, at: NOW - 2_000 };
        expect(deserted(fresh({ phase: 'running', tickAt: undefined, owner: renewed }), new Map(), NOW)).toBe(false);
    });

    it('is not while the process reading its stream lives', () => {
        const rec = fresh({ phase: 'running', owner: { as: 'streaming', process: 'Q', until: NOW + 19_999, at: NOW - 10_001 } });
        expect(deserted(rec, new Map([['Q', NOW - 1_000]]), NOW)).toBe(false);
        expect(deserted(rec, new Map([['Q', NOW - 11_000]]), NOW)).toBe(true);
    });

    it('is, when the message event that carried it died: its claim lapsed and nothing moved the turn since', () => {
        const carried = (over: Partial<TurnRecord> = {}) =>
            turn({ phase: 'running', tickAt: NOW - 12_000, owner: { as: 'carrying', process: 'P', until: NOW - 9_000, at: NOW - 12_000 }, ...over });
        expect(deserted(carried(), new Map(), NOW)).toBe(true);
        // Its process still beats: it is not gone.
        expect(deserted(carried(), new Map([['P', NOW - 2_000]]), NOW)).toBe(false);
        // Moved after the claim lapsed (the sweep restarted it, or a tick wrote it): the older rule applies.
        expect(deserted(carried({ tickAt: NOW - 8_000 }), new Map(), NOW)).toBe(false);
        // Lapsed less than 10 s after its last write.
        expect(deserted(carried({ tickAt: NOW - 9_500 }), new Map(), NOW)).toBe(false);
        // Lapsed at the very moment it was last written (the call's hand-over write that never came).
        expect(deserted(carried({ tickAt: NOW - 12_000, owner: { as: 'carrying', process: 'P', until: NOW - 12_000 } }), new Map(), NOW)).toBe(true);
        // Lapsed long before the turn last moved, itself over 10 s ago: not this rule's (the sweep's 25 s rule restarts it).
        expect(deserted(carried({ tickAt: NOW - 15_000, owner: { as: 'carrying', process: 'P', until: NOW - 20_000 } }), new Map(), NOW)).toBe(false);
    });

    it('is not when nobody holds it (the sweep’s older rule, 25 s without a tick, applies)', () => {
        expect(deserted(turn({ tickAt: NOW - 60_000 }), new Map(), NOW)).toBe(false);
        const lapsedSender: Owner = { as: 'sending', process: 'P', until: NOW - 1, at: NOW - 60_000 };
        expect(deserted(turn({ tickAt: NOW - 60_000, owner: lapsedSender }), new Map(), NOW)).toBe(false);
    });

    it('has its sending claim released: who sent it, and since when, stay (lapsed) for the look for an answer already posted', () => {
        const rec = fresh({ phase: 'running' });
        release(rec, NOW);
        expect(rec.owner).toEqual({ as: 'sending', process: 'P', until: NOW, at: NOW - 10_001 });
        expect(holderOf(rec, NOW)).toBeUndefined();
    });

    it('has its carrying claim released the same way, and no longer speaks for the stream', () => {
        const rec = turn({ phase: 'running', owner: { as: 'carrying', process: 'P', until: NOW + 3_000, at: NOW - 1_000 } });
        expect(streamHeldElsewhere(rec, NOW)).toBe(true);
        release(rec, NOW);
        expect(rec.owner).toEqual({ as: 'carrying', process: 'P', until: NOW, at: NOW - 1_000 });
        expect(holderOf(rec, NOW)).toBeUndefined();
        expect(streamHeldElsewhere(rec, NOW)).toBe(false);
    });

    it('has a finishing lease or a stream released to nobody: the next tick reads the run from Hermes', () => {
        const leased = turn({ phase: 'running', owner: { as: 'finishing', token: 't', until: NOW + 20_000, process: 'P' } });
        const streamed = turn({ phase: 'running', owner: { as: 'streaming', process: 'P', until: NOW + 25_000, at: NOW - 5_000 } });
        expect(streamHeldElsewhere(streamed, NOW)).toBe(true);
        release(leased, NOW);
        release(streamed, NOW);
        expect([leased.owner, streamed.owner]).toEqual([undefined, undefined]);
        expect(streamHeldElsewhere(streamed, NOW)).toBe(false);
    });

    it('is ended by its own process only as what it is: a claim of another kind written over it stays', () => {
        const rec = turn({ owner: { as: 'finishing', token: 't', process: 'Q', until: NOW + 1 } });
        endClaim(rec, 'sending');
        expect(rec.owner).toEqual({ as: 'finishing', token: 't', process: 'Q', until: NOW + 1 });
        endClaim(rec, 'finishing');
        expect(rec.owner).toBeUndefined();
    });

    it('keeps an already lapsed claim’s own end', () => {
        const rec = turn({ owner: { as: 'sending', process: 'P', until: NOW - 500, at: NOW - 9_000 } });
        release(rec, NOW);
        expect(rec.owner?.until).toBe(NOW - 500);
    });
});

describe('a stream held elsewhere', () => {
    it('is another process’s stream renewed within 30 s, or its message event carrying the turn', () => {
        const streaming = (process: string, at: number): Owner => ({ as: 'streaming', process, until: at + 30_000, at });
        expect(streamHeldElsewhere(turn({ phase: 'running', owner: streaming('Q', NOW - 29_999) }), NOW)).toBe(true);
        expect(streamHeldElsewhere(turn({ phase: 'running', owner: streaming('Q', NOW - 30_000) }), NOW)).toBe(false);
        expect(streamHeldElsewhere(turn({ phase: 'running', owner: streaming(PROCESS_ID, NOW) }), NOW)).toBe(false);
        expect(streamHeldElsewhere(turn({ phase: 'running', owner: { as: 'finishing', token: 't', process: 'Q', until: NOW + 1 } }), NOW)).toBe(false);
        expect(streamHeldElsewhere(turn({ phase: 'running', owner: { as: 'sending', process: 'Q', until: NOW + 1, at: NOW } }), NOW)).toBe(false);
        expect(streamHeldElsewhere(turn({ phase: 'running' }), NOW)).toBe(false);
    });
});

describe('old beats', () => {
    it('are those of processes silent for over an hour that hold nothing', () => {
        const beats = new Map([
            ['hour-old', NOW - 3_600_001],
            ['exactly-an-hour', NOW - 3_600_000],
            ['recent', NOW - 5_000],
            ['old-but-holding', NOW - 7_200_000],
        ]);
        const holding = turn({ phase: 'running', owner: { as: 'streaming', process: 'old-but-holding', until: NOW - 7_170_000, at: NOW - 7_200_000 } });
        expect(oldBeats(beats, [holding], NOW)).toEqual(['hour-old']);
    });
});

describe('this process’s beat', () => {
    function beating(inHand: { value: boolean }) {
        const timers: Array<{ fn: () => void; at: number }> = [];
        let time = NOW;
        const beat = new ProcessBeat(() => inHand.value, { now: () => time, setTimeout: (fn, ms) => timers.push({ fn, at: time + ms }) }, 'me');
        /** Runs the timers due by `ms` from now, in order. */
        const advance = async (ms: number) => {
            const end = time + ms;
            for (;;) {
                timers.sort((a, b) => a.at - b.at);
                const next = timers[0];
                if (!next || next.at > end) {
                    break;
                }
                timers.shift();
                time = next.at;
                next.fn();
                await Promise.resolve();
            }
            time = end;
        };
        return { beat, advance, pending: () => timers.length };
    }

    it('writes nothing at once (the turn’s own write is the first sign), then every 3 s while turns are in hand', async () => {
        const store = new MemoryBeats();
        const inHand = { value: true };
        const b = beating(inHand);
        b.beat.touch(store);
        expect(store.writes).toEqual([]);
        await b.advance(2_999);
        expect(store.writes).toEqual([]);
        await b.advance(1);
        expect(store.writes).toEqual([['me', NOW + 3_000]]);
        await b.advance(6_000);
        expect(store.writes.map(([, at]) => at)).toEqual([NOW + 3_000, NOW + 6_000, NOW + 9_000]);
    });

    it('stops when nothing is in hand, and starts again with the next turn work (one timer however often touched)', async () => {
        const store = new MemoryBeats();
        const inHand = { value: true };
        const b = beating(inHand);
        b.beat.touch(store);
        b.beat.touch(store);
        expect(b.pending()).toBe(1);
        await b.advance(3_000);
        inHand.value = false;
        await b.advance(30_000);
        expect(store.writes).toEqual([['me', NOW + 3_000]]);
        expect(b.pending()).toBe(0);
        inHand.value = true;
        b.beat.touch(store);
        await b.advance(3_000);
        expect(store.writes.map(([, at]) => at)).toEqual([NOW + 3_000, NOW + 36_000]);
    });

    it('goes on after a failed write', async () => {
        const store = new MemoryBeats();
        const b = beating({ value: true });
        b.beat.touch(store);
        store.failNext = true;
        await b.advance(6_000);
        expect(store.writes).toEqual([['me', NOW + 6_000]]);
    });
});

describe('the sweep and gone processes', () => {
    function sweepWith(beats: MemoryBeats) {
        const store = new MemoryTurnStore();
        const logs: string[] = [];
        const scheduled: TickJob[] = [];
        const run = () =>
            sweepTurns({
                store,
                beats,
                schedule: async (job: TickJob) => void scheduled.push(job),
                log: { info: (m: string) => logs.push(m) },
                now: () => NOW,
            });
        return { store, logs, scheduled, run };
    }

    it('takes over at once a turn whose sender is gone, though its sending claim lasts 2 more minutes', async () => {
        const beats = new MemoryBeats();
        beats.beats.set('dead', NOW - 12_000);
        const s = sweepWith(beats);
        const rec = queuedTurn('Q1', {
            createdAt: NOW - 12_000,
            tickAt: NOW - 12_000,
            owner: { as: 'sending', fresh: true, process: 'dead', until: NOW + 113_000, at: NOW - 12_000 },
        });
        await s.store.save(rec);
        expect(await s.run()).toBe(1);
        expect(s.logs).toEqual(['Turn message Q1 in room R1 its app process is gone (no sign of it for 12 s); restarted.']);
        const saved = await s.store.get('Q1');
        expect(saved).toMatchObject({ owner: { as: 'sending', process: 'dead', until: NOW, at: NOW - 12_000 }, tickAt: NOW });
        expect(saved?.owner?.fresh).toBeUndefined();
        expect(s.scheduled).toEqual([{ turnId: 'Q1', chain: saved?.chain }]);
        expect(saved?.chain).not.toBe('chain-Q1');
    });

    it('leaves a turn whose sender beats, and one whose sender wrote it 10 s ago', async () => {
        const beats = new MemoryBeats();
        beats.beats.set('alive', NOW - 2_000);
        const s = sweepWith(beats);
        await s.store.save(
            queuedTurn('Q1', {
                createdAt: NOW - 60_000,
                tickAt: NOW - 60_000,
                owner: { as: 'sending', process: 'alive', until: NOW + 60_000, at: NOW - 60_000 },
            }),
        );
        await s.store.save(
            queuedTurn('Q2', {
                createdAt: NOW - 10_000,
                tickAt: NOW - 10_000,
                owner: { as: 'sending', process: 'silent', until: NOW + 60_000, at: NOW - 10_000 },
            }),
        );
        expect(await s.run()).toBe(0);
        expect(s.logs).toEqual([]);
        expect(s.scheduled).toEqual([]);
    });

    it('drops the beats of processes gone for over an hour', async () => {
        const beats = new MemoryBeats();
        beats.beats.set('long-gone', NOW - 4_000_000);
        beats.beats.set('alive', NOW - 1_000);
        await sweepWith(beats).run();
        expect(beats.dropped).toEqual(['long-gone']);
        expect([...beats.beats.keys()]).toEqual(['alive']);
    });
});
