import { TurnRecord } from './turnRecord';
import { processMemory } from './processMemory';

/**
 * Whether a finishing turn must read the tickets to wake who waits for it (its session's next
 * turn, the oldest waiters for the slot it frees). A turn that waits marks each turn it waits
 * for (TurnStore.waitOn), and the removal of a marked turn returns the marks: a turn whose
 * start saw no other turn waiting or queued, and whose removal returned no mark, has nobody
 * to wake and skips the read (one call less per quick turn on a quiet server).
 *
 * Per process, and only ever a reason to read: a turn this process did not start (carried by
 * another instance, or after a restart) reads as before. `started`: what the start of each turn
 * this process started showed, alone (true) or not. Bounded.
 */
const started = processMemory.map<string, boolean>('waiters.started');
const MAX_REMEMBERED = 2_000;

/**
 * What the turn's start read of the tickets showed: alone if every other turn was running.
 * Returned for its record (`alone`): a turn known not to be alone reads at its end, and
 * turns waiting for it need not mark it.
 */
export function noteStart(id: string, open: Array<Pick<TurnRecord, 'id' | 'phase'>>): boolean {
    const alone = open.every((o) => o.id === id || o.phase === 'running');
    started.delete(id);
    started.set(id, alone);
    if (started.size > MAX_REMEMBERED) {
        started.delete(started.keys().next().value as string);
    }
    return alone;
}

/**
 * Whether a waiter must mark `other`: it may end without reading the tickets. A turn this
 * process started is known exactly; another's ticket says so once its start is written (until
 * then it may be alone), and a turn that waits itself reads when it is woken.
 */
export function mayEndUnread(other: Pick<TurnRecord, 'id' | 'alone' | 'waiting'> | undefined): boolean {
    if (other && started.has(other.id)) {
        return started.get(other.id) === true;
    }
    return !other || (!other.waiting && other.alone !== false);
}

/**
 * A turn of this process now waits for a slot that `ids` hold (waitTurn.ts): those this process
 * started alone are alone no more, so the end of their run wakes it at once (wakeAfterEnd.ts
 * freeSlotEarly) instead of after their answer is posted and their record removed: about four
 * store round trips sooner. Another instance's waiter is seen by the removal's marks, as before.
 */
export function noteWaitedOn(ids: string[]): void {
    for (const id of ids) {
        if (started.get(id) === true) {
            started.set(id, false);
        }
    }
}

/** What the start of a turn this process started showed: alone (true), others waiting or queued (false); undefined if not known here. */
export function startedAlone(id: string): boolean | undefined {
    return started.get(id);
}

/** This process started the turn (its start read is known here) and it has not ended. */
export function startedHere(id: string): boolean {
    return started.has(id);
}

/** `removed`: what the turn's removal returned (undefined: the store keeps no marks). */
export function mustWake(id: string, removed: { waiters: number } | void): boolean {
    const alone = started.get(id) === true;
    started.delete(id);
    return !alone || !removed || removed.waiters > 0;
}
