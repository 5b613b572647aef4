import { TurnRecord } from './turnRecord';

/**
 * Whether a finishing turn must read the tickets to wake who waits for it (its session's next
 * turn, the oldest waiters for the slot it frees). A turn that waits marks each turn it waits
 * for (TurnStore.waitOn), and the removal of a marked turn returns the marks: a turn whose
 * start saw no other turn waiting or queued, and whose removal returned no mark, has nobody
 * to wake and skips the read (one call less per quick turn on a quiet server).
 *
 * Per process, and only ever a reason to read: a turn this process did not start (carried by
 * another instance, or after a restart) reads as before.
 */
const startedAlone = new Set<string>();
const MAX_REMEMBERED = 2_000;

/** What the turn's start read of the tickets showed: alone if every other turn was running. */
export function noteStart(id: string, open: Array<Pick<TurnRecord, 'id' | 'phase'>>): void {
    if (open.every((o) => o.id === id || o.phase === 'running')) {
        startedAlone.add(id);
        if (startedAlone.size > MAX_REMEMBERED) {
            startedAlone.delete(startedAlone.values().next().value as string);
        }
    } else {
        startedAlone.delete(id);
    }
}

/** `removed`: what the turn's removal returned (undefined: the store keeps no marks). */
export function mustWake(id: string, removed: { waiters: number } | void): boolean {
    const alone = startedAlone.delete(id);
    return !alone || !removed || removed.waiters > 0;
}
