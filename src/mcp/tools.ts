import { z } from '../generated/zodBundle';
import { inertReferences } from '../security/contextReferences';
import { label, neutralise } from '../security/inertText';
import { LogPort } from '../security/safeLog';
import { ToolDefinition, ToolOutcome } from './mcpServer';

/*
 * The MCP server's read tools (issue 37 §2). Each takes the asker token the turn carried and
 * reads only what that person may read now: a room they and the bot are both members of (their
 * own DM with the bot is one), never a room because the model named it. A refusal is told to
 * the model as a tool error and logged with ids only.
 */

export interface WorkspaceMessage {
    id: string;
    roomId: string;
    threadId?: string;
    author: string;
    createdAt: Date;
    text: string;
    isSystem: boolean;
}

export interface WorkspaceRoom {
    id: string;
    /** The room's name (absent for a DM). */
    name?: string;
    type: string;
}

/** Messages a page of the room reader holds (the engine's window: newest first). */
export const PAGE = 100;
/** How far a read scans back for `before`, and a search in each room: pages of PAGE messages. */
const READ_PAGES = 5;
export const SEARCH_PAGES = 3;
/** A search looks in at most this many rooms (the person's rooms with the bot, as the server lists them). */
export const SEARCH_ROOMS = 20;

export interface WorkspacePort {
    /** The person a token names, when it verifies (HMAC, expiry) and is its conversation's newest; else why not. */
    asker: (token: string) => Promise<{ ok: true; userId: string; roomId: string } | { ok: false; reason: string }>;
    /** Ids of the rooms the person and the bot are both members of now. */
    sharedRoomIds: (userId: string) => Promise<string[]>;
    room: (roomId: string) => Promise<WorkspaceRoom | undefined>;
    /** Page `page` (0: newest) of a room's messages, newest first. */
    roomPage: (roomId: string, page: number) => Promise<WorkspaceMessage[]>;
    /** A thread's messages, oldest first, its root first; undefined when there is no such thread. */
    thread: (threadId: string) => Promise<{ roomId: string; messages: WorkspaceMessage[] } | undefined>;
    /** A person by username (`who_is`): never their email; undefined when there is no such user. */
    user: (username: string) => Promise<{ id: string; username: string; name?: string; isBot: boolean } | undefined>;
    /** Ids of the rooms a person is a member of. */
    memberRoomIds: (userId: string) => Promise<string[]>;
    /** The web client's link to a message, when the server has a Site_Url. */
    link: (room: WorkspaceRoom, messageId: string) => string | undefined;
    log: LogPort;
}

const asker = z.string().min(1).max(300);
const roomId = z.string().regex(/^[A-Za-z0-9]{1,64}$/);
const limit = z.number().int().min(1).max(50).default(20);

const ARGS = {
    list_rooms: z.object({ asker }).strict(),
    read_messages: z
        .object({
            asker,
            room_id: roomId.optional(),
            thread_id: roomId.optional(),
            /** A message id or an ISO time: only messages before it. */
            before: z.string().min(1).max(64).optional(),
            limit,
        })
        .strict(),
    search_messages: z.object({ asker, query: z.string().min(2).max(200), room_id: roomId.optional(), limit }).strict(),
    who_is: z
        .object({
            asker,
            username: z
                .string()
                .regex(/^@?[\w.-]{1,64}$/)
                .transform((u) => u.replace(/^@/, '')),
        })
        .strict(),
};

type ToolName = keyof typeof ARGS;

const ASKER_PROPERTY = { type: 'string', description: 'The token of the [Rocket.Chat asker: …] line of the message you are answering, verbatim.' };
const ROOM_PROPERTY = { type: 'string', description: 'A room id from list_rooms (default: the room the question was asked in).' };
const LIMIT_PROPERTY = { type: 'integer', minimum: 1, maximum: 50, default: 20 };

export const TOOLS: ToolDefinition[] = [
    {
        name: 'list_rooms',
        title: 'List rooms',
        description: 'The Rocket.Chat rooms the person who asked shares with the bot (their DM with the bot included): ids, names and types.',
        inputSchema: { type: 'object', properties: { asker: ASKER_PROPERTY }, required: ['asker'], additionalProperties: false },
    },
    {
        name: 'read_messages',
        title: 'Read messages',
        description:
            'Messages of a room or a thread the person who asked may read, oldest first, each with its author, time and permalink. ' +
            '`before` (a message id or an ISO time) reads further back.',
        inputSchema: {
            type: 'object',
            properties: {
                asker: ASKER_PROPERTY,
                room_id: ROOM_PROPERTY,
                thread_id: { type: 'string', description: "A thread's root message id: that thread's messages." },
                before: { type: 'string', description: 'Only messages before this message id or ISO 8601 time.' },
                limit: LIMIT_PROPERTY,
            },
            required: ['asker'],
            additionalProperties: false,
        },
    },
    {
        name: 'search_messages',
        title: 'Search messages',
        description:
            `Messages containing the words (case-insensitive), newest first, across the rooms the person who asked shares with the bot (or one room). ` +
            `Looks at the last ${SEARCH_PAGES * PAGE} messages of each of up to ${SEARCH_ROOMS} rooms and says how far it looked.`,
        inputSchema: {
            type: 'object',
            properties: { asker: ASKER_PROPERTY, query: { type: 'string', minLength: 2, maxLength: 200 }, room_id: ROOM_PROPERTY, limit: LIMIT_PROPERTY },
            required: ['asker', 'query'],
            additionalProperties: false,
        },
    },
    {
        name: 'who_is',
        title: 'Who is',
        description:
            'Who a mentioned person is: their username, display name and whether they are a bot. Only people who share a room with the person who asked and the bot; never an email.',
        inputSchema: {
            type: 'object',
            properties: { asker: ASKER_PROPERTY, username: { type: 'string', description: 'The username, with or without its @.' } },
            required: ['asker', 'username'],
            additionalProperties: false,
        },
    },
];

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

/** Runs a tool for whoever the token names. */
export async function runTool(name: string, raw: Record<string, unknown>, ports: WorkspacePort): Promise<ToolOutcome> {
    const schema = ARGS[name as ToolName];
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
        return {
            kind: 'bad-arguments',
            text: `Invalid arguments for ${name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'} ${i.message}`).join('; ')}`,
        };
    }
    const args = parsed.data as { asker: string };
    const who = await ports.asker(args.asker);
    if (!who.ok) {
        ports.log.warn(`MCP ${name} refused: ${who.reason}.`);
        return { kind: 'error', text: 'Not allowed: the asker token is not valid now. Use the token of the question you are answering.' };
    }
    const shared = await ports.sharedRoomIds(who.userId);
    const ctx = { userId: who.userId, tokenRoom: who.roomId, shared, ports, tool: name };
    switch (name as ToolName) {
        case 'list_rooms':
            return listRooms(ctx);
        case 'read_messages':
            return readMessages(parsed.data as z.infer<typeof ARGS.read_messages>, ctx);
        case 'who_is':
            return whoIs((parsed.data as z.infer<typeof ARGS.who_is>).username, ctx);
        default:
            return searchMessages(parsed.data as z.infer<typeof ARGS.search_messages>, ctx);
    }
}

interface Ctx {
    userId: string;
    tokenRoom: string;
    shared: string[];
    ports: WorkspacePort;
    tool: string;
}

function refused(ctx: Ctx, roomId: string): ToolOutcome {
    ctx.ports.log.warn(`MCP ${ctx.tool} of room ${roomId} refused for user ${ctx.userId}: not a room they share with the bot.`);
    return { kind: 'error', text: 'Not allowed: the person who asked cannot read that room with the bot.' };
}

async function listRooms(ctx: Ctx): Promise<ToolOutcome> {
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

async function readMessages(args: z.infer<typeof ARGS.read_messages>, ctx: Ctx): Promise<ToolOutcome> {
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

async function searchMessages(args: z.infer<typeof ARGS.search_messages>, ctx: Ctx): Promise<ToolOutcome> {
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
async function whoIs(username: string, ctx: Ctx): Promise<ToolOutcome> {
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
