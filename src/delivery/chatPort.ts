import { BotMessageKind } from './messageKind';

/** Where an answer goes: the room, and the thread when the question was asked in one. */
export interface ReplyTarget {
    roomId: string;
    threadId?: string;
}

/** Buttons under a message, as plain values (the edge turns them into UIKit blocks). */
export interface ButtonsView {
    text: string;
    buttons: Array<{ actionId: string; label: string; value: string; style?: 'primary' | 'danger' }>;
}

export interface PostOptions {
    /** The turn this message belongs to, so a retried delivery can see what already went out. */
    turnId?: string;
    buttons?: ButtonsView;
}

/** What the core needs from Rocket.Chat to answer. Implemented at the edge with IModify. */
export interface ChatPort {
    /** Posts as the bot, marked with what it is; resolves with the new message id. */
    post(target: ReplyTarget, text: string, kind: BotMessageKind, opts?: PostOptions): Promise<string>;
}

/** What a long turn needs beyond posting: edits, removal, typing, private notices. */
export interface LiveChatPort extends ChatPort {
    /** Replaces a message's text; `buttons: null` removes its buttons. */
    edit(messageId: string, text: string, buttons?: ButtonsView | null): Promise<void>;
    remove(messageId: string, roomId: string): Promise<void>;
    /** Shows the bot typing in the room until the returned function is called. */
    typing(roomId: string): Promise<() => Promise<void>>;
    /** Messages the bot already posted for a turn in that place (newest 50 looked at). */
    postedFor(target: ReplyTarget, turnId: string): Promise<Array<{ id: string; kind?: BotMessageKind }>>;
    /** A message only `userId` sees. */
    whisper(userId: string, target: ReplyTarget, text: string): Promise<void>;
}

/** Server facts the delivery depends on, read from Rocket.Chat's settings. */
export interface ServerInfo {
    /** Message_MaxAllowedSize: longer messages are refused by the server. */
    maxMessageSize: number;
    /** Site_Url: message links to it render as quotes. */
    siteUrl: string;
}
