import { randomUUID } from 'crypto';
import { wakeWaiters } from './slots';
import { TickJob } from './tickPorts';
import { describe, TurnRecord } from './turnRecord';
import { TurnStore } from './turnStore';
import { turnsAhead } from './freshClaim';
import { BeatStore, oldBeats } from './beats';
import { claimAs, deserted, lastMove, release } from './owner';

/**
 * A turn whose record has not moved for this long has lost its chain (an app update
 * cancels every job; a process can die between two ticks). Running turns write at least
 * every HEARTBEAT_MS (tickTimes.ts), so a live chain is never taken for a lost one.
 */
export const STALE_MS = 25_000;

export interface SweepPorts {
    store: TurnStore;
    schedule: (job: TickJob, delayMs: number) => Promise<string | void>;
    log: { info(message: string): void; debug?(message: string): void };
    now: () => number;
    /** The processes' beats: a turn whose owner is a gone process is taken over at once (owner.ts deserted). */
    beats?: BeatStore;
    /** max_parallel_turns, when configured: the sweep wakes waiters a lost wake-up left behind. */
    config?: { maxParallelTurns: number; turnTimeoutMinutes: number };
}

/**
 * Restarts turns whose chain was lost, each with a new chain (so a late tick of the old
 * chain ends itself). A turn waiting behind another of its session is not touched: the one
 * ahead wakes it, and if the one ahead is gone, the waiting turn is due and restarted.
 */
export async function sweepTurns(ports: SweepPorts): Promise<number> {
    // Read side by side: a beat written after the turns were read only makes its process look more alive.
    const [open, beats] = await Promise.all([ports.store.open(), ports.beats?.readBeats()]);
    const old = beats ? oldBeats(beats, open, ports.now()) : [];
    if (old.length > 0) {
        await ports.beats?.dropBeats(old);
    }
    const bySession = new Map<string, TurnRecord[]>();
    for (const rec of open) {
        bySession.set(rec.sessionKey, [...(bySession.get(rec.sessionKey) ?? []), rec]);
    }
    let restarted = 0;
    for (const rec of open) {
        if (rec.phase === 'queued' && turnsAhead(rec, bySession.get(rec.sessionKey) ?? [], ports.now()).length > 0) {
            continue;
        }
        if (rec.phase === 'queued' && rec.waiting === 'slot' && ports.config) {
            continue; // woken below, in arrival order, when a slot is free
        }
        if (beats && deserted(rec, beats, ports.now())) {
            // Its holders are gone: what they claimed is released, and the turn goes on in a new chain
            // (its run, if it has one, is followed; a request that may have reached Hermes is looked for first: submit.ts).
            const since = lastMove(rec);
            release(rec, ports.now());
            await restart(rec, ports, `its app process is gone (no sign of it for ${Math.round((ports.now() - since) / 1000)} s)`);
            restarted++;
            continue;
        }
        if ((claimAs(rec, 'sending')?.until ?? 0) > ports.now()) {
            // Being sent: its sender holds the result (and then writes the run), or its claim lapses
            // first. Restarting it now would save this list's copy over the sender's newer record.
            continue;
        }
        const moved = Math.max(rec.tickAt ?? 0, rec.startedAt ?? 0, rec.createdAt, rec.retryAt ?? 0);
        if (ports.now() - moved <= STALE_MS) {
            continue;
        }
        await restart(rec, ports, `had no tick for ${Math.round((ports.now() - moved) / 1000)} s`);
        restarted++;
    }
    if (ports.config) {
        await wakeWaiters(open, { ...ports, config: ports.config });
    }
    return restarted;
}

/** A new chain for `rec` (a late tick of the old chain ends itself). */
async function restart(rec: TurnRecord, ports: SweepPorts, why: string): Promise<void> {
    rec.chain = randomUUID();
    rec.tickAt = ports.now();
    await ports.store.save(rec);
    await ports.schedule({ turnId: rec.id, chain: rec.chain }, 0);
    ports.log.info(`Turn ${describe(rec)} ${why}; restarted.`);
}
