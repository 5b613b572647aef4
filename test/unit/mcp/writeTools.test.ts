import { translator } from '../../../src/i18n/messages';
import { ApproveWritePorts, decideWrite } from '../../../src/mcp/approveWrite';
import { runTool, toolsFor } from '../../../src/mcp/tools';
import { WorkspacePort } from '../../../src/mcp/workspace';
import {
    clickRefusal,
    parseWriteValue,
    postedText,
    targetLabel,
    WRITE_TTL_MS,
    writeApprovalView,
    WriteRequest,
    WriteTarget,
} from '../../../src/mcp/writeRequest';
import { WritePort, writeTool } from '../../../src/mcp/writeTools';
import { threadOfKey } from '../../../src/sessions/sessionKey';

const t = translator('en');
const ENG: WriteTarget = { roomId: 'ENG', roomType: 'c', roomName: 'eng', kind: 'room' };
const NOW = 1_800_000_000_000;

function request(over: Partial<WriteRequest> = {}): WriteRequest {
    return {
        id: '0123456789abcdef',
        kind: 'post',
        askerId: 'ALICE',
        askerUsername: 'alice',
        conversation: { roomId: 'TEAM' },
        target: ENG,
        text: 'hello @all and @here, ＠channel stays? @alice too',
        createdAt: NOW,
        state: 'pending',
        approvalMessageId: 'APPROVAL',
        ...over,
    };
}

const logs: string[] = [];
const log = { info: (m: string) => logs.push(`info ${m}`), warn: (m: string) => logs.push(`warn ${m}`), debug: () => undefined, error: () => undefined };

describe('writeRequest', () => {
    it('parses only its own button values', () => {
        expect(parseWriteValue('0123456789abcdef|approve')).toEqual({ id: '0123456789abcdef', choice: 'approve' });
        expect(parseWriteValue('0123456789abcdef|decline')).toEqual({ id: '0123456789abcdef', choice: 'decline' });
        for (const bad of [
            undefined,
            '',
            '0123456789abcdef|once',
            '0123456789ABCDEF|approve',
            '0123456789abcde|approve',
            'x0123456789abcdef|approve',
            '0123456789abcdef|approve|x',
        ]) {
            expect(parseWriteValue(bad)).toBeUndefined();
        }
    });

    it('lets only its person decide, once, before it expires, on the message it was shown in', () => {
        const rec = request();
        const click = { userId: 'ALICE', roomId: 'TEAM', messageId: 'APPROVAL' };
        expect(clickRefusal(rec, click, NOW)).toBeUndefined();
        expect(clickRefusal(rec, { ...click, messageId: undefined }, NOW + WRITE_TTL_MS)).toBeUndefined();
        expect(clickRefusal(rec, click, NOW + WRITE_TTL_MS + 1)).toBe('expired');
        expect(clickRefusal(rec, { ...click, userId: 'BOB' }, NOW)).toBe('not-yours');
        expect(clickRefusal(rec, { ...click, roomId: 'ENG' }, NOW)).toBe('not-pending');
        expect(clickRefusal(rec, { ...click, messageId: 'OTHER' }, NOW)).toBe('not-pending');
        expect(clickRefusal(request({ approvalMessageId: undefined }), click, NOW)).toBe('not-pending');
        for (const state of ['done', 'declined', 'expired', 'failed'] as const) {
            expect(clickRefusal(request({ state }), click, NOW)).toBe('not-pending');
        }
        // Another person on another message: the message rule first (nothing said about whose it is).
        expect(clickRefusal(rec, { userId: 'BOB', roomId: 'TEAM', messageId: 'OTHER' }, NOW)).toBe('not-pending');
    });

    it('names the target as people read it', () => {
        expect(targetLabel(ENG, t)).toBe('#eng');
        expect(targetLabel({ ...ENG, threadId: 'ROOT' }, t)).toBe('a thread in #eng');
        expect(targetLabel({ roomId: 'DM', roomType: 'd', roomName: 'alice', kind: 'dm' }, t)).toBe('the direct messages with the bot');
        expect(targetLabel({ ...ENG, roomName: undefined }, t)).toBe('the direct messages with the bot');
    });

    it('shows the exact text whole, hidden characters made visible, with Approve and Decline', () => {
        const view = writeApprovalView(request({ text: 'a\u202Eb ```x```' }), t);
        expect(view.text).toBe(
            ':memo: *Hermes asks to post* in #eng for @alice:\n````\na⟨U+202E⟩b ```x```\n````\n' +
                'Only @alice can decide. Nothing is posted before; the request expires in 15 minutes.',
        );
        expect(view.buttons).toEqual([
            { actionId: 'hermes-write', label: 'Post it', value: '0123456789abcdef|approve', style: 'primary' },
            { actionId: 'hermes-write', label: 'Decline', value: '0123456789abcdef|decline', style: 'danger' },
        ]);
        const scheduled = writeApprovalView(request({ kind: 'schedule', schedule: 'every day 09:00', text: 'Summarise' }), t);
        expect(scheduled.text).toBe(
            ':alarm_clock: *Hermes asks to schedule a prompt* in #eng for @alice, when:\n```\nevery day 09:00\n```\nThe prompt:\n```\nSummarise\n```\n' +
                'Only @alice can decide. Nothing is scheduled before; the request expires in 15 minutes.',
        );
        expect(scheduled.buttons[0].label).toBe('Schedule it');
    });

    it('posts what was approved with room-wide mentions made inert and a line naming the person', () => {
        expect(postedText(request(), t)).toBe(
            'hello @\u200Ball and @\u200Bhere, ＠\u200Bchannel stays? @alice too\n\n_Posted by Hermes for @alice, who approved this text._',
        );
        expect(postedText(request({ text: '@allison @hereford' }), t)).toBe('@allison @hereford\n\n_Posted by Hermes for @alice, who approved this text._');
    });
});

function writePort(over: Partial<WritePort> = {}): WritePort & { proposed: WriteRequest[]; tokens: string[] } {
    const proposed: WriteRequest[] = [];
    const tokens: string[] = [];
    return {
        proposed,
        tokens,
        target: async (_u, roomId, threadId) => ({ ok: true, target: { ...ENG, roomId, threadId }, username: 'alice' }),
        scheduleRefusal: async () => undefined,
        proposedWith: async () => [...proposed],
        propose: async (rec, token) => {
            tokens.push(token);
            proposed.push(rec);
            return true;
        },
        newId: () => 'feedfacefeedface',
        now: () => NOW,
        log,
        ...over,
    };
}

describe('writeTool', () => {
    const who = { userId: 'ALICE', roomId: 'TEAM', threadId: 'ROOT', token: 'TOKEN' };

    it('proposes in the token’s conversation and returns at once', async () => {
        const ports = writePort();
        const out = await writeTool('post_message', { text: 'hi', room_id: 'ENG' }, who, ports);
        expect(out).toEqual({
            kind: 'ok',
            text: 'Awaiting approval: @alice was shown the message with Approve and Decline buttons (request feedfacefeedface, expires in 15 minutes). Nothing is done until they approve.',
            structured: { request_id: 'feedfacefeedface', status: 'awaiting_approval', room_id: 'ENG' },
        });
        expect(ports.tokens).toEqual(['TOKEN']);
        expect(ports.proposed).toEqual([
            {
                id: 'feedfacefeedface',
                kind: 'post',
                askerId: 'ALICE',
                askerUsername: 'alice',
                conversation: { roomId: 'TEAM', threadId: 'ROOT' },
                target: { ...ENG, threadId: undefined },
                text: 'hi',
                schedule: undefined,
                createdAt: NOW,
                state: 'pending',
            },
        ]);
    });

    it('at most three requests of one token await approval: a fourth is refused until one is decided or expires', async () => {
        logs.length = 0;
        const ports = writePort();
        for (let i = 0; i < 3; i++) {
            expect((await writeTool('post_message', { text: `m${i}` }, who, ports)).kind).toBe('ok');
        }
        expect(await writeTool('post_message', { text: 'm3' }, who, ports)).toEqual({
            kind: 'error',
            text: 'Not done: 3 requests already await the approval of the person who asked. Wait for their decision.',
        });
        expect(ports.proposed).toHaveLength(3);
        expect(logs.pop()).toBe('warn MCP post_message refused for user ALICE: 3 requests of this turn already await approval.');
        // One decided, one expired: room for two more.
        ports.proposed[0].state = 'done';
        ports.proposed[1].createdAt = NOW - WRITE_TTL_MS - 1;
        expect((await writeTool('post_message', { text: 'm4' }, who, ports)).kind).toBe('ok');
        expect((await writeTool('post_message', { text: 'm5' }, who, ports)).kind).toBe('ok');
        expect((await writeTool('post_message', { text: 'm6' }, who, ports)).kind).toBe('error');
    });

    it('without a room: the conversation’s room, its main channel unless a thread is named', async () => {
        const seen: unknown[] = [];
        const ports = writePort({ target: async (u, r, th) => (seen.push([u, r, th]), { ok: true, target: ENG, username: 'alice' }) });
        await writeTool('post_message', { text: 'hi' }, who, ports);
        await writeTool('post_message', { text: 'hi', thread_id: 'T2' }, who, ports);
        expect(seen).toEqual([
            ['ALICE', 'TEAM', undefined],
            ['ALICE', 'TEAM', 'T2'],
        ]);
    });

    it('refuses a target that is not the person’s, logging ids only; proposes nothing', async () => {
        logs.length = 0;
        const ports = writePort({ target: async () => ({ ok: false, reason: 'caller-not-member' }) });
        const out = await writeTool('post_message', { text: 'secret words', room_id: 'GRP', thread_id: 'T' }, who, ports);
        expect(out).toEqual({ kind: 'error', text: 'Not allowed: the person who asked cannot have the bot post there.' });
        expect(ports.proposed).toEqual([]);
        expect(logs).toEqual(['warn MCP post_message in room GRP thread T refused for user ALICE: caller-not-member.']);
    });

    it('a post never meets the cron checks; its proposal is logged with ids only', async () => {
        logs.length = 0;
        const ports = writePort({ scheduleRefusal: async () => 'refused' });
        expect((await writeTool('post_message', { text: 'words', room_id: 'ENG' }, who, ports)).kind).toBe('ok');
        expect(ports.proposed[0].schedule).toBeUndefined();
        expect(logs).toEqual(['info MCP post_message: request feedfacefeedface for room ENG awaits the approval of user ALICE.']);
    });

    it('a schedule meets the cron checks first; a refused post of the approval is told', async () => {
        logs.length = 0;
        const refused = writePort({
            scheduleRefusal: async (w, target, schedule, prompt) => `no: ${w.id} ${w.username} ${target.roomId} ${schedule} ${prompt}`,
        });
        expect(await writeTool('schedule_prompt', { schedule: 'every 30m', prompt: 'p', room_id: 'ENG' }, who, refused)).toEqual({
            kind: 'error',
            text: 'no: ALICE alice ENG every 30m p',
        });
        expect(refused.proposed).toEqual([]);
        expect(logs).toEqual(['info MCP schedule_prompt in room ENG refused for user ALICE: the cron checks.']);
        logs.length = 0;
        const ok = writePort();
        const out = await writeTool('schedule_prompt', { schedule: 'every 30m', prompt: 'p' }, who, ok);
        expect(out.kind).toBe('ok');
        expect(out.kind === 'ok' && out.text).toContain('was shown the scheduled prompt');
        expect(ok.proposed[0]).toMatchObject({ kind: 'schedule', schedule: 'every 30m', text: 'p' });
        const mute = writePort({ propose: async () => false });
        expect(await writeTool('post_message', { text: 'x' }, who, mute)).toEqual({
            kind: 'error',
            text: 'The approval could not be shown in the conversation: nothing was done.',
        });
        expect(logs.pop()).toBe('warn MCP post_message for user ALICE: the approval could not be posted in room TEAM.');
    });
});

describe('runTool with the write tools', () => {
    const workspace = (valid: boolean): WorkspacePort =>
        ({
            asker: async () => (valid ? { ok: true, userId: 'ALICE', roomId: 'TEAM' } : { ok: false, reason: 'asker token bad signature' }),
            sharedRoomIds: async () => [],
            log,
        }) as unknown as WorkspacePort;

    it('lists them only when on; without their ports a call is an unknown tool', async () => {
        expect(toolsFor(false).map((x) => x.name)).toEqual(['list_rooms', 'read_messages', 'search_messages', 'who_is']);
        expect(toolsFor(true).map((x) => x.name)).toEqual(['list_rooms', 'read_messages', 'search_messages', 'who_is', 'post_message', 'schedule_prompt']);
        expect(await runTool('post_message', { asker: 'x', text: 'hi' }, workspace(true))).toEqual({
            kind: 'bad-arguments',
            text: 'Unknown tool: post_message',
        });
        expect(await runTool('drop_tables', {}, workspace(true), writePort())).toEqual({ kind: 'bad-arguments', text: 'Unknown tool: drop_tables' });
        expect(await runTool('x'.repeat(80), {}, workspace(true))).toEqual({ kind: 'bad-arguments', text: `Unknown tool: ${'x'.repeat(60)}` });
    });

    it('checks the arguments and the token before proposing', async () => {
        const ports = writePort();
        const bad = await runTool('post_message', { asker: 'x', text: '   ' }, workspace(true), ports);
        expect(bad).toEqual({ kind: 'bad-arguments', text: 'Invalid arguments for post_message: text String must contain at least 1 character(s)' });
        expect(await runTool('post_message', { asker: 'x', text: 'a'.repeat(3001) }, workspace(true), ports)).toMatchObject({ kind: 'bad-arguments' });
        expect(await runTool('post_message', { asker: 'x', text: 'hi', extra: 1 }, workspace(true), ports)).toMatchObject({ kind: 'bad-arguments' });
        expect(await runTool('post_message', { asker: 'x', text: 'hi' }, workspace(false), ports)).toEqual({
            kind: 'error',
            text: 'Not allowed: the asker token is not valid now. Use the token of the question you are answering.',
        });
        expect(ports.proposed).toEqual([]);
        expect((await runTool('post_message', { asker: 'x', text: '  hi  ' }, workspace(true), ports)).kind).toBe('ok');
        expect(ports.proposed[0].text).toBe('hi');
        expect(ports.tokens).toEqual(['x']);
    });
});

function approvePorts(rec: WriteRequest | undefined, over: Partial<ApproveWritePorts> = {}) {
    const seen = { saved: [] as WriteRequest[], settled: [] as string[], told: [] as string[], posted: [] as Array<[string, string]>, claims: [] as string[] };
    const ports: ApproveWritePorts = {
        get: async (id) => (rec && rec.id === id ? rec : undefined),
        save: async (r) => void seen.saved.push(r),
        claim: async (id) => (seen.claims.push(id), true),
        target: async () => ({ ok: true, target: ENG, username: 'alice' }),
        post: async (target, text) => (seen.posted.push([target.roomId, text]), 'POSTED'),
        schedule: async () => ({ added: 'added privately' }),
        settle: async (_r, text) => void seen.settled.push(text),
        tell: async (text) => void seen.told.push(typeof text === 'string' ? text : text(t)),
        link: (target, id) => `https://chat.example/channel/${target.roomName}?msg=${id}`,
        t,
        now: () => NOW + 1000,
        log,
        ...over,
    };
    return { ports, seen };
}

describe('decideWrite', () => {
    const click = { id: '0123456789abcdef', choice: 'approve' as const, userId: 'ALICE', username: 'alice', roomId: 'TEAM', messageId: 'APPROVAL' };

    it('approved: posts exactly the text, settles the approval with a link, claims once', async () => {
        logs.length = 0;
        const { ports, seen } = approvePorts(request({ text: 'ship it' }));
        expect(await decideWrite(click, ports)).toBe('done');
        expect(seen.claims).toEqual(['write:0123456789abcdef']);
        expect(seen.posted).toEqual([['ENG', 'ship it\n\n_Posted by Hermes for @alice, who approved this text._']]);
        expect(seen.saved.map((r) => r.state)).toEqual(['done']);
        expect(seen.settled).toEqual([':white_check_mark: Posted in [#eng](https://chat.example/channel/eng?msg=POSTED), approved by @alice.']);
        expect(seen.told).toEqual([]);
        expect(logs).toEqual(['info MCP write request 0123456789abcdef: posted message POSTED in room ENG for user ALICE.']);
        const noLink = approvePorts(request(), { link: () => undefined });
        await decideWrite(click, noLink.ports);
        expect(noLink.seen.settled).toEqual([':white_check_mark: Posted in #eng, approved by @alice.']);
    });

    it('someone else, a stale or unknown request, a lost race: told privately, nothing done', async () => {
        for (const [rec, who, over, expected] of [
            [request(), { userId: 'BOB', username: 'bob' }, {}, 'not-yours'],
            [request({ state: 'done' }), {}, {}, 'not-pending'],
            [undefined, {}, {}, 'not-pending'],
            [request(), {}, { claim: async () => false }, 'not-pending'],
        ] as const) {
            const { ports, seen } = approvePorts(rec, over);
            expect(await decideWrite({ ...click, ...who }, ports)).toBe(expected);
            expect(seen.told).toEqual([
                expected === 'not-yours' ? 'Only the person Hermes asked can decide this request.' : 'This request is no longer pending.',
            ]);
            expect([seen.posted, seen.saved, seen.settled]).toEqual([[], [], []]);
        }
    });

    it('expired: settles it as expired and tells the person; nothing posted', async () => {
        const { ports, seen } = approvePorts(request(), { now: () => NOW + WRITE_TTL_MS + 1 });
        expect(await decideWrite(click, ports)).toBe('expired');
        expect(seen.posted).toEqual([]);
        expect(seen.saved.map((r) => r.state)).toEqual(['expired']);
        expect(seen.settled).toEqual([':hourglass: This request expired: nothing was done in #eng.']);
        expect(seen.told).toEqual([':hourglass: This request expired: nothing was done in #eng.']);
    });

    it('declined: nothing posted, the approval says who declined', async () => {
        logs.length = 0;
        const { ports, seen } = approvePorts(request());
        expect(await decideWrite({ ...click, choice: 'decline' }, ports)).toBe('declined');
        expect(logs).toEqual(['info MCP write request 0123456789abcdef declined by user ALICE.']);
        expect(seen.posted).toEqual([]);
        expect(seen.saved.map((r) => r.state)).toEqual(['declined']);
        expect(seen.settled).toEqual([':no_entry_sign: Declined by @alice: nothing was done in #eng.']);
    });

    it('the target no longer the person’s, or the server refusing the post: failed, said so', async () => {
        logs.length = 0;
        const gone = approvePorts(request(), { target: async () => ({ ok: false, reason: 'caller-not-member' }) });
        expect(await decideWrite(click, gone.ports)).toBe('failed');
        expect(logs).toEqual(['warn MCP write request 0123456789abcdef of user ALICE not done: caller-not-member in room ENG now.']);
        expect(gone.seen.posted).toEqual([]);
        expect(gone.seen.settled).toEqual([':warning: Not done: the bot can no longer post in #eng for this person.']);
        const refused = approvePorts(request(), { post: async () => Promise.reject(new Error('error-action-not-allowed')) });
        expect(await decideWrite(click, refused.ports)).toBe('failed');
        expect(refused.seen.saved.map((r) => r.state)).toEqual(['failed']);
        expect(refused.seen.settled).toEqual([':warning: Not done: the bot can no longer post in #eng for this person.']);
        expect(logs.slice(1)).toEqual(['warn MCP write request 0123456789abcdef: the server refused the post in room ENG (Error).']);
    });

    it('a schedule: added with the cron checks as they stand now, the confirmation told privately', async () => {
        const rec = request({ kind: 'schedule', schedule: 'every 30m', text: 'p' });
        logs.length = 0;
        const ok = approvePorts(rec);
        expect(await decideWrite(click, ok.ports)).toBe('done');
        expect(logs).toEqual(['info MCP write request 0123456789abcdef: prompt scheduled in room ENG for user ALICE.']);
        expect(ok.seen.settled).toEqual([':white_check_mark: Scheduled in #eng, approved by @alice.']);
        expect(ok.seen.told).toEqual(['added privately']);
        expect(ok.seen.posted).toEqual([]);
        const no = approvePorts(rec, { schedule: async () => ({ refusal: 'The room is full.' }) });
        expect(await decideWrite(click, no.ports)).toBe('failed');
        expect(no.seen.settled).toEqual([':warning: Not done in #eng: The room is full.']);
    });
});

describe('threadOfKey', () => {
    it('reads the thread of a conversation key, never a person’s id', () => {
        expect(threadOfKey('agent:main:rocketchat:dm:DM1', 'U')).toBeUndefined();
        expect(threadOfKey('agent:main:rocketchat:dm:DM1:T1', 'U')).toBe('T1');
        expect(threadOfKey('agent:main:rocketchat:channel:R1', 'U')).toBeUndefined();
        expect(threadOfKey('agent:main:rocketchat:channel:R1:U', 'U')).toBeUndefined();
        expect(threadOfKey('agent:ops:rocketchat:channel:R1:T1', 'U')).toBe('T1');
        expect(threadOfKey('agent:main:rocketchat:channel:R1:T1:U', 'U')).toBe('T1');
        expect(threadOfKey('agent:main:rocketchat:oneoff:bg.0badc0de', 'U')).toBeUndefined();
        expect(threadOfKey('agent:main:rocketchat:oneoff:R1:T1', 'U')).toBeUndefined();
        expect(threadOfKey('agent:main:slack:channel:R1:T1', 'U')).toBeUndefined();
        expect(threadOfKey('other:main:rocketchat:channel:R1:T1', 'U')).toBeUndefined();
    });
});
