import { Frontier } from '../context/frontier';
import { sessionIdFor } from './sessionId';

/** What the app remembers of a session: Hermes owns the transcript, the app only names it. */
export interface SessionRecord {
    key: string;
    /** Bumped by /new and /reset; part of the derived session id. */
    generation: number;
    /** The id to send: derived from key and generation, or the one Hermes rotated to. */
    sessionId: string;
    /** Turns answered in this generation; 0 means the next turn is the session's first. */
    turns: number;
    /** A thread session: how far it holds the thread (see context/frontier.ts). */
    frontier?: Frontier;
    /** People answered in this session so far (each is written to the session index once). */
    askers?: string[];
    /** The app's title from the first message (sessions/titles.ts), shown until a better one exists. */
    autoTitle?: string;
    /** A title asked for before Hermes had the session: set when its first turn is answered. */
    pendingTitle?: string;
    /** When a turn of it was last answered (kept only while session_reset is on). */
    lastActiveAt?: number;
    /** After /hermes resume: where the session stood, shown before the next answer. */
    recap?: string;
    /**
     * When the stored copy was written (absent for a record never stored). Carried along so
     * the next save can drop that copy: records live in day buckets that expiry reads.
     */
    storedAt?: number;
}

export function freshRecord(key: string, generation = 0): SessionRecord {
    return { key, generation, sessionId: sessionIdFor(key, generation), turns: 0 };
}

/** Where records live. The engine implementation keeps them in the app's persistence. */
export interface SessionPort {
    get(key: string): Promise<SessionRecord>;
    save(record: SessionRecord): Promise<void>;
}

/** Starts the next generation: a new transcript in Hermes, the same long-term key. */
export async function resetSession(sessions: SessionPort, key: string): Promise<SessionRecord> {
    const current = await sessions.get(key);
    const next: SessionRecord = { ...freshRecord(key, current.generation + 1), storedAt: current.storedAt };
    await sessions.save(next);
    return next;
}
