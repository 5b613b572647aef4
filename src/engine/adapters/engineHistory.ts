import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage, IMessageRaw } from '@rocket.chat/apps-engine/definition/messages';
import { markOf } from '../../delivery/messageKind';
import { isVisibleNow } from '../../delivery/visibility';
import { ContextMessage } from '../../context/contextMessage';
import { HistoryPort } from '../../context/historyPort';
import { uploadsOf } from './inbound';

/** getMessages returns at most 100 per call. */
const PAGE = 100;

type AnyMessage = Partial<IMessageRaw> &
    Partial<IMessage> & { type?: string; sender?: { _id?: string; id?: string; username?: string }; rid?: string; _unmappedProperties_?: { rid?: unknown } };

/**
 * What the context block lists of a message's files: every upload, in order (the converter hands
 * apps `file`, the first only, and `files`, all of them: `convertMessageFiles`; the server's
 * thumbnails left out), else the file attachments of a message without uploads.
 */
function filesOf(m: AnyMessage): Array<{ name: string; type: string }> {
    const uploads = uploadsOf(m);
    if (uploads) {
        return uploads.map((f) => ({ name: f.name, type: f.type || 'file' }));
    }
    return (m.attachments ?? [])
        .filter((a) => a.title?.value && (a.type === 'file' || a.imageUrl || a.audioUrl || a.videoUrl))
        .map((a) => ({ name: String(a.title?.value), type: a.type || 'file' }));
}

function roomIdOf(m: AnyMessage): string | undefined {
    const unmapped = m._unmappedProperties_?.rid;
    return m.rid || m.room?.id || m.roomId || (typeof unmapped === 'string' ? unmapped : '') || undefined;
}

/** Raw messages (getMessages), thread messages (getThreadById) and full ones (getById) to the same plain shape. */
export function toContextMessage(m: AnyMessage, botId: string): ContextMessage {
    const sender = m.sender as { _id?: string; id?: string; username?: string } | undefined;
    const senderId = sender?._id ?? sender?.id ?? '';
    const isBot = senderId === botId;
    return {
        id: m.id ?? '',
        senderId,
        senderUsername: sender?.username ?? '',
        // The bot's own answers open with a quote link of the question: noise in the context.
        text: isBot ? (m.text ?? '').replace(/^\[ \]\([^)\s]*\)\s*(@[\w.-]+\s)?/, '') : (m.text ?? ''),
        createdAt: new Date(m.createdAt as Date),
        threadId: m.threadId || undefined,
        // Each reader puts the room elsewhere: getById in `room`, getMessages in `roomId`, getThreadById under `_unmappedProperties_`.
        roomId: roomIdOf(m),
        isSystem: Boolean(m.type),
        // The app marks everything but its answers (see delivery/messageKind.ts).
        botKind: isBot ? (markOf(m.blocks)?.kind ?? 'answer') : undefined,
        files: filesOf(m),
        uploads: uploadsOf(m),
    };
}

function isBefore(m: ContextMessage, before: { id: string; createdAt: Date }): boolean {
    return m.id !== before.id && m.createdAt.getTime() <= before.createdAt.getTime();
}

/** HistoryPort on the engine's room and thread readers, within their limits. */
export class EngineHistory implements HistoryPort {
    constructor(
        private readonly read: IRead,
        private readonly botId: string,
    ) {}

    public async mainChannel(
        roomId: string,
        before: { id: string; createdAt: Date },
        settled: (m: ContextMessage[]) => boolean,
        cap: number,
        firstPage = PAGE,
    ): Promise<ContextMessage[]> {
        const newestFirst: ContextMessage[] = [];
        // Each message read is converted by the server, sent to the app's process and decoded
        // there: a first page no bigger than needed keeps that off the turn's way to Hermes.
        let limit = Math.max(1, Math.min(PAGE, firstPage));
        for (let skip = 0; skip < cap; skip += limit, limit = PAGE) {
            // Only createdAt sorts; ask for the newest first or the page is the room's oldest.
            const page = await this.read.getRoomReader().getMessages(roomId, { limit, skip, sort: { createdAt: 'desc' }, showThreadMessages: false });
            for (const raw of page) {
                if (!isVisibleNow(raw as AnyMessage)) {
                    continue;
                }
                const m = toContextMessage(raw as AnyMessage, this.botId);
                // A thread reply also sent to the channel belongs to its thread.
                if (!m.threadId && isBefore(m, before)) {
                    newestFirst.push(m);
                }
            }
            const chronological = [...newestFirst].reverse();
            if (page.length < limit || settled(chronological)) {
                return chronological;
            }
        }
        return newestFirst.reverse();
    }

    public async thread(threadId: string, before: { id: string; createdAt: Date }): Promise<ContextMessage[]> {
        const all = await this.read.getThreadReader().getThreadById(threadId);
        // The server returns the root twice and in no particular order.
        const byId = new Map<string, ContextMessage>();
        for (const message of all ?? []) {
            // Hidden edit copies and deleted messages come back too: only what people see now counts.
            if (!isVisibleNow(message as AnyMessage)) {
                continue;
            }
            const m = toContextMessage(message as AnyMessage, this.botId);
            if (m.id && isBefore(m, before)) {
                byId.set(m.id, m);
            }
        }
        const root = byId.get(threadId);
        byId.delete(threadId);
        const replies = [...byId.values()].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
        return root ? [root, ...replies] : replies;
    }

    public async message(id: string): Promise<ContextMessage | undefined> {
        const message = await this.read.getMessageReader().getById(id);
        // getById finds hidden edit copies and deleted messages too (see isVisibleNow).
        if (!message || !isVisibleNow(message as AnyMessage)) {
            return undefined;
        }
        return toContextMessage(message as AnyMessage, this.botId);
    }
}
