import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { InboundMessage } from '../../admission/admit';

/** Turns the engine's message into the plain values the core decides on. */
export function toInbound(message: IMessage): InboundMessage {
    return {
        id: message.id ?? '',
        roomId: message.room.id,
        roomType: String(message.room.type),
        // An empty list means the event did not say; the handler reads the room then.
        directMemberCount: message.room.userIds?.length || undefined,
        senderId: message.sender.id,
        senderUsername: message.sender.username,
        text: message.text ?? '',
        threadId: message.threadId || undefined,
        // Regular messages carry no type; joins, topic changes and the like do.
        isSystem: Boolean(message.type),
        edited: Boolean(message.editedAt),
        createdAt: message.createdAt ? new Date(message.createdAt).getTime() : undefined,
    };
}
