import { PersonalText } from '../i18n/messages';
import { BotMessageKind, MessageMark } from './messageKind';

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
    /** The turn this message belongs to: part of the message's mark, so it can be found again. */
    turnId?: string;
    buttons?: ButtonsView;
}

/** One of the bot's messages as it stands now in a place (hidden edit copies and deleted ones left out). */
export interface PostedMessage {
    id: string;
    text: string;
    createdAt: number;
    /** Undefined for an answer (answers carry no mark). */
    mark?: MessageMark;
}

/** What the core needs from Rocket.Chat to answer. Implemented at the edge with IModify. */
export interface ChatPort {
    /** Posts as the bot; every kind but `answer` carries its mark. Resolves with the new message id. */
    post(target: ReplyTarget, text: string, kind: BotMessageKind, opts?: PostOptions): Promise<string>;
}

/** What a long turn needs beyond posting: edits, removal, typing, private notices. */
export interface LiveChatPort extends ChatPort {
    /**
     * Replaces a message's text and keeps its mark; without `buttons` the message has none.
     * The room goes with the edit: servers whose bridge converts the whole message refuse one without it.
     */
    edit(messageId: string, roomId: string, text: string, mark: MessageMark | undefined, buttons?: ButtonsView): Promise<void>;
    remove(messageId: string, roomId: string): Promise<void>;
    /** Shows the bot typing in the room until the returned function is called. */
    typing(roomId: string): Promise<() => Promise<void>>;
    /** The bot's visible messages in that place, newest 50 of the main channel or the whole thread. */
    botMessages(target: ReplyTarget): Promise<PostedMessage[]>;
    /** A message only `userId` sees (buttons optional). */
    whisper(userId: string, target: ReplyTarget, text: PersonalText, buttons?: ButtonsView): Promise<void>;
    /**
     * Adds (`on`) or removes the bot's reaction (`:name:`) on a message; the server makes both
     * idempotent. Rejects with {@link ReactionsUnsupported} where the server cannot do it at all.
     */
    react(messageId: string, emoji: string, on: boolean): Promise<void>;
}

/**
 * The server's Apps-Engine offers apps no reactions: engines 1.58 and 1.59 (Rocket.Chat 7.13 to
 * 8.0) declare the message updater but never create it, so every call fails the same way.
 */
export class ReactionsUnsupported extends Error {}

/** Server facts the delivery depends on, read from Rocket.Chat's settings. */
export interface ServerInfo {
    /** Message_MaxAllowedSize: longer messages are refused by the server. */
    maxMessageSize: number;
    /** Site_Url: message links to it render as quotes. */
    siteUrl: string;
}
