import { z } from '../generated/zodBundle';
import { inertReferences } from '../security/contextReferences';
import { label, neutralise } from '../security/inertText';
import { READ_ARGS, ReadToolName } from './readCatalog';
import { ToolOutcome } from './mcpServer';
import { PAGE, READ_PAGES, SEARCH_PAGES, SEARCH_ROOMS, WorkspaceMessage, WorkspacePort, WorkspaceRoom } from './workspace';

/*
 * The MCP server's read tools (issue 37 §2), for the person a verified asker token named
 * (mcp/tools.ts): only a room they and the bot are both members of now (their own DM with the
 * bot is one), never a room because the model named it. A refusal is told to the model as a
 * tool error and logged with ids only.
 */

/** One message as a tool returns it: the same neutralising as room context, no live mention, its permalink. */
interface ToolMessage {
    id: string;
    room_id: string;
    thread_id?: string;
    author: string;
    created_at: string;
    text: string;
    permalink?: string;
}

/** `@name` stays readable but never notifies anyone if the model copies it into an answer. */
export function inertMentions(text: string): string {
    return text.replace(/([@＠])(?![\u200B-\u200D\u2060\uFEFF])(?=[\p{L}\p{N}_.-])/gu, '$1\u200B');
}

function shown(m: WorkspaceMessage, room: WorkspaceRoom, ports: WorkspacePort): ToolMessage {
    return {
        id: m.id,
        room_id: m.roomId,
        thread_id: m.threadId,
        author: label(m.author),
        created_at: m.createdAt.toISOString(),
        text: inertMentions(inertReferences(neutralise(m.text))),
        permalink: ports.link(room, m.id),
    };
}

function listing(messages: ToolMessage[], extra: Record<string, unknown> = {}): ToolOutcome {
    const lines = messages.map((m) => `[${m.created_at}] ${m.author}: ${m.text.replace(/\n/g, '\n  ')}${m.permalink ? ` (${m.permalink})` : ''}`);
    return { kind: 'ok', text: lines.length > 0 ? lines.join('\n') : 'No messages.', structured: { messages, ...extra } };
}

/** The person's rooms with the bot, read once per call. */
export interface ReadCtx {
    userId: string;
    tokenRoom: string;
    shared: string[];
    ports: WorkspacePort;
    tool: string;
}

/** Runs a read tool on its checked arguments. */
export function readTool(name: ReadToolName, data: unknown, ctx: ReadCtx): Promise<ToolOutcome> {
    switch (name) {
        case 'list_rooms':
            return listRooms(ctx);
        case 'read_messages':
            return readMessages(data as z.infer<typeof READ_ARGS.read_messages>, ctx);
        case 'who_is':
            return whoIs((data as z.infer<typeof READ_ARGS.who_is>).username, ctx);
        default:
            return searchMessages(data as z.infer<typeof READ_ARGS.search_messages>, ctx);
    }
}

function refused(ctx: ReadCtx, roomId: string): ToolOutcome {
    ctx.ports.log.warn(`MCP ${ctx.tool} of room ${roomId} refused for user ${ctx.userId}: not a room they share with the bot.`);
    return { kind: 'error', text: 'Not allowed: the person who asked cannot read that room with the bot.' };
}

async function listRooms(ctx: ReadCtx): Promise<ToolOutcome> {
    const rooms = (await Promise.all(ctx.shared.slice(0, 100).map((id) => ctx.ports.room(id)))).filter((r): r is WorkspaceRoom => r !== undefined);
    const shown = rooms.map((r) => ({
        id: r.id,
        name: r.name === undefined ? undefined : label(r.name),
        type: r.type === 'd' ? 'direct' : r.type === 'p' ? 'private' : 'channel',
    }));
    ctx.ports.log.info(`MCP list_rooms: ${shown.length} room(s) for user ${ctx.userId}.`);
    return {
        kind: 'ok',
        text: shown.map((r) => `${r.id} ${r.type}${r.name ? ` ${r.name}` : ''}`).join('\n') || 'No rooms.',
        structured: { rooms: shown },
    };
}

/** An ISO 8601 date or time; anything else in `before` is a message id (Date.parse would read some ids as dates). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** `before` as a test on a message: older than that time, or than that message once it is among those read. */
function beforeTest(before: string | undefined, messages: WorkspaceMessage[]): ((m: WorkspaceMessage) => boolean) | undefined {
    if (before === undefined) {
        return undefined;
    }
    const at = ISO_TIME.test(before) ? Date.parse(before) : messages.find((m) => m.id === before)?.createdAt.getTime();
    return at === undefined || Number.isNaN(at) ? undefined : (m) => m.createdAt.getTime() < at;
}

async function readMessages(args: z.infer<typeof READ_ARGS.read_messages>, ctx: ReadCtx): Promise<ToolOutcome> {
    if (args.thread_id !== undefined) {
        const thread = await ctx.ports.thread(args.thread_id);
        if (!thread || !ctx.shared.includes(thread.roomId)) {
            return refused(ctx, thread?.roomId ?? `of thread ${args.thread_id}`);
        }
        const room = await ctx.ports.room(thread.roomId);
        const older = beforeTest(args.before, thread.messages);
        const picked = thread.messages.filter((m) => !m.isSystem && (!older || older(m))).slice(-args.limit);
        ctx.ports.log.info(`MCP read_messages: ${picked.length} message(s) of thread ${args.thread_id} for user ${ctx.userId}.`);
        return listing(picked.map((m) => shown(m, room ?? { id: thread.roomId, type: 'c' }, ctx.ports)));
    }
    const roomId = args.room_id ?? ctx.tokenRoom;
    if (!ctx.shared.includes(roomId)) {
        return refused(ctx, roomId);
    }
    const room = (await ctx.ports.room(roomId)) ?? { id: roomId, type: 'c' };
    const picked: WorkspaceMessage[] = [];
    let older: ((m: WorkspaceMessage) => boolean) | undefined;
    for (let page = 0; page < (args.before ? READ_PAGES : 1) && picked.length < args.limit; page++) {
        const raw = await ctx.ports.roomPage(roomId, page);
        older ??= beforeTest(args.before, raw);
        picked.push(...raw.filter((m) => !m.isSystem && (!args.before || (older !== undefined && older(m)))).slice(0, args.limit - picked.length));
        if (raw.length < PAGE) {
            break;
        }
    }
    ctx.ports.log.info(`MCP read_messages: ${picked.length} message(s) of room ${roomId} for user ${ctx.userId}.`);
    return listing(picked.reverse().map((m) => shown(m, room, ctx.ports)));
}

async function searchMessages(args: z.infer<typeof READ_ARGS.search_messages>, ctx: ReadCtx): Promise<ToolOutcome> {
    if (args.room_id !== undefined && !ctx.shared.includes(args.room_id)) {
        return refused(ctx, args.room_id);
    }
    const roomIds = args.room_id !== undefined ? [args.room_id] : ctx.shared.slice(0, SEARCH_ROOMS);
    const needle = args.query.toLowerCase();
    const hits: ToolMessage[] = [];
    let scanned = 0;
    let cut = ctx.shared.length > roomIds.length && args.room_id === undefined;
    for (const id of roomIds) {
        const room = (await ctx.ports.room(id)) ?? { id, type: 'c' };
        for (let page = 0; page < SEARCH_PAGES; page++) {
            const raw = await ctx.ports.roomPage(id, page);
            scanned += raw.length;
            hits.push(...raw.filter((m) => !m.isSystem && m.text.toLowerCase().includes(needle)).map((m) => shown(m, room, ctx.ports)));
            if (raw.length < PAGE) {
                break;
            }
            cut ||= page === SEARCH_PAGES - 1;
        }
    }
    const newest = hits.sort((a, b) => b.created_at.localeCompare(a.created_at)).slice(0, args.limit);
    ctx.ports.log.info(
        `MCP search_messages: ${newest.length} of ${hits.length} hit(s) in ${roomIds.length} room(s), ${scanned} message(s) read, for user ${ctx.userId}.`,
    );
    const outcome = listing(newest, { rooms_searched: roomIds.length, messages_scanned: scanned, complete: !cut });
    const note = cut ? `\n(Searched the last ${SEARCH_PAGES * PAGE} messages of ${roomIds.length} room(s); older messages were not searched.)` : '';
    return { ...outcome, text: `${outcome.text}${note}` } as ToolOutcome;
}

/** A person the asker can see with the bot: one of their shared rooms holds them (themselves and the bot included). */
async function whoIs(username: string, ctx: ReadCtx): Promise<ToolOutcome> {
    const user = await ctx.ports.user(username);
    const shared = new Set(ctx.shared);
    const seen = user !== undefined && (user.id === ctx.userId || (await ctx.ports.memberRoomIds(user.id)).some((id) => shared.has(id)));
    if (!user || !seen) {
        // The same answer for nobody and for someone the asker shares no room with: a username tells nothing.
        ctx.ports.log.info(`MCP who_is for user ${ctx.userId}: not found among their rooms.`);
        return { kind: 'error', text: 'Not found among the people who share a room with the person who asked and the bot.' };
    }
    const who = { username: label(user.username), name: user.name === undefined ? undefined : label(user.name), bot: user.isBot };
    ctx.ports.log.info(`MCP who_is: user ${user.id} for user ${ctx.userId}.`);
    return { kind: 'ok', text: `@\u200B${who.username}${who.name ? ` (${who.name})` : ''}${who.bot ? ', a bot' : ''}`, structured: who };
}
