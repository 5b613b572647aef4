import { processMemory } from './processMemory';

/**
 * A turn's first step runs inside its message event. While the turn stays quick, its next
 * steps run there too, each woken by the turn's own stream (the submission answered, the run
 * ended) instead of a scheduler job, on the record in hand instead of a re-read: a quick room
 * mention costs no scheduler call and no turn read after the first. These are the wake-ups of
 * such turns, in this process.
 */
const waiting = processMemory.map<string, () => void>('quick.waiting');
/** A wake-up that came while nobody waited: the next wait returns at once. */
const early = processMemory.set<string>('quick.early');

/** The stream of a quick turn settled something: its event's loop takes the next step. */
export function quickSignal(turnId: string): void {
    const resolve = waiting.get(turnId);
    if (resolve) {
        resolve();
    } else {
        early.add(turnId);
    }
}

/** Resolves true when the turn is woken, false after `ms` without a wake-up. */
export function quickWake(turnId: string, ms: number): Promise<boolean> {
    if (early.delete(turnId)) {
        return Promise.resolve(true);
    }
    return new Promise((resolve) => {
        const timer = setTimeout(
            () => {
                waiting.delete(turnId);
                resolve(false);
            },
            Math.max(0, ms),
        );
        waiting.set(turnId, () => {
            clearTimeout(timer);
            waiting.delete(turnId);
            resolve(true);
        });
    });
}

/** The turn left the event's loop (done, or handed to the scheduler): nothing of it stays here. */
export function quickEnded(turnId: string): void {
    early.delete(turnId);
}
