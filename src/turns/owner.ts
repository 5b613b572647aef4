import { PROCESS_ID } from './processId';

/**
 * Who may act on a turn now: one claim per turn, the process that holds it and until when.
 * What the holder is doing says how its claim binds the others:
 * - `sending`: it is handing the turn to Hermes and holds the request's result in its memory
 *   (v0.18.2 runs have no Idempotency-Key: a second request is a second run), so nobody else
 *   sends it until `until`. `fresh`: stored so by the event that got the message; that process
 *   decides on its next read whether it goes (freshClaim.ts). `at`: when the sending began
 *   (answeredBefore.ts looks for an answer posted from then on).
 * - `carrying`: a quick turn whose steps run in its message event (carryOn.ts); that call ends
 *   it, or hands it to its chain, by `until`. Other instances' ticks leave it alone until then.
 * - `streaming`: it reads the turn's stream (its run's events, its chat connection). Not
 *   exclusive: others' ticks may poll and finish the run; they defer to it for what only the
 *   stream carries while it renews the claim (`at`, every HEARTBEAT_MS).
 * - `finishing`: it posts the outcome under a lease (lease.ts, `token`), against other
 *   instances' ticks that may finish it at the same moment.
 * A claim that lapsed stays in the record, as who held the turn and since when: a sender or a
 * message event that died may have posted the answer without writing so.
 */
export interface Owner {
    process: string;
    until: number;
    as: 'sending' | 'carrying' | 'streaming' | 'finishing';
    at?: number;
    fresh?: boolean;
    token?: string;
}

/**
 * A process with no beat and no write of the turn for this long is gone: killed, restarted
 * by the engine, or its instance dead (beats.ts).
 */
export const GONE_MS = 10_000;
/** A stream's holder that has not renewed its claim for this long no longer speaks for the stream. */
const STREAM_SILENT_MS = 30_000;

type Claimed = { owner?: Owner | null };

/** The turn's claim when it is doing `as` (lapsed or not). A field cleared in a saved record reads back as null. */
export function claimAs(rec: Claimed, as: Owner['as']): Owner | undefined {
    return rec.owner?.as === as ? rec.owner : undefined;
}

/** A turn claimed for sending (lapsed or not): it may be at Hermes already. */
export function beingSent(rec: Claimed): boolean {
    return rec.owner?.as === 'sending';
}

/** This process sending a turn: others leave it alone while the request may still be on its way. */
export function sendingClaim(now: number, hermesTimeoutSeconds: number): Owner {
    return { as: 'sending', process: PROCESS_ID, until: now + hermesTimeoutSeconds * 1000 + 5_000, at: now };
}

/** `process` reads the turn's stream, as of `now`. */
export function streamingClaim(process: string, now: number): Owner {
    return { as: 'streaming', process, until: now + STREAM_SILENT_MS, at: now };
}

/**
 * The owner rule: the process whose claim on `rec` holds by its own terms now, if any. A
 * stream's holder holds a running turn however long ago it renewed; whether it is still there is
 * the take-over rule's question (`deserted`).
 */
export function holderOf(rec: Claimed & { phase: string }, now: number): string | undefined {
    const owner = rec.owner;
    if (!owner) {
        return undefined;
    }
    return owner.as === 'streaming' ? (rec.phase === 'running' ? owner.process : undefined) : owner.until > now ? owner.process : undefined;
}

/** When the turn was last written by whoever moved it (a stream's holder renews its claim with the turn's tick). */
export function lastMove(rec: Claimed & { tickAt?: number; startedAt?: number; createdAt: number; retryAt?: number }): number {
    const renewed = rec.owner?.as === 'streaming' ? (rec.owner.at ?? 0) : 0;
    return Math.max(rec.tickAt ?? 0, rec.startedAt ?? 0, rec.createdAt, rec.retryAt ?? 0, renewed);
}

/**
 * The take-over rule: `rec` is held by a process that is gone (no beat of its own and no write
 * of the turn for GONE_MS), or was carried by a message event whose process is gone. What it
 * claimed no longer holds, and the turn is taken over at once (sweep.ts, takeOverGone.ts)
 * instead of at the claim's end. A process with no beat at all is gone once its write is old
 * (an app update replaces every process); a live process never goes GONE_MS without a sign.
 */
export function deserted(rec: Claimed & Parameters<typeof lastMove>[0] & { phase: string }, beats: Map<string, number>, now: number): boolean {
    const moved = lastMove(rec);
    const gone = (p: string) => now - Math.max(beats.get(p) ?? 0, moved) > GONE_MS;
    const holder = holderOf(rec, now);
    if (holder) {
        return gone(holder);
    }
    // The message event that carried it died without handing it over: its claim lapsed, and
    // nothing moved the turn since (a turn the sweep restarted has moved after it).
    const carried = claimAs(rec, 'carrying');
    return carried !== undefined && moved <= carried.until && gone(carried.process);
}

/**
 * What a gone process claimed on `rec` no longer holds. A sending or carrying claim stays,
 * lapsed: its process may have posted the answer without writing so (submit.ts and finish.ts
 * look for it). A stream or a finishing lease is nobody's now: the next tick reads the run from Hermes.
 */
export function release(rec: Claimed, now: number): void {
    const owner = rec.owner;
    if (owner && (owner.as === 'sending' || owner.as === 'carrying')) {
        rec.owner = { as: owner.as, process: owner.process, until: Math.min(owner.until, now), at: owner.at };
    } else {
        rec.owner = undefined;
    }
}

/** Another live process holds this turn's stream (its run's events, its chat connection): what only the stream carries is there. */
export function streamHeldElsewhere(rec: Claimed & { startedAt?: number }, now: number): boolean {
    const owner = rec.owner;
    const stream = owner?.as === 'streaming' || (owner?.as === 'carrying' && owner.until > now);
    return Boolean(stream) && owner?.process !== PROCESS_ID && now - (owner?.at ?? rec.startedAt ?? 0) < STREAM_SILENT_MS;
}

/** Ends this process's claim of the kind `as` on `rec` (the claim of another kind, written over it since, stays). */
export function endClaim(rec: Claimed, as: Owner['as']): void {
    if (rec.owner?.as === as) {
        rec.owner = undefined;
    }
}
