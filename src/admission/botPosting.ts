/**
 * Rooms the server refuses the bot's messages in, known before a turn starts, so the app
 * never asks Hermes for an answer it cannot deliver. The rules are Rocket.Chat's own
 * (`canSendMessage.ts` validateRoomMessagePermissionsAsync and `methods/sendMessage.ts`
 * executeSendMessage), read from the room the engine hands over:
 * - read-only (`ro`): only holders of `post-readonly` post, unless a moderator unmuted the bot;
 * - muted: the room lists the bot's username in `muted`;
 * - end-to-end encrypted (`encrypted`): the server refuses clear text when E2E is on; the app
 *   refuses either way, since it reads no encrypted message and must not answer in clear text
 *   in a room people chose to encrypt.
 * A DM whose person blocked the bot shows nothing on the room: the post's refusal tells
 * (`isPostRefusal`), and the person cannot write there either.
 */
export type PostingRefusal = 'read-only' | 'muted' | 'encrypted';

/** What the server decides a post on, as plain values (the engine gives `muted`, `unmuted`, `encrypted` unmapped). */
export interface PostingFacts {
    readOnly: boolean;
    muted: string[];
    unmuted: string[];
    encrypted: boolean;
}

/** Roles that hold `post-readonly` by default on Rocket.Chat. */
const POST_READONLY = ['admin', 'owner', 'moderator'];

export function postingRefusal(room: PostingFacts, bot: { username: string; roles?: string[] }): PostingRefusal | undefined {
    if (room.encrypted) {
        return 'encrypted';
    }
    if (room.readOnly && !(bot.roles ?? []).some((r) => POST_READONLY.includes(r)) && !room.unmuted.includes(bot.username)) {
        return 'read-only';
    }
    return room.muted.includes(bot.username) ? 'muted' : undefined;
}

/**
 * A post the server refused for good (the errors of the rules above, and a DM the person
 * blocked): retrying cannot help, and a notice in the same room would be refused too.
 */
export function isPostRefusal(error: unknown): boolean {
    const text = error instanceof Error ? error.message : String(error);
    return /room_is_blocked|You_have_been_muted|room is readonly|un-encrypted messages|error-not-allowed/.test(text);
}

/** A message the server refused as longer than Message_MaxAllowedSize (sendMessage's check). */
export function isSizeRefusal(error: unknown): boolean {
    return error instanceof Error && /size-exceeded|MaxAllowedSize/i.test(error.message);
}
