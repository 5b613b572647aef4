import { inertMentions, PAGE, runTool, SEARCH_PAGES, SEARCH_ROOMS, TOOLS, WorkspaceMessage, WorkspacePort, WorkspaceRoom } from '../../../src/mcp/tools';

/**
 * The read tools over a workspace in memory: who may read what (the token's person and the rooms
 * they share with the bot), windows and `before`, the search's bounds, the rendering.
 */
const T0 = Date.UTC(2026, 11, 6, 9, 0, 0);
const PEOPLE: Record<string, { id: string; username: string; name?: string; isBot: boolean }> = {
    bob: { id: 'BOB', username: 'bob', name: 'Bob Builder', isBot: false },
    eve: { id: 'EVE', username: 'eve', name: 'Eve', isBot: false },
    alice: { id: 'ALICE', username: 'alice', isBot: false },
    deploybot: { id: 'DB', username: 'deploybot', name: 'Deploy\n[bot]', isBot: true },
};
const MEMBERSHIPS: Record<string, string[]> = { BOB: ['R1', 'X'], EVE: ['X'], DB: ['R1'] };

function message(roomId: string, i: number, text = `m${i}`, extra: Partial<WorkspaceMessage> = {}): WorkspaceMessage {
    return { id: `${roomId}x${i}`, roomId, author: 'bob', createdAt: new Date(T0 + i * 1000), text, isSystem: false, ...extra };
}

/** Rooms of `count` messages each (oldest first), alice sharing `shared` with the bot. */
function workspace(opts: { rooms: Record<string, WorkspaceMessage[]>; shared: string[]; token?: 'ok' | 'bad' }) {
    const logs: string[] = [];
    const pages: string[] = [];
    const port: WorkspacePort = {
        asker: async (token) =>
            token === 'good' && opts.token !== 'bad' ? { ok: true, userId: 'ALICE', roomId: 'DM' } : { ok: false, reason: 'asker token bad signature' },
        sharedRoomIds: async (userId) => (userId === 'ALICE' ? opts.shared : []),
        room: async (id): Promise<WorkspaceRoom | undefined> =>
            id in opts.rooms ? { id, name: id === 'DM' ? undefined : id.toLowerCase(), type: id === 'DM' ? 'd' : 'c' } : undefined,
        roomPage: async (id, page) => {
            pages.push(`${id}:${page}`);
            const newest = [...(opts.rooms[id] ?? [])].reverse();
            return newest.slice(page * PAGE, (page + 1) * PAGE);
        },
        thread: async (threadId) => {
            for (const [roomId, ms] of Object.entries(opts.rooms)) {
                if (ms.some((m) => m.id === threadId)) {
                    return { roomId, messages: ms.filter((m) => m.id === threadId || m.threadId === threadId) };
                }
            }
            return undefined;
        },
        user: async (username) => PEOPLE[username],
        memberRoomIds: async (userId) => MEMBERSHIPS[userId] ?? [],
        link: (room, id) => `https://chat.example/${room.id}?msg=${id}`,
        log: {
            info: (m: string) => void logs.push(m),
            warn: (m: string) => void logs.push(`WARN ${m}`),
            error: () => undefined,
            debug: () => undefined,
        } as never,
    };
    return { port, logs, pages };
}

const range = (roomId: string, n: number) => Array.from({ length: n }, (_, i) => message(roomId, i));
type Shown = { id: string; text: string; author: string; permalink?: string; thread_id?: string; created_at: string };
const shownOf = (o: { kind: string } & Record<string, unknown>) =>
    ((o as { structured?: { messages?: Shown[] } }).structured?.messages ?? []).map((m) => m.text);

describe('who may read', () => {
    it('a token that does not verify: a tool error, logged with the reason, nothing read', async () => {
        const w = workspace({ rooms: { R1: range('R1', 3) }, shared: ['R1'], token: 'bad' });
        for (const tool of ['list_rooms', 'read_messages']) {
            expect(await runTool(tool, { asker: 'good' }, w.port)).toEqual({
                kind: 'error',
                text: 'Not allowed: the asker token is not valid now. Use the token of the question you are answering.',
            });
        }
        expect(w.logs).toEqual(['WARN MCP list_rooms refused: asker token bad signature.', 'WARN MCP read_messages refused: asker token bad signature.']);
        expect(w.pages).toEqual([]);
    });

    it('a room or thread the person does not share with the bot: a tool error, ids in the log, nothing read', async () => {
        const w = workspace({ rooms: { R1: range('R1', 3), R2: range('R2', 3) }, shared: ['R1'] });
        const refusal = { kind: 'error', text: 'Not allowed: the person who asked cannot read that room with the bot.' };
        expect(await runTool('read_messages', { asker: 'good', room_id: 'R2' }, w.port)).toEqual(refusal);
        expect(await runTool('read_messages', { asker: 'good', thread_id: 'R2x1' }, w.port)).toEqual(refusal);
        expect(await runTool('read_messages', { asker: 'good', thread_id: 'NOSUCH' }, w.port)).toEqual(refusal);
        expect(await runTool('search_messages', { asker: 'good', query: 'm1', room_id: 'R2' }, w.port)).toEqual(refusal);
        expect(w.logs).toEqual([
            'WARN MCP read_messages of room R2 refused for user ALICE: not a room they share with the bot.',
            'WARN MCP read_messages of room R2 refused for user ALICE: not a room they share with the bot.',
            'WARN MCP read_messages of room of thread NOSUCH refused for user ALICE: not a room they share with the bot.',
            'WARN MCP search_messages of room R2 refused for user ALICE: not a room they share with the bot.',
        ]);
        expect(w.pages).toEqual([]);
    });

    it('bad arguments: named, nothing read', async () => {
        const w = workspace({ rooms: {}, shared: [] });
        for (const args of [
            {},
            { asker: '' },
            { asker: 'good', limit: 0 },
            { asker: 'good', limit: 51 },
            { asker: 'good', room_id: 'a/b' },
            { asker: 'good', other: 1 },
        ]) {
            const out = await runTool('read_messages', args, w.port);
            expect([args, out.kind]).toEqual([args, 'bad-arguments']);
        }
        expect(await runTool('search_messages', { asker: 'good', query: 'x' }, w.port)).toEqual({
            kind: 'bad-arguments',
            text: 'Invalid arguments for search_messages: query String must contain at least 2 character(s)',
        });
        expect(w.logs).toEqual([]);
    });
});

describe('list_rooms', () => {
    it('the shared rooms with their kind; the DM without a name', async () => {
        const w = workspace({ rooms: { DM: [], R1: [], P1: [] }, shared: ['DM', 'R1', 'GONE'] });
        const out = await runTool('list_rooms', { asker: 'good' }, w.port);
        expect(out).toEqual({
            kind: 'ok',
            text: 'DM direct\nR1 channel r1',
            structured: {
                rooms: [
                    { id: 'DM', name: undefined, type: 'direct' },
                    { id: 'R1', name: 'r1', type: 'channel' },
                ],
            },
        });
        expect(w.logs).toEqual(['MCP list_rooms: 2 room(s) for user ALICE.']);
        expect(await runTool('list_rooms', { asker: 'good' }, workspace({ rooms: {}, shared: [] }).port)).toMatchObject({ text: 'No rooms.' });
    });
});

describe('read_messages', () => {
    it("the newest `limit` of the token's room by default, oldest first, system messages left out; one page read", async () => {
        const ms = range('DM', 30);
        ms[28] = { ...ms[28], isSystem: true };
        const w = workspace({ rooms: { DM: ms }, shared: ['DM'] });
        const out = await runTool('read_messages', { asker: 'good', limit: 3 }, w.port);
        expect(shownOf(out)).toEqual(['m26', 'm27', 'm29']);
        expect(w.pages).toEqual(['DM:0']);
        expect(out.kind === 'ok' && out.text.split('\n')[0]).toBe('[2026-12-06T09:00:26.000Z] bob: m26 (https://chat.example/DM?msg=DMx26)');
        expect(shownOf(await runTool('read_messages', { asker: 'good' }, w.port))).toHaveLength(20);
    });

    it('`before` a message id or a time reads further back, page by page, up to five pages', async () => {
        const w = workspace({ rooms: { R1: range('R1', 700) }, shared: ['R1'] });
        expect(shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: 'R1x650', limit: 2 }, w.port))).toEqual(['m648', 'm649']);
        expect(w.pages).toEqual(['R1:0']);
        w.pages.length = 0;
        expect(
            shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: new Date(T0 + 450_000).toISOString(), limit: 2 }, w.port)),
        ).toEqual(['m448', 'm449']);
        expect(w.pages).toEqual(['R1:0', 'R1:1', 'R1:2']);
        w.pages.length = 0;
        // Older than five pages back: nothing (the scan is bounded), and a `before` that is neither an id seen nor a time: nothing.
        expect(shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: new Date(T0 + 50_000).toISOString() }, w.port))).toEqual([]);
        expect(w.pages).toEqual(['R1:0', 'R1:1', 'R1:2', 'R1:3', 'R1:4']);
        expect(shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: 'nonsense' }, w.port))).toEqual([]);
    });

    it('a thread: its root and replies, oldest first, `before` and `limit` applied', async () => {
        const ms = [
            message('R1', 1, 'root'),
            message('R1', 2, 'a', { threadId: 'R1x1' }),
            message('R1', 3, 'other'),
            message('R1', 4, 'b', { threadId: 'R1x1' }),
        ];
        const w = workspace({ rooms: { R1: ms }, shared: ['R1'] });
        const out = await runTool('read_messages', { asker: 'good', thread_id: 'R1x1' }, w.port);
        expect(shownOf(out)).toEqual(['root', 'a', 'b']);
        expect(((out as unknown as { structured: { messages: Shown[] } }).structured.messages[1] as Shown).thread_id).toBe('R1x1');
        expect(shownOf(await runTool('read_messages', { asker: 'good', thread_id: 'R1x1', before: 'R1x4', limit: 1 }, w.port))).toEqual(['a']);
        expect(w.logs.at(-1)).toBe('MCP read_messages: 1 message(s) of thread R1x1 for user ALICE.');
    });

    it('renders text inert: no live mention, no @file: reference, no control characters; an empty window says so', async () => {
        const w = workspace({ rooms: { R1: [message('R1', 1, 'hi @alice, see @file:/etc/passwd\u202E and ＠bob\u0007')] }, shared: ['R1'] });
        const out = await runTool('read_messages', { asker: 'good', room_id: 'R1' }, w.port);
        expect(shownOf(out)).toEqual(['hi @\u200Balice, see @\u200Bfile:/etc/passwd and ＠\u200Bbob']);
        const empty = await runTool('read_messages', { asker: 'good', room_id: 'R1', before: 'R1x1' }, w.port);
        expect(empty).toEqual({ kind: 'ok', text: 'No messages.', structured: { messages: [] } });
    });
});

describe('search_messages', () => {
    it('newest matches first across the shared rooms, case-insensitive, with how far it looked', async () => {
        const w = workspace({
            rooms: { R1: [message('R1', 1, 'Release on Friday'), message('R1', 5, 'lunch')], R2: [message('R2', 3, 'the RELEASE notes')] },
            shared: ['R1', 'R2'],
        });
        const out = await runTool('search_messages', { asker: 'good', query: 'release' }, w.port);
        expect(shownOf(out)).toEqual(['the RELEASE notes', 'Release on Friday']);
        expect(out).toMatchObject({ structured: { rooms_searched: 2, messages_scanned: 3, complete: true } });
        expect(out.kind === 'ok' && out.text).not.toContain('not searched');
        expect(w.logs.at(-1)).toBe('MCP search_messages: 2 of 2 hit(s) in 2 room(s), 3 message(s) read, for user ALICE.');
    });

    it(`bounded: ${SEARCH_PAGES} pages a room, ${SEARCH_ROOMS} rooms, and says what it did not search`, async () => {
        const rooms: Record<string, WorkspaceMessage[]> = {};
        for (let r = 0; r < SEARCH_ROOMS + 2; r++) {
            rooms[`R${r}`] = range(`R${r}`, r === 0 ? SEARCH_PAGES * PAGE + 50 : 2);
        }
        const w = workspace({ rooms, shared: Object.keys(rooms) });
        const out = await runTool('search_messages', { asker: 'good', query: 'm1', limit: 50 }, w.port);
        expect(out).toMatchObject({ structured: { rooms_searched: SEARCH_ROOMS, complete: false } });
        expect(w.pages.filter((p) => p.startsWith('R0:'))).toEqual(['R0:0', 'R0:1', 'R0:2']);
        expect(w.pages).not.toContain(`R${SEARCH_ROOMS}:0`);
        expect(
            out.kind === 'ok' &&
                out.text.endsWith(`(Searched the last ${SEARCH_PAGES * PAGE} messages of ${SEARCH_ROOMS} room(s); older messages were not searched.)`),
        ).toBe(true);
        expect(shownOf(out)).toHaveLength(50);

        // One room, fully searched: complete.
        const one = await runTool('search_messages', { asker: 'good', query: 'm1', room_id: 'R1' }, w.port);
        expect(one).toMatchObject({ structured: { rooms_searched: 1, messages_scanned: 2, complete: true } });
    });

    it('a room whose last page is exactly full is searched to the bound and marked incomplete', async () => {
        const w = workspace({ rooms: { R1: range('R1', SEARCH_PAGES * PAGE) }, shared: ['R1'] });
        const out = await runTool('search_messages', { asker: 'good', query: 'm29' }, w.port);
        expect(out).toMatchObject({ structured: { complete: false, messages_scanned: SEARCH_PAGES * PAGE } });
    });
});

describe('the definitions and helpers', () => {
    it('three tools, each requiring the asker token, no other properties', () => {
        expect(TOOLS.map((t) => [t.name, t.inputSchema.required, t.inputSchema.additionalProperties])).toEqual([
            ['list_rooms', ['asker'], false],
            ['read_messages', ['asker'], false],
            ['search_messages', ['asker', 'query'], false],
            ['who_is', ['asker', 'username'], false],
        ]);
    });

    it('inertMentions: a ZWSP after each @ before a name, once', () => {
        expect(inertMentions('@alice @@bob a@b.c @ x @\u200Bdone')).toBe('@\u200Balice @@\u200Bbob a@\u200Bb.c @ x @\u200Bdone');
    });
});

describe('`before`', () => {
    it('an ISO date or time is a time; anything else is a message id, never read as a date', async () => {
        const ms = [message('R1', 1), message('R1', 2, 'x', { id: 'May2020' }), message('R1', 3)];
        const w = workspace({ rooms: { R1: ms }, shared: ['R1'] });
        expect(shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: 'May2020' }, w.port))).toEqual(['m1']);
        expect(shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: '2026-12-06T09:00:02Z' }, w.port))).toEqual(['m1']);
        expect(shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: '2026-12-07' }, w.port))).toEqual(['m1', 'x', 'm3']);
        expect(shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: '2026-12-06T09:00:02.500+00:00' }, w.port))).toEqual(['m1', 'x']);
        expect(shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: 'Mar 7 2020' }, w.port))).toEqual([]);
    });
});

describe('the edges a mutation run found', () => {
    it('names each bad argument by its path, the unexpected ones as `arguments`', async () => {
        const w = workspace({ rooms: {}, shared: [] });
        expect(await runTool('read_messages', { asker: 'good', other: 1, limit: 0 }, w.port)).toEqual({
            kind: 'bad-arguments',
            text: "Invalid arguments for read_messages: limit Number must be greater than or equal to 1; arguments Unrecognized key(s) in object: 'other'",
        });
    });

    it('a private group is `private`; a name is a one-line label', async () => {
        const w = workspace({ rooms: { P1: [] }, shared: ['P1'] });
        w.port.room = async (id) => ({ id, name: 'ops\n[team]', type: 'p' });
        expect(await runTool('list_rooms', { asker: 'good' }, w.port)).toMatchObject({
            structured: { rooms: [{ id: 'P1', type: 'private', name: expect.not.stringMatching(/[\n[\]]/) }] },
        });
    });

    it('`before` a message two pages back fills the window from the pages after it, and a short room is read once', async () => {
        const w = workspace({ rooms: { R1: range('R1', 300) }, shared: ['R1'] });
        const out = shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: 'R1x120', limit: 50 }, w.port));
        expect(out).toEqual(Array.from({ length: 50 }, (_, i) => `m${70 + i}`));
        expect(w.pages).toEqual(['R1:0', 'R1:1', 'R1:2']);
        const short = workspace({ rooms: { R1: range('R1', 30) }, shared: ['R1'] });
        await runTool('read_messages', { asker: 'good', room_id: 'R1', before: 'R1x20' }, short.port);
        expect(short.pages).toEqual(['R1:0']);
    });

    it('a search through a room of two pages, the second short, is complete', async () => {
        const w = workspace({ rooms: { R1: range('R1', 150) }, shared: ['R1'] });
        expect(await runTool('search_messages', { asker: 'good', query: 'm14' }, w.port)).toMatchObject({
            structured: { complete: true, messages_scanned: 150 },
        });
        expect(w.pages).toEqual(['R1:0', 'R1:1']);
    });
});

describe('what a second mutation run found', () => {
    it('a short room is read once even when the window is not full; the read is logged with ids', async () => {
        const w = workspace({ rooms: { R1: range('R1', 30) }, shared: ['R1'] });
        expect(shownOf(await runTool('read_messages', { asker: 'good', room_id: 'R1', before: 'R1x5' }, w.port))).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
        expect(w.pages).toEqual(['R1:0']);
        expect(w.logs.at(-1)).toBe('MCP read_messages: 5 message(s) of room R1 for user ALICE.');
    });

    it('more shared rooms than it searches: incomplete, though each room was searched whole', async () => {
        const rooms: Record<string, WorkspaceMessage[]> = {};
        for (let r = 0; r < SEARCH_ROOMS + 1; r++) {
            rooms[`R${r}`] = range(`R${r}`, 1);
        }
        const out = await runTool('search_messages', { asker: 'good', query: 'm0' }, workspace({ rooms, shared: Object.keys(rooms) }).port);
        expect(out).toMatchObject({ structured: { complete: false, rooms_searched: SEARCH_ROOMS } });
    });

    it('a complete search adds no note; a message over several lines is indented in the text', async () => {
        const w = workspace({ rooms: { R1: [message('R1', 1, 'release\nnotes')] }, shared: ['R1'] });
        const out = await runTool('search_messages', { asker: 'good', query: 'release' }, w.port);
        expect(out.kind === 'ok' && out.text).toBe('[2026-12-06T09:00:01.000Z] bob: release\n  notes (https://chat.example/R1?msg=R1x1)');
    });
});

describe('who_is', () => {
    it('someone who shares a room with the asker and the bot: username, name, bot or not; never an email; the asker themselves', async () => {
        const w = workspace({ rooms: {}, shared: ['R1'] });
        expect(await runTool('who_is', { asker: 'good', username: '@bob' }, w.port)).toEqual({
            kind: 'ok',
            text: '@\u200Bbob (Bob Builder)',
            structured: { username: 'bob', name: 'Bob Builder', bot: false },
        });
        const bot = await runTool('who_is', { asker: 'good', username: 'deploybot' }, w.port);
        expect(bot).toMatchObject({ structured: { username: 'deploybot', bot: true } });
        expect(bot.kind === 'ok' && bot.text.endsWith(', a bot')).toBe(true);
        expect(JSON.stringify(bot)).not.toMatch(/\\n|\[bot\]/);
        expect(await runTool('who_is', { asker: 'good', username: 'alice' }, w.port)).toMatchObject({ kind: 'ok', text: '@\u200Balice' });
        expect(w.logs.at(-1)).toBe('MCP who_is: user ALICE for user ALICE.');
    });

    it('nobody, and someone the asker shares no room with, get the same answer; a malformed name is bad arguments', async () => {
        const w = workspace({ rooms: {}, shared: ['R1'] });
        const none = { kind: 'error', text: 'Not found among the people who share a room with the person who asked and the bot.' };
        expect(await runTool('who_is', { asker: 'good', username: 'eve' }, w.port)).toEqual(none);
        expect(await runTool('who_is', { asker: 'good', username: 'nobody' }, w.port)).toEqual(none);
        expect(w.logs).toEqual(['MCP who_is for user ALICE: not found among their rooms.', 'MCP who_is for user ALICE: not found among their rooms.']);
        expect((await runTool('who_is', { asker: 'good', username: 'a b' }, w.port)).kind).toBe('bad-arguments');
        expect((await runTool('who_is', { asker: 'good', username: 'x'.repeat(65) }, w.port)).kind).toBe('bad-arguments');
    });
});
