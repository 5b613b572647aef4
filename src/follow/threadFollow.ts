/**
 * Thread follow (`thread_follow`): once the bot has answered in a thread, later messages
 * there are turns without a new mention — the askers' own (`asker`) or everyone's
 * (`everyone`) — until someone runs `/hermes unfollow` in it.
 */
export type FollowMode = 'off' | 'asker' | 'everyone';

/** Where followed threads are remembered. The engine keeps them in the app's persistence. */
export interface FollowPort {
    /** The people the bot answered in this thread since it was last unfollowed; undefined if it is not followed. */
    askers(threadId: string): Promise<string[] | undefined>;
    /** The bot answered `askerId` in this thread. */
    add(threadId: string, askerId: string): Promise<void>;
    /** Resolves with whether the thread was followed. */
    remove(threadId: string): Promise<boolean>;
}

/** Whether a message without a mention in a followed thread is a turn. */
export function followedFor(mode: FollowMode, askers: string[] | undefined, senderId: string): boolean {
    if (mode === 'off' || !askers) {
        return false;
    }
    return mode === 'everyone' || askers.includes(senderId);
}
