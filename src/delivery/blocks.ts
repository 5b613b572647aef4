import { ButtonsView } from './chatPort';
import { markBlockId, MessageMark } from './messageKind';

/** The "Post to thread" button under a private thread summary (its click: actions/postSummary.ts). */
export const POST_SUMMARY_ACTION = 'hermes-post-summary';

/** UIKit blocks as the engine takes them (`setBlocks`), built as plain values so they can be tested. */
export type Block = Record<string, unknown>;

/** A UIKit plain-text object (labels, titles, button texts), emoji shortcodes shown as emoji. */
export function plainText(text: string): { type: 'plain_text'; text: string; emoji: true } {
    return { type: 'plain_text', text, emoji: true };
}

/**
 * The blocks of a marked message: the text as a markdown section whose id carries the mark,
 * then the buttons, if any. Without a mark (an answer) there are no blocks at all.
 */
export function blocksFor(text: string, mark: MessageMark | undefined, buttons?: ButtonsView): Block[] | undefined {
    if (!mark || mark.kind === 'answer') {
        return undefined;
    }
    const blocks: Block[] = [{ type: 'section', blockId: markBlockId(mark), text: { type: 'mrkdwn', text } }];
    if (buttons && buttons.buttons.length > 0) {
        blocks.push({
            type: 'actions',
            elements: buttons.buttons.map((b) => ({
                type: 'button',
                actionId: b.actionId,
                text: plainText(b.label),
                value: b.value,
                ...(b.style ? { style: b.style } : {}),
            })),
        });
    }
    return blocks;
}

/**
 * Blocks that name the app that answers their buttons. The engine's message creator and
 * updater stamp the app's id on every block; its notifier (`notifyUser`) passes a private
 * notice through untouched, and the web client sends a click on a block without one to the
 * core app, which fails. So a notice's blocks carry the id themselves.
 */
export function ownedBy(blocks: Block[] | undefined, appId: string): Block[] | undefined {
    return blocks?.map((block) => ({ ...block, appId }));
}
