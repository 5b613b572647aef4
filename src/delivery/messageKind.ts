/**
 * What the app posts, and how it recognises its own messages later without custom fields:
 * Rocket.Chat refuses `customFields` on messages unless an admin enabled and declared them
 * (`validateCustomMessageFields` in the server's sendMessage/updateMessage), so every
 * message except an answer carries UIKit blocks, and the first block's id names its kind
 * and turn: `hermes.<kind>.<turn id>`. Block ids are the app's to choose, and the server's
 * message converter hands `blocks` back on every read. Answers stay plain markdown text
 * (a block message renders differently); a turn finds its answer parts by the ids it
 * recorded, and the bot's messages without a mark are answers.
 */
export type BotMessageKind = 'answer' | 'notice' | 'status' | 'command' | 'approval';

const PREFIX = 'hermes';
const KINDS: ReadonlyArray<BotMessageKind> = ['answer', 'notice', 'status', 'command', 'approval'];

export interface MessageMark {
    kind: BotMessageKind;
    /** The turn the message belongs to, when it belongs to one. */
    turnId?: string;
}

/** The block id that marks a message of this kind (and turn). */
export function markBlockId(mark: MessageMark): string {
    return `${PREFIX}.${mark.kind}.${mark.turnId ?? '-'}`;
}

/** Reads the mark from a message's blocks; undefined for an unmarked message. */
export function markOf(blocks: unknown): MessageMark | undefined {
    if (!Array.isArray(blocks)) {
        return undefined;
    }
    for (const block of blocks) {
        const id = (block as { blockId?: unknown } | null)?.blockId;
        const m = typeof id === 'string' ? /^hermes\.([a-z]+)\.(.+)$/.exec(id) : null;
        if (m && (KINDS as string[]).includes(m[1])) {
            return { kind: m[1] as BotMessageKind, turnId: m[2] === '-' ? undefined : m[2] };
        }
    }
    return undefined;
}
