import { TurnRecord } from './turnRecord';

/**
 * Whether the app process that holds a turn is still there. A process with turns in hand (a
 * tick working, a request on its way to Hermes, a stream open) writes its beat every BEAT_MS;
 * a process whose last sign of life (its beat, or its last write of the turn) is older than
 * GONE_MS is gone: killed, restarted by the engine, or its instance dead. What a gone process
 * claimed on a turn no longer holds, and the sweep takes the turn over at once instead of
 * waiting the claims out (a sending claim lasts hermes_timeout_seconds: a restart in a turn's
 * first second cost two minutes). A live process never goes GONE_MS without a sign, so its
 * turns are never taken from it.
 *
 * Cost: no write for a turn that ends within BEAT_MS (its claim's own write is its sign of life);
 * one write per BEAT_MS per process while it has turns in hand; one read per sweep.
 */
export const BEAT_MS = 3_000;
export const GONE_MS = 10_000;

/** Where beats live (the app's persistence): each process's newest beat. */
export interface BeatStore {
    writeBeat(process: string, at: number): Promise<void>;
    /** Each process's newest beat (ms). */
    readBeats(): Promise<Map<string, number>>;
    dropBeats(processes: string[]): Promise<void>;
}

/** How long a beat of a process that stopped beating is kept (then dropped by the sweep). */
const BEAT_KEPT_MS = 60 * 60_000;

/**
 * The processes whose claims on `rec` hold by their own terms now: its sender, the call
 * carrying it, its finisher, the process holding its stream.
 */
export function claimHolders(rec: Pick<TurnRecord, 'submitting' | 'carried' | 'lease' | 'liveProcess' | 'phase'>, now: number): string[] {
    const holders: string[] = [];
    if (rec.submitting && rec.submitting.until > now) {
        holders.push(rec.submitting.process);
    }
    if (rec.carried && rec.carried.until > now) {
        holders.push(rec.carried.process);
    }
    if (rec.lease && rec.lease.until > now) {
        holders.push(rec.lease.process);
    }
    if (rec.liveProcess && rec.phase === 'running') {
        holders.push(rec.liveProcess);
    }
    return holders;
}

/** When the turn was last written by whoever moved it. */
export function lastMove(rec: Pick<TurnRecord, 'tickAt' | 'startedAt' | 'createdAt' | 'retryAt' | 'liveAt'>): number {
    return Math.max(rec.tickAt ?? 0, rec.startedAt ?? 0, rec.createdAt, rec.retryAt ?? 0, rec.liveAt ?? 0);
}

/**
 * Whether `rec` is held, and only by processes that are gone: no beat of theirs and no write of
 * the turn for GONE_MS; or was carried by a message event whose process is gone. A process with no
 * beat at all is gone once its write is old (an app update replaces every process).
 */
export function deserted(rec: TurnRecord, beats: Map<string, number>, now: number): boolean {
    const holders = claimHolders(rec, now);
    const moved = lastMove(rec);
    const gone = (p: string) => now - Math.max(beats.get(p) ?? 0, moved) > GONE_MS;
    if (holders.length > 0) {
        return holders.every(gone);
    }
    // The message event that carried it died without handing it over: its claim lapsed, and
    // nothing moved the turn since (a turn the sweep restarted has moved after it).
    return Boolean(rec.carried) && moved <= (rec.carried?.until ?? 0) && gone(rec.carried?.process ?? '');
}

/**
 * What the gone processes claimed on `rec` no longer holds. The sending and the carrying claim
 * keep who and since when, lapsed: a sender or a message event may have posted the answer
 * without writing so (submit.ts and finish.ts look for it); the stream is nobody's, so the next
 * tick reads the run from Hermes.
 */
export function releaseClaims(rec: TurnRecord, now: number): void {
    if (rec.submitting) {
        rec.submitting = { ...rec.submitting, until: Math.min(rec.submitting.until, now) };
    }
    if (rec.carried) {
        rec.carried = { ...rec.carried, until: Math.min(rec.carried.until, now) };
    }
    rec.fresh = undefined;
    rec.lease = undefined;
    rec.liveProcess = undefined;
}

/** Beats of processes gone for longer than BEAT_KEPT_MS that hold nothing: the sweep drops them. */
export function oldBeats(beats: Map<string, number>, open: TurnRecord[], now: number): string[] {
    const holding = new Set(open.flatMap((r) => claimHolders(r, now)));
    return [...beats].filter(([p, at]) => now - at > BEAT_KEPT_MS && !holding.has(p)).map(([p]) => p);
}
