import { Frontier } from '../context/frontier';
import { HermesConfig } from '../settings/config';
import { sessionKey } from '../sessions/sessionKey';
import { keyOptions, Turn } from './turn';

/** A room mention answered in a new thread rooted at the question (`reply_mode` thread/auto). */
export interface NewThread {
    threadId: string;
    /** The thread's session: later messages in the thread continue it. */
    key: string;
    /** `auto`: the answer's first line names the thread, from the asker's words. */
    named: boolean;
    /** The new thread session holds its root (the question); the answer is held when it is posted. */
    frontier: Frontier;
}

/**
 * Whether this turn opens a thread (the seed's topic mode, for Rocket.Chat): a mention in a
 * room's main channel, under `reply_mode` or the room policy's `reply=`. DMs, threads and
 * commands never do. The turn keeps the main channel's context (what led to the question);
 * its session is the new thread's.
 */
export function newThreadFor(turn: Turn, config: Pick<HermesConfig, 'replyMode' | 'groupSessionsPerUser' | 'threadSessionsPerUser'>): NewThread | undefined {
    const m = turn.message;
    const mode = (turn.room?.kind === 'entry' ? turn.room.policy.reply : undefined) ?? config.replyMode;
    if (turn.kind !== 'room' || m.threadId || mode === 'channel') {
        return undefined;
    }
    const profile = turn.room?.kind === 'entry' ? turn.room.policy.profile : undefined;
    return {
        threadId: m.id,
        key: sessionKey({ chatType: 'channel', roomId: m.roomId, threadId: m.id, userId: m.senderId, profile }, keyOptions(config)),
        named: mode === 'auto',
        frontier: { at: (turn.postedAt ?? turn.createdAt).getTime(), id: m.id, held: [] },
    };
}
