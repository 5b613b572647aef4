/** Hermes's platform name for this adapter, as it appears in session keys. */
export const PLATFORM = 'rocketchat';

export interface SessionScope {
    /** 'dm' for a 1:1 direct message, 'channel' for every room (and direct rooms of 3+). */
    chatType: 'dm' | 'channel';
    roomId: string;
    /** The Rocket.Chat tmid when the turn is in a thread. */
    threadId?: string;
    userId: string;
    /**
     * The Hermes profile the room's policy sends turns to: Hermes namespaces keys by the
     * agent profile (`agent:<profile>:…`), so a room's memory stays with the profile serving it.
     */
    profile?: string;
}

export interface SessionKeyOptions {
    /** Hermes `group_sessions_per_user` (default on): one main-channel session per person. */
    groupSessionsPerUser: boolean;
    /** Hermes `thread_sessions_per_user` (default off): threads are shared unless on. */
    threadSessionsPerUser: boolean;
}

const DEFAULT_SESSION_KEY_OPTIONS: SessionKeyOptions = { groupSessionsPerUser: true, threadSessionsPerUser: false };

/**
 * The session key in the Hermes gateway's own format (`build_session_key`), so memory scoped
 * by key lines up with what Hermes would build for the same conversation:
 * `agent:main:rocketchat:dm:<rid>[:<tmid>]` and
 * `agent:main:rocketchat:channel:<rid>[:<tmid>][:<uid>]` (`agent:<profile>:…` in a room whose policy names a profile).
 */
export function sessionKey(scope: SessionScope, opts: SessionKeyOptions = DEFAULT_SESSION_KEY_OPTIONS): string {
    const parts = ['agent', scope.profile ?? 'main', PLATFORM, scope.chatType, scope.roomId];
    if (scope.threadId) {
        parts.push(scope.threadId);
    }
    if (scope.chatType !== 'dm') {
        const perUser = scope.threadId ? opts.threadSessionsPerUser : opts.groupSessionsPerUser;
        if (perUser) {
            parts.push(scope.userId);
        }
    }
    return parts.join(':');
}

/** True when several people share the session, so their turns carry a `[name] ` prefix. */
export function isSharedSession(scope: SessionScope, opts: SessionKeyOptions = DEFAULT_SESSION_KEY_OPTIONS): boolean {
    if (scope.chatType === 'dm') {
        return false;
    }
    return scope.threadId ? !opts.threadSessionsPerUser : !opts.groupSessionsPerUser;
}

/**
 * Whether a stored key is of a shared conversation: a room or thread key without a person's id
 * at its end (what {@link isSharedSession} decided when it was built, read back from the key,
 * since the options may have changed since). Ids of rooms, threads and people hold no colon.
 */
export function isSharedKey(key: string, threadId?: string): boolean {
    // agent:<profile>:rocketchat:channel:<rid>[:<tmid>][:<uid>]
    const parts = key.split(':');
    if (parts[0] !== 'agent' || parts[2] !== PLATFORM || parts[3] !== 'channel') {
        return false;
    }
    return parts.length - 4 === (threadId ? 2 : 1);
}

/**
 * The thread of a conversation's key, for the person it was built for: `…:dm:<rid>[:<tmid>]`,
 * `…:channel:<rid>[:<tmid>][:<uid>]`. After the room id comes the thread's root, or the
 * person's id (a per-person main channel), never anything else; other keys (a background
 * task's one-off session) have no thread.
 */
export function threadOfKey(key: string, userId: string): string | undefined {
    const parts = key.split(':');
    if (parts[0] !== 'agent' || parts[2] !== PLATFORM || (parts[3] !== 'dm' && parts[3] !== 'channel')) {
        return undefined;
    }
    const after = parts[5];
    return after && after !== userId ? after : undefined;
}
