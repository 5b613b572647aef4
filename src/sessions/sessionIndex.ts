/**
 * Which Hermes sessions people own through this app, and in which conversation scope. Hermes
 * knows sessions but not Rocket.Chat users, so the app keeps this index: it decides who may
 * list, search and resume which session (a person never sees another person's sessions; a
 * shared thread session belongs to the thread). Hermes supplies the rest (title, activity,
 * message count) when a list is asked for.
 */
export interface OwnedSession {
    sessionId: string;
    /** The session key of the conversation scope it belongs to. */
    key: string;
    roomId: string;
    /** For a link to the conversation in the web client. */
    roomType?: string;
    roomName?: string;
    threadId?: string;
    kind: 'dm' | 'room';
    /** When the app first saw it answered for this owner (ms). */
    startedAt: number;
    /** The app's title from the first message, until someone names the session or Hermes titles it. */
    autoTitle?: string;
}

export interface SessionIndexPort {
    /** Every session `userId` owns through this app. */
    owned(userId: string): Promise<OwnedSession[]>;
    /** Every session of a conversation scope, whoever asked in it. */
    inScope(key: string): Promise<OwnedSession[]>;
    /**
     * Every entry of one session, whoever owns it: the conversations it was used in (where it
     * began, and where it was resumed). Read only by `/hermes resume`. Entries written before
     * this lookup existed are not found by it.
     */
    ofSession(sessionId: string): Promise<OwnedSession[]>;
    /** Records that `userId` owns `entry` (the same user, session and scope: written once). */
    add(userId: string, entry: OwnedSession): Promise<void>;
}

/** One row per session, the newest start first. */
export function distinctNewestFirst(entries: OwnedSession[]): OwnedSession[] {
    const bySession = new Map<string, OwnedSession>();
    for (const e of entries) {
        const seen = bySession.get(e.sessionId);
        if (!seen || e.startedAt < seen.startedAt) {
            bySession.set(e.sessionId, { ...e, autoTitle: seen?.autoTitle ?? e.autoTitle });
        }
    }
    return [...bySession.values()].sort((a, b) => b.startedAt - a.startedAt);
}
