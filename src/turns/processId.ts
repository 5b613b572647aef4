import { randomUUID } from 'crypto';

/** This app process: the chat stream of a turn lives in the process that opened it, and so does a fresh claim's decision. */
export const PROCESS_ID = randomUUID();

/**
 * A claim on a turn (its sending, its carrying, its finishing lease) that another process made
 * and that still lasts. A field cleared in a saved record reads back as null. `self`: this app
 * process (another in tests).
 */
export function heldElsewhere(claim: { process: string; until: number } | null | undefined, now: number, self: string = PROCESS_ID): boolean {
    return Boolean(claim) && claim?.process !== self && (claim?.until ?? 0) > now;
}
