import { BotMessageKind } from '../delivery/messageKind';

/** A message of the room's history as the context builder needs it: plain values only. */
export interface ContextMessage {
    id: string;
    senderId: string;
    senderUsername: string;
    text: string;
    createdAt: Date;
    threadId?: string;
    /** The message's room, when the read gives it: a message read by id may be from any room. */
    roomId?: string;
    isSystem: boolean;
    /** Set on the bot's own messages: what the app posted it as. */
    botKind?: BotMessageKind;
    files: Array<{ name: string; type: string }>;
}
