import { conversationKind } from '../admission/admit';
import { HermesConfig } from '../settings/config';
import { sessionKey } from '../sessions/sessionKey';
import { keyOptions } from '../turns/turn';

/** The session key of whoever runs a command in a room or thread, by the same rules as a turn. */
export function commandSessionKey(
    where: { roomType: string; roomId: string; directMemberCount?: number; threadId?: string; userId: string; profile?: string },
    config: Pick<HermesConfig, 'groupSessionsPerUser' | 'threadSessionsPerUser'>,
): string {
    // One DM rule for messages and commands (admission/admit.ts).
    const isDm = conversationKind({ roomType: where.roomType, directMemberCount: where.directMemberCount }) === 'dm';
    const scope = { chatType: isDm ? 'dm' : 'channel', roomId: where.roomId, threadId: where.threadId, userId: where.userId } as const;
    return sessionKey(isDm ? scope : { ...scope, profile: where.profile }, keyOptions(config));
}
