import { randomUUID } from 'crypto';

/** This app process: the chat stream of a turn lives in the process that opened it, and so does a fresh claim's decision. */
export const PROCESS_ID = randomUUID();

/** A claim on a turn (its sending, its carrying) that another process made and that still lasts. A field cleared in a saved record reads back as null. */
export function heldElsewhere(claim: { process: string; until: number } | null | undefined, now: number): boolean {
    return Boolean(claim) && claim?.process !== PROCESS_ID && (claim?.until ?? 0) > now;
}
