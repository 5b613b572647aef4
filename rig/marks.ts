import { markBlockId, markOf, MessageMark } from '../src/delivery/messageKind';
import type { StoredMessage } from './store';

/** The kind of one of the bot's messages: its mark, or `answer` (answers carry no mark). */
export function kindOfStored(m: Pick<StoredMessage, 'blocks'>): string {
    return markOf(m.blocks)?.kind ?? 'answer';
}

/** The turn a bot message belongs to: from its mark, or for an answer in a room from the quote link of the question. */
export function turnOfStored(m: Pick<StoredMessage, 'blocks' | 'text'>): string | undefined {
    return markOf(m.blocks)?.turnId ?? /\?msg=([^)\s]+)\)/.exec(m.text)?.[1];
}

/** Blocks that mark a message the way the app does, for history written before a test. */
export function markedBlocks(kind: MessageMark['kind'], turnId?: string): unknown[] {
    return [{ type: 'section', blockId: markBlockId({ kind, turnId }), text: { type: 'mrkdwn', text: '' } }];
}
