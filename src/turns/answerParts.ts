import { linkedMessageIds, withoutLinks } from '../delivery/citations';
import { firstMessagePrefix, quotePrefix } from '../delivery/quote';
import { splitMessage } from '../delivery/split';
import { Translate } from '../i18n/messages';
import { processMemory } from './processMemory';
import { TickPorts } from './tickPorts';
import { questionOf, TurnRecord } from './turnRecord';

/** An answer's text: what changed about the session before it (said first, once), the answer, its usage line. */
export function framedAnswer(rec: TurnRecord, text: string, t: Translate, footer?: string): string {
    const before = [rec.threadName ? `**${rec.threadName}**` : undefined, rec.autoReset ? t(`session_auto_reset_${rec.autoReset}`) : undefined, rec.recap];
    return [...before, text, footer].filter(Boolean).join('\n\n');
}

/** A text as the messages it becomes in the turn's room: split to the server's limit, the first quoting the question (`quoted`). */
export async function answerParts(rec: TurnRecord, text: string, ports: Pick<TickPorts, 'server' | 'readableMessages'>, quoted: boolean): Promise<string[]> {
    const server = await ports.server();
    text = await onlyReadableLinks(rec, text, server.siteUrl, ports);
    // A private answer quotes nothing: there is no question message in the room to point at.
    const prefix =
        rec.privateTo || !quoted
            ? ''
            : rec.background
              ? backgroundPrefix(rec, server)
              : (firstMessagePrefix(
                    {
                        kind: rec.kind,
                        threadId: rec.threadId,
                        roomType: rec.roomType,
                        roomId: rec.roomId,
                        roomName: rec.roomName,
                        messageId: questionOf(rec),
                        askerUsername: rec.askerUsername,
                    },
                    server,
                ) ?? '');
    return splitMessage(text, server.maxMessageSize, prefix.length).map((part, i) => (i === 0 ? `${prefix}${part}` : part));
}

/**
 * A background task's answer mentions its asker (it may come long after, amid other talk): in
 * the thread under its "started" message, or in a DM quoting that message (Site_Url allowing).
 */
function backgroundPrefix(rec: TurnRecord, server: { siteUrl: string }): string {
    if (rec.threadId || !server.siteUrl) {
        return `@${rec.askerUsername} `;
    }
    return quotePrefix({
        siteUrl: server.siteUrl,
        roomType: rec.roomType,
        roomId: rec.roomId,
        roomName: rec.roomName,
        messageId: questionOf(rec),
        askerUsername: rec.askerUsername,
    });
}

/**
 * The answer without links to messages its asker may not read (delivery/citations.ts): the server
 * would quote them in the answer with the bot's rights. No link to this server: no read. A
 * streamed answer asks again on each edit; what was learnt is kept for the turn a minute.
 */
async function onlyReadableLinks(rec: TurnRecord, text: string, siteUrl: string, ports: Pick<TickPorts, 'readableMessages'>): Promise<string> {
    const ids = linkedMessageIds(text, siteUrl);
    if (ids.length === 0) {
        return text;
    }
    const kept = readable.get(rec.id);
    const known = kept && Date.now() - kept.at < READABLE_KEPT_MS ? kept.ids : new Map<string, boolean>();
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0) {
        const allowed = ports.readableMessages ? await ports.readableMessages(rec.askerId, unknown) : new Set<string>();
        unknown.forEach((id) => known.set(id, allowed.has(id)));
        if (known !== kept?.ids) {
            readable.set(rec.id, { at: Date.now(), ids: known });
            // The oldest turns' entries go first (a Map keeps insertion order).
            [...readable.keys()].slice(0, Math.max(0, readable.size - 200)).forEach((key) => readable.delete(key));
        }
    }
    return withoutLinks(text, siteUrl, new Set(ids.filter((id) => !known.get(id))));
}

const READABLE_KEPT_MS = 60_000;
/** Per turn: which linked messages its asker may read, and since when this is known. */
const readable = processMemory.map<string, { at: number; ids: Map<string, boolean> }>('answerParts.readable');
