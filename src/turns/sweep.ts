import { randomUUID } from 'crypto';
import { wakeWaiters } from './slots';
import { TickJob } from './tickPorts';
import { describe, TurnRecord, TurnStore } from './turnRecord';
import { turnsAhead } from './freshClaim';

/**
 * A turn whose record has not moved for this long has lost its chain (an app update
 * cancels every job; a process can die between two ticks). Running turns write at least
 * every HEARTBEAT_MS (tick.ts), so a live chain is never taken for a lost one.
 */
export const STALE_MS = 25_000;

export interface SweepPorts {
    store: TurnStore;
    schedule: (job: TickJob, delayMs: number) => Promise<string | void>;
    log: { info(message: string): void; debug?(message: string): void };
    now: () => number;
    /** max_parallel_turns, when configured: the sweep wakes waiters a lost wake-up left behind. */
    config?: { maxParallelTurns: number; turnTimeoutMinutes: number };
}

/**
 * Restarts turns whose chain was lost, each with a new chain (so a late tick of the old
 * chain ends itself). A turn waiting behind another of its session is not touched: the one
 * ahead wakes it, and if the one ahead is gone, the waiting turn is due and restarted.
 */
export async function sweepTurns(ports: SweepPorts): Promise<number> {
    const open = await ports.store.open();
    await ports.store.dropOrphanTickets?.(new Set(open.map((r) => r.id)));
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
        if (rec.submitting && rec.submitting.until > ports.now()) {
            // Being sent: its sender holds the result (and then writes the run), or its claim lapses
            // first. Restarting it now would save this list's copy over the sender's newer record.
            continue;
        }
        const lastMove = Math.max(rec.tickAt ?? 0, rec.startedAt ?? 0, rec.createdAt, rec.retryAt ?? 0);
        if (ports.now() - lastMove <= STALE_MS) {
            continue;
        }
        rec.chain = randomUUID();
        rec.tickAt = ports.now();
        await ports.store.save(rec);
        await ports.schedule({ turnId: rec.id, chain: rec.chain }, 0);
        ports.log.info(`Turn ${describe(rec)} had no tick for ${Math.round((ports.now() - lastMove) / 1000)} s; restarted.`);
        restarted++;
    }
    if (ports.config) {
        await wakeWaiters(open, { ...ports, config: ports.config });
    }
    return restarted;
}
