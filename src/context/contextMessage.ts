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
    /** The uploads it carries, readable by id (context_files: files/contextFiles.ts); absent when the read did not say. */
    uploads?: PostedFile[];
}

/** A file posted with the message, as Rocket.Chat describes it. `size` is what the upload claims, when known. */
export interface PostedFile {
    id: string;
    name: string;
    type: string;
    size?: number;
}
