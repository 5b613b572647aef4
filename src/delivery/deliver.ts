import { t } from '../i18n/messages';
import { LogPort } from '../security/safeLog';
import { ChatPort, ReplyTarget } from './chatPort';
import { BotMessageKind } from './messageKind';
import { splitMessage } from './split';

export interface Delivery {
    target: ReplyTarget;
    text: string;
    kind: BotMessageKind;
    /** Marks every part with the turn it answers (see LiveChatPort.postedFor). */
    turnId?: string;
    maxMessageSize: number;
    /** Reads the server's current limit when the first part was refused as too large. */
    freshMaxMessageSize?: () => Promise<number>;
    /** Quote + mention for the first message (room main channel only). */
    firstPrefix?: string;
}

export type Delivered = { ok: true; messageIds: string[] } | { ok: false; messageIds: string[]; failedPart: number; parts: number };

/**
 * Posts an answer as one or more messages. If a part fails, the rest is not posted (it
 * would read out of order) and a notice says which part failed; the log names the error.
 */
export async function deliver(d: Delivery, chat: ChatPort, log: LogPort, where: string): Promise<Delivered> {
    const prefix = d.firstPrefix ?? '';
    let limit = d.maxMessageSize;
    let parts = splitMessage(d.text, limit, prefix.length);
    const ids: string[] = [];
    for (let i = 0; i < parts.length; i++) {
        const text = i === 0 ? `${prefix}${parts[i]}` : parts[i];
        try {
            ids.push(await chat.post(d.target, text, d.kind, { turnId: d.turnId }));
        } catch (error) {
            // The cached limit was stale (an admin lowered it): read it again and split anew, once.
            if (i === 0 && isSizeError(error) && d.freshMaxMessageSize) {
                const fresh = await d.freshMaxMessageSize();
                d = { ...d, freshMaxMessageSize: undefined };
                if (fresh < limit) {
                    log.info(`Message_MaxAllowedSize is now ${fresh}; splitting the answer for ${where} again.`);
                    limit = fresh;
                    parts = splitMessage(d.text, limit, prefix.length);
                    i = -1;
                    continue;
                }
            }
            log.error(`Posting part ${i + 1} of ${parts.length} for ${where} failed: ${error instanceof Error ? error.message : String(error)}`);
            await chat
                .post(d.target, t('notice_part-failed', { part: i + 1, parts: parts.length }), 'notice', { turnId: d.turnId })
                .catch(() => log.error(`The failure notice for ${where} could not be posted either.`));
            return { ok: false, messageIds: ids, failedPart: i + 1, parts: parts.length };
        }
    }
    return { ok: true, messageIds: ids };
}

function isSizeError(error: unknown): boolean {
    return error instanceof Error && /size-exceeded|MaxAllowedSize/i.test(error.message);
}
