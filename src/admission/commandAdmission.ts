import { conversationKind, isIgnoredSender } from './admit';
import { HermesConfig } from '../settings/config';

export type CommandAdmission =
    { admit: true } | { admit: false; reason: 'own-command' | 'ignored-sender' | 'not-allowed' | 'not-a-room-type' | 'bot-not-member' };

/**
 * The same admission as a message, for `/hermes`: the command is registered server-wide, so
 * anyone can type it in any room. Without this an outsider, another bot, or anyone in a room
 * the bot is not in got the session key and id, the Hermes version, or a new session.
 * Membership needs a read, so the caller passes its answer; `config` may be missing (no
 * valid settings yet), then only the membership and room-type checks apply, as for messages.
 */
export function admitCommand(
    sender: { id: string; username: string },
    room: { type: string; directMemberCount?: number },
    facts: { botId: string; botIsMember: boolean },
    config: Pick<HermesConfig, 'allowedUserIds' | 'ignoreSenders'> | undefined,
): CommandAdmission {
    if (sender.id === facts.botId) {
        return { admit: false, reason: 'own-command' };
    }
    if (isIgnoredSender({ senderId: sender.id, senderUsername: sender.username }, config?.ignoreSenders ?? [])) {
        return { admit: false, reason: 'ignored-sender' };
    }
    const allowed = config?.allowedUserIds ?? [];
    if (allowed.length > 0 && !allowed.includes(sender.id)) {
        return { admit: false, reason: 'not-allowed' };
    }
    if (!conversationKind({ roomType: room.type, directMemberCount: room.directMemberCount })) {
        return { admit: false, reason: 'not-a-room-type' };
    }
    if (!facts.botIsMember) {
        return { admit: false, reason: 'bot-not-member' };
    }
    return { admit: true };
}
