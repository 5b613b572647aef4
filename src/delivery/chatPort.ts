import { BotMessageKind } from './messageKind';

/** Where an answer goes: the room, and the thread when the question was asked in one. */
export interface ReplyTarget {
    roomId: string;
    threadId?: string;
}

/** What the core needs from Rocket.Chat to answer. Implemented at the edge with IModify. */
export interface ChatPort {
    /** Posts as the bot, marked with what it is; resolves with the new message id. */
    post(target: ReplyTarget, text: string, kind: BotMessageKind): Promise<string>;
}

/** Server facts the delivery depends on, read from Rocket.Chat's settings. */
export interface ServerInfo {
    /** Message_MaxAllowedSize: longer messages are refused by the server. */
    maxMessageSize: number;
    /** Site_Url: message links to it render as quotes. */
    siteUrl: string;
}
