import { SessionRecord } from '../sessions/sessionRecord';
import { processMemory } from './processMemory';

/**
 * The session record as each turn of this process found it when it was sent. When the turn
 * ends, it tells whether the session record has anything to learn (its first turn, a new
 * asker, a frontier, a title…); if not, the end costs no session read. Per-process cache only:
 * a turn finished elsewhere (or after a restart) reads the record as before.
 */
const snapshots = processMemory.map<string, SessionRecord>('sessionSnapshot.snapshots');
/** Turns handed to another instance never end here: the oldest entries go past this many. */
const MAX_SNAPSHOTS = 1_000;

export function rememberSession(turnId: string, session: SessionRecord): void {
    snapshots.delete(turnId);
    snapshots.set(turnId, session);
    if (snapshots.size > MAX_SNAPSHOTS) {
        snapshots.delete(snapshots.keys().next().value as string);
    }
}

/** The snapshot of a turn, taken once: the turn is ending. */
export function takeSession(turnId: string): SessionRecord | undefined {
    const found = snapshots.get(turnId);
    snapshots.delete(turnId);
    return found;
}
