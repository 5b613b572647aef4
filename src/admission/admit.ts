import { mentions, stripMentions } from './mention';

/** What the event handler knows about a posted message, as plain values. */
export interface InboundMessage {
    id: string;
    roomId: string;
    /** Rocket.Chat room type: 'c' channel, 'p' private group, 'd' direct, 'l' livechat, … */
    roomType: string;
    /** Members of a direct room (the server fills them only for 'd' rooms). */
    directMemberCount?: number;
    senderId: string;
    senderUsername: string;
    /** The sender's language preference (Rocket.Chat's user setting), for what only they read. */
    senderLanguage?: string;
    text: string;
    threadId?: string;
    /** A system message (user joined, topic changed, …) has a type. */
    isSystem: boolean;
    edited: boolean;
    /** When the message was posted (ms); missing on messages without a timestamp. For an edit: when it was edited. */
    createdAt?: number;
    /** An edit: when the message itself was posted (its place in the room). */
    postedAt?: number;
    /** Files posted with the message (uploads), for Hermes to read (files/attachments.ts). */
    files?: Array<{ id: string; name: string; type: string; size?: number }>;
}

export interface BotIdentity {
    id: string;
    username: string;
}

export type ConversationKind = 'dm' | 'room';

export type Admission =
    | { admit: true; kind: ConversationKind; text: string }
    | { admit: false; reason: 'own-message' | 'ignored-sender' | 'system' | 'edited' | 'too-old' | 'not-a-room-type' | 'no-mention' | 'not-allowed' | 'empty' };

/** A 1:1 DM is a direct room of exactly the bot and one person; larger direct rooms follow room rules. */
export function conversationKind(msg: Pick<InboundMessage, 'roomType' | 'directMemberCount'>): ConversationKind | undefined {
    if (msg.roomType === 'd') {
        return (msg.directMemberCount ?? 2) <= 2 ? 'dm' : 'room';
    }
    if (msg.roomType === 'c' || msg.roomType === 'p') {
        return 'room';
    }
    return undefined;
}

/**
 * Decides from the message alone whether it is a turn for the bot; room membership needs a
 * read and is checked by the caller afterwards. An allowlist refusal is silent (the caller
 * must not answer), because an answer would tell an outsider the bot is alive.
 */
export function admit(
    msg: InboundMessage,
    bot: BotIdentity,
    opts: {
        allowedUserIds: string[];
        ignoreSenders?: string[];
        maxAgeSeconds?: number;
        now?: number;
        /** Addressed without a mention: a `free` room (room_policies) or a followed thread (thread_follow). */
        addressed?: boolean;
    },
): Admission {
    if (msg.senderId === bot.id) {
        return { admit: false, reason: 'own-message' };
    }
    if (isIgnoredSender(msg, opts.ignoreSenders ?? [])) {
        return { admit: false, reason: 'ignored-sender' };
    }
    if (msg.isSystem) {
        return { admit: false, reason: 'system' };
    }
    if (msg.edited) {
        return { admit: false, reason: 'edited' };
    }
    // A replayed event, a reaction or a restart must not re-trigger an old turn.
    if (opts.maxAgeSeconds !== undefined && msg.createdAt !== undefined && (opts.now ?? Date.now()) - msg.createdAt > opts.maxAgeSeconds * 1000) {
        return { admit: false, reason: 'too-old' };
    }
    const kind = conversationKind(msg);
    if (!kind) {
        return { admit: false, reason: 'not-a-room-type' };
    }
    if (kind === 'room' && !opts.addressed && !mentions(msg.text, bot.username)) {
        return { admit: false, reason: 'no-mention' };
    }
    if (opts.allowedUserIds.length > 0 && !opts.allowedUserIds.includes(msg.senderId)) {
        return { admit: false, reason: 'not-allowed' };
    }
    const text = questionText(kind, msg.text, bot.username);
    if (text.length === 0) {
        return { admit: false, reason: 'empty' };
    }
    return { admit: true, kind, text };
}

/** What the asker asks: a room message without the bot's mentions, a DM's text as it is. */
export function questionText(kind: ConversationKind, text: string, botUsername: string): string {
    return kind === 'room' ? stripMentions(text, botUsername) : text.trim();
}

/** `ignore_senders` lists other bots by id (exact) or username (any case). */
export function isIgnoredSender(msg: Pick<InboundMessage, 'senderId' | 'senderUsername'>, ignore: string[]): boolean {
    const username = msg.senderUsername.toLowerCase();
    return ignore.some((entry) => entry === msg.senderId || entry.toLowerCase() === username);
}
