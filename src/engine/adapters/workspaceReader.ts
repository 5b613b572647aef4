import { IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessageRaw } from '@rocket.chat/apps-engine/definition/messages';
import { messageLink } from '../../delivery/quote';
import { isVisibleNow } from '../../delivery/visibility';
import { ContextMessage } from '../../context/contextMessage';
import { PAGE, WorkspaceMessage, WorkspacePort } from '../../mcp/tools';
import { verifyAskerToken } from '../../security/askerToken';
import { LogPort } from '../../security/safeLog';
import { AskerTokens } from './askerTokens';
import { EngineHistory, toContextMessage } from './engineHistory';
import { sharedRoomIds } from './membership';
import { threadOfKey } from '../../sessions/sessionKey';

const asWorkspace = (m: ContextMessage, roomId: string): WorkspaceMessage => ({
    id: m.id,
    roomId: m.roomId ?? roomId,
    threadId: m.threadId,
    author: m.senderUsername,
    createdAt: m.createdAt,
    text: m.text,
    isSystem: m.isSystem,
});

/**
 * The MCP tools' reads on the engine (mcp/tools.ts). Costs: a token check is one persistence
 * read (is it the newest of its conversation); the shared rooms two membership reads; a room one
 * read; a page of messages one read; a thread two (its root, for its room, and the thread).
 */
export function workspaceReader(
    read: IRead,
    persistence: IPersistence,
    opts: { askerKey: string; botId: string; siteUrl: string; log: LogPort; now?: () => number },
): WorkspacePort {
    const history = new EngineHistory(read, opts.botId);
    return {
        asker: async (token) => {
            const check = verifyAskerToken(opts.askerKey, token, Math.floor((opts.now ?? Date.now)() / 1000));
            if (!check.ok) {
                return { ok: false, reason: `asker token ${check.reason}` };
            }
            // In a shared session every asker's token is in the one transcript: only the newest of its conversation counts.
            const conversation = await new AskerTokens(read.getPersistenceReader(), persistence).newestIn(token);
            if (conversation === undefined) {
                return { ok: false, reason: `a newer turn in that conversation replaced the asker token of user ${check.userId}` };
            }
            return { ok: true, userId: check.userId, roomId: check.roomId, threadId: threadOfKey(conversation, check.userId) };
        },
        sharedRoomIds: (userId) => sharedRoomIds(read, userId, opts.botId),
        room: async (roomId) => {
            const room = await read.getRoomReader().getById(roomId);
            return room ? { id: room.id, name: String(room.type) === 'd' ? undefined : room.slugifiedName, type: String(room.type) } : undefined;
        },
        roomPage: async (roomId, page) => {
            const raw = await read.getRoomReader().getMessages(roomId, { limit: PAGE, skip: page * PAGE, sort: { createdAt: 'desc' } });
            // Hidden edit copies and deleted messages are not what people see: left out, the page's length kept for the paging.
            return raw.map((m) => {
                const shown = toContextMessage(m as never, opts.botId);
                return asWorkspace(isVisibleNow(m as IMessageRaw as never) ? shown : { ...shown, isSystem: true }, roomId);
            });
        },
        thread: async (threadId) => {
            const root = await history.message(threadId);
            if (!root?.roomId) {
                return undefined;
            }
            const messages = await history.thread(threadId, { id: '\uffff', createdAt: new Date(8.64e15) });
            return { roomId: root.roomId, messages: messages.map((m) => asWorkspace(m, root.roomId as string)) };
        },
        user: async (username) => {
            const user = await read
                .getUserReader()
                .getByUsername(username)
                .catch(() => undefined);
            return user ? { id: user.id, username: user.username, name: user.name, isBot: String(user.type) !== 'user' } : undefined;
        },
        memberRoomIds: async (userId) => (await read.getUserReader().getUserRoomIds(userId)) ?? [],
        link: (room, messageId) =>
            opts.siteUrl ? messageLink(opts.siteUrl, { roomType: room.type, roomId: room.id, roomName: room.name }, messageId) : undefined,
        log: opts.log,
    };
}
