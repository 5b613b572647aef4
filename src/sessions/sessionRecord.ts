import { Frontier } from '../context/frontier';
import { createHash } from 'crypto';

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
    /** Exchanges undone or retried (sessions/exchanges.ts): transcript rows no longer sent as history. */
    cut?: Cut;
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

/** The transcript rows of one session the app no longer sends (sessions/exchanges.ts): inclusive id ranges. */
export interface Cut {
    sessionId: string;
    ranges: Array<[number, number]>;
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

/**
 * The transcript id sent as `X-Hermes-Session-Id`. Hermes rejects ids with `/`, `\`, `..`,
 * CR/LF/NUL or a drive-letter start, and Rocket.Chat ids are not secret but keys are long, so
 * the id is a digest of the key and the session generation (bumped by /new): stable across
 * restarts, new after a reset, always path-safe.
 */
export function sessionIdFor(key: string, generation: number): string {
    const digest = createHash('sha256').update(`${key}#${generation}`).digest('hex').slice(0, 32);
    return `rc_${digest}_g${generation}`;
}

/** The rules Hermes applies to a session id it receives (and returns after compression). */
export function isAcceptableSessionId(id: string): boolean {
    return id.length > 0 && id.length <= 256 && !/[\r\n\0/\\]/.test(id) && !id.includes('..') && !/^[A-Za-z]:/.test(id);
}
