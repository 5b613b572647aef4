import { holderOf } from './owner';
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

/** Where beats live (the app's persistence): each process's newest beat. */
export interface BeatStore {
    writeBeat(process: string, at: number): Promise<void>;
    /** Each process's newest beat (ms). */
    readBeats(): Promise<Map<string, number>>;
    dropBeats(processes: string[]): Promise<void>;
}

/** How long a beat of a process that stopped beating is kept (then dropped by the sweep). */
const BEAT_KEPT_MS = 60 * 60_000;

/** Beats of processes gone for longer than BEAT_KEPT_MS that hold nothing: the sweep drops them. */
export function oldBeats(beats: Map<string, number>, open: TurnRecord[], now: number): string[] {
    const holding = new Set(open.map((r) => holderOf(r, now)));
    return [...beats].filter(([p, at]) => now - at > BEAT_KEPT_MS && !holding.has(p)).map(([p]) => p);
}
