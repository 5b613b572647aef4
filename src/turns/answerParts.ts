import { firstMessagePrefix, quotePrefix } from '../delivery/quote';
import { splitMessage } from '../delivery/split';
import { Translate } from '../i18n/messages';
import { TickPorts } from './tickPorts';
import { questionOf, TurnRecord } from './turnRecord';

/** An answer's text: what changed about the session before it (said first, once), the answer, its usage line. */
export function framedAnswer(rec: TurnRecord, text: string, t: Translate, footer?: string): string {
    const before = [rec.threadName ? `**${rec.threadName}**` : undefined, rec.autoReset ? t(`session_auto_reset_${rec.autoReset}`) : undefined, rec.recap];
    return [...before, text, footer].filter(Boolean).join('\n\n');
}

/** A text as the messages it becomes in the turn's room: split to the server's limit, the first quoting the question (`quoted`). */
export async function answerParts(rec: TurnRecord, text: string, ports: Pick<TickPorts, 'server'>, quoted: boolean): Promise<string[]> {
    const server = await ports.server();
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
