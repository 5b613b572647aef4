import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { resumeCommand, SessionCommandPorts, sessionsCommand, titleCommand } from '../../../src/commands/sessionCommands';
import { searchCommand } from '../../../src/commands/sessionSearch';
import { EngineSessionIndex } from '../../../src/engine/adapters/engineSessionIndex';
import { memberships } from '../../../src/engine/adapters/membership';
import { HermesSessions } from '../../../src/hermes/sessionsApi';
import { TranscriptMessage } from '../../../src/hermes/sessionsApi';
import { OwnedSession } from '../../../src/sessions/sessionIndex';
import { isSharedKey } from '../../../src/sessions/sessionKey';
import { shownTitle } from '../../../src/sessions/titles';
import { AskerTokens } from '../../../src/engine/adapters/askerTokens';
import { askerToken } from '../../../src/security/askerToken';
import { MemoryPersistence } from '../../support/memoryPersistence';
import { MemorySessions, MemoryTurnStore, queuedTurn } from '../../support/turnPorts';

/**
 * Issue 31, items 3 and 4, in the core: who may list, search and resume which session now. A
 * shared session stays in its conversation and with its current members; a session goes on in
 * one conversation at a time; titles someone else chose are shown as plain text.
 */
const DM = 'agent:main:rocketchat:dm:DMALICE';
const THREAD = 'agent:main:rocketchat:channel:GRP:T1';
const MINE_IN_GRP = 'agent:main:rocketchat:channel:GRP:alice1';
const ADMIN_DM = 'agent:main:rocketchat:dm:DMADMIN';
const T0 = Date.parse('2026-12-01T10:00:00Z');

const inThread = (sessionId: string, startedAt: number): OwnedSession => ({ sessionId, key: THREAD, roomId: 'GRP', threadId: 'T1', kind: 'room', startedAt });
const inDm = (sessionId: string, startedAt: number): OwnedSession => ({ sessionId, key: DM, roomId: 'DMALICE', kind: 'dm', startedAt });

interface World {
    ports: SessionCommandPorts;
    store: MemoryPersistence;
    sessions: MemorySessions;
    turns: MemoryTurnStore;
    /** The rooms alice is a member of now. */
    aliceRooms: Set<string>;
}

/** Hermes's side: titles and transcripts by session id. */
function fakeHermes(known: Record<string, { title?: string; transcript?: TranscriptMessage[] }>): HermesSessions {
    return {
        list: async () => Object.entries(known).map(([id, s]) => ({ id, title: s.title })),
        info: async (id: string) => (known[id] ? { id, title: known[id].title } : undefined),
        transcript: async (id: string) => known[id]?.transcript ?? [],
        setTitle: async () => 'set',
    } as unknown as HermesSessions;
}

async function world(over: Partial<SessionCommandPorts> = {}): Promise<World> {
    const store = new MemoryPersistence();
    const index = new EngineSessionIndex(store.read, store.write);
    // The group thread's shared session, asked in by alice and bob; alice's own DM session.
    await index.add('alice1', inThread('rc_thread', T0));
    await index.add('bob1', inThread('rc_thread', T0 + 1));
    await index.add('alice1', inDm('rc_dm', T0 + 2));
    const sessions = new MemorySessions();
    await sessions.save({ key: THREAD, generation: 0, sessionId: 'rc_thread', turns: 3 });
    await sessions.save({ key: DM, generation: 0, sessionId: 'rc_dm', turns: 2 });
    const turns = new MemoryTurnStore();
    const aliceRooms = new Set(['DMALICE', 'GRP']);
    const ports: SessionCommandPorts = {
        api: fakeHermes({
            rc_thread: { title: 'Offsite plan', transcript: [{ role: 'user', content: 'the offsite budget is 900', timestamp: T0 / 1000 }] },
            rc_dm: { title: 'My notes', transcript: [{ role: 'user', content: 'my budget notes', timestamp: T0 / 1000 + 1 }] },
        }),
        index,
        sessions,
        turns,
        log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
        timeZone: 'UTC',
        isAdmin: false,
        now: () => T0 + 10_000,
        memberOf: async (roomId) => aliceRooms.has(roomId),
        ...over,
    };
    return { ports, store, sessions, turns, aliceRooms };
}

const DM_SCOPE = { roomId: 'DMALICE', kind: 'dm' as const };
const GRP_SCOPE = { roomId: 'GRP', kind: 'room' as const, roomType: 'p' };

describe('a shared session stays in its conversation, with its members of now (issue 31, item 3)', () => {
    it('is not resumed in a DM, even by a member; in its own thread it is', async () => {
        const w = await world();
        expect(await resumeCommand('rc_thread', { id: 'alice1' }, DM, DM_SCOPE, w.ports)).toBe(
            '*Offsite plan* is the shared session of a room or thread: only its members can resume it, and only there.',
        );
        expect((await w.sessions.get(DM)).sessionId).toBe('rc_dm');
        // The thread moved on (/new); its members may go back to it there.
        await w.sessions.save({ key: THREAD, generation: 1, sessionId: 'rc_thread_next', turns: 0 });
        expect(await resumeCommand('Offsite plan', { id: 'alice1' }, THREAD, { ...GRP_SCOPE, threadId: 'T1' }, w.ports)).toContain(
            'Resumed *Offsite plan* here',
        );
        expect((await w.sessions.get(THREAD)).sessionId).toBe('rc_thread');
    });

    it('a title names the newest of its lineage she may resume here, before a shared one of another conversation', async () => {
        const w = await world();
        w.ports.api = fakeHermes({ rc_thread: { title: 'Plan #2' }, rc_dm: { title: 'Plan' } });
        await w.sessions.save({ key: DM, generation: 1, sessionId: 'rc_dm_next', turns: 0 });
        expect(await resumeCommand('plan', { id: 'alice1' }, MINE_IN_GRP, GRP_SCOPE, w.ports)).toContain('Resumed *Plan* here');
        expect((await w.sessions.get(MINE_IN_GRP)).sessionId).toBe('rc_dm');
    });

    it('once alice is removed from the group, its sessions are not listed, searched or resumed for her', async () => {
        const w = await world();
        expect(await sessionsCommand('all', 'alice1', DM, w.ports)).toContain('Offsite plan');
        w.aliceRooms.delete('GRP');
        const all = await sessionsCommand('all', 'alice1', DM, w.ports);
        expect(all.split('\n')[0]).toBe('*All your sessions* (1), newest first:');
        expect(all).not.toContain('Offsite plan');
        const found = await searchCommand('all budget', 'alice1', DM, () => undefined, w.ports);
        expect(found).toContain('my **budget** notes');
        expect(found).not.toContain('offsite');
        expect(await resumeCommand('rc_thread', { id: 'alice1' }, DM, DM_SCOPE, w.ports)).toBe(
            'None of your sessions matches “rc_thread”. `/hermes sessions all` lists them.',
        );
        // In the thread's own scope too: an entry of a room she left is nothing to her.
        expect(await sessionsCommand('', 'alice1', THREAD, w.ports)).toBe('You have no sessions in this conversation yet.');
    });

    it('without a membership port no room session is listed or searched (fail closed); DM sessions are', async () => {
        const w = await world({ memberOf: undefined });
        const all = await sessionsCommand('all', 'alice1', DM, w.ports);
        expect(all.split('\n')[0]).toBe('*All your sessions* (1), newest first:');
        expect(all).toContain('My notes');
        expect(await searchCommand('all offsite', 'alice1', DM, () => undefined, w.ports)).toBe('No message with “offsite” in the 1 sessions searched.');
        // A membership read that fails is "not a member".
        const failing = await world({ memberOf: async () => Promise.reject(new Error('down')) });
        expect(await sessionsCommand('all', 'alice1', DM, failing.ports)).toBe('You have no sessions through this app yet.');
    });
});

describe('a session goes on in one conversation at a time (issue 31, item 4)', () => {
    const ELSEWHERE =
        "*My notes* is in use in another conversation (it is that conversation's session, or a turn of it is still running there). A session goes on in one conversation at a time: start a new one there first (`/hermes new`), or resume another.";

    it('her DM session is not resumed in the group while it is the DM’s session; after /new in the DM it is', async () => {
        const w = await world();
        expect(await resumeCommand('My notes', { id: 'alice1' }, MINE_IN_GRP, GRP_SCOPE, w.ports)).toBe(ELSEWHERE);
        expect((await w.sessions.get(MINE_IN_GRP)).sessionId).not.toBe('rc_dm');
        await w.sessions.save({ key: DM, generation: 1, sessionId: 'rc_dm_next', turns: 0 });
        expect(await resumeCommand('My notes', { id: 'alice1' }, MINE_IN_GRP, GRP_SCOPE, w.ports)).toContain('Resumed *My notes* here');
        expect((await w.sessions.get(MINE_IN_GRP)).sessionId).toBe('rc_dm');
    });

    it('nor while a turn sent on it before the DM moved on is still running there', async () => {
        const w = await world();
        await w.sessions.save({ key: DM, generation: 1, sessionId: 'rc_dm_next', turns: 0 });
        await w.turns.save(queuedTurn('RUNNING', { sessionKey: DM, roomId: 'DMALICE', kind: 'dm', phase: 'running', sessionId: 'rc_dm' }));
        expect(await resumeCommand('rc_dm', { id: 'alice1' }, MINE_IN_GRP, GRP_SCOPE, w.ports)).toBe(ELSEWHERE);
    });

    it("an admin resuming any session by id obeys it too: found through the index's entries of that session", async () => {
        const w = await world({ isAdmin: true, memberOf: async () => true });
        expect(await resumeCommand('rc_dm', { id: 'admin1' }, ADMIN_DM, { roomId: 'DMADMIN', kind: 'dm' }, w.ports)).toBe(ELSEWHERE);
        // An admin may still take a shared session elsewhere, once its thread moved on.
        await w.sessions.save({ key: THREAD, generation: 1, sessionId: 'rc_thread_next', turns: 0 });
        expect(await resumeCommand('rc_thread', { id: 'admin1' }, ADMIN_DM, { roomId: 'DMADMIN', kind: 'dm' }, w.ports)).toContain(
            'Resumed *Offsite plan* here',
        );
    });
});

describe('titles someone else chose are plain text where shown (issue 31, item 8)', () => {
    const HOSTILE = '[click](https://evil.example) @all **now** <https://x.example|y> `code` #general';
    const SHOWN = 'click (https:\u200B//evil.example) @\u200Ball now https:\u200B//x.example y code #\u200Bgeneral';

    it('marks, links and mentions are neutralised; words and in-word underscores stay', () => {
        expect(shownTitle(HOSTILE)).toBe(SHOWN);
        expect(shownTitle('deploy_notes _v2_ ~x~ > quote')).toBe('deploy_notes v2 x quote');
        expect(shownTitle('see www.evil.example')).toBe('see www.\u200Bevil.example');
        expect(shownTitle('**')).toBe('…');
    });

    it('in the session list, search results and the title command', async () => {
        const w = await world();
        w.ports.api = fakeHermes({ rc_thread: { title: HOSTILE, transcript: [{ role: 'user', content: 'the offsite budget', timestamp: T0 / 1000 }] } });
        const list = await sessionsCommand('', 'alice1', THREAD, w.ports);
        expect(list).toContain(`• **${SHOWN}** · `);
        expect(list).not.toContain('[click]');
        const found = await searchCommand('budget', 'alice1', THREAD, () => undefined, w.ports);
        expect(found).toContain(`• **${SHOWN}** · `);
        expect(found).not.toContain('@all');
        expect(await titleCommand('', THREAD, w.ports)).toBe(`This conversation's session is titled *${SHOWN}*.`);
    });
});

describe('session keys read back', () => {
    it.each([
        ['agent:main:rocketchat:channel:R:T', 'T', true],
        ['agent:main:rocketchat:channel:R:T:U', 'T', false],
        ['agent:main:rocketchat:channel:R', undefined, true],
        ['agent:main:rocketchat:channel:R:U', undefined, false],
        ['agent:ops:rocketchat:channel:R', undefined, true],
        ['agent:main:rocketchat:dm:R', undefined, false],
        ['agent:main:rocketchat:dm:R:T', 'T', false],
        ['something else', undefined, false],
    ])('%s (thread %s) shared: %s', (key, threadId, shared) => {
        expect(isSharedKey(key, threadId)).toBe(shared);
    });
});

describe('the session index by session', () => {
    it('finds every entry of a session, whoever owns it; entries of the earlier layout are not found that way but still listed', async () => {
        const store = new MemoryPersistence();
        const index = new EngineSessionIndex(store.read, store.write);
        await index.add('alice1', inDm('rc_dm', 1));
        await index.add('admin1', { ...inDm('rc_dm', 2), key: ADMIN_DM, roomId: 'DMADMIN' });
        await index.add('alice1', inThread('rc_thread', 3));
        expect((await index.ofSession('rc_dm')).map((e) => e.key).sort()).toEqual([ADMIN_DM, DM]);
        const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
        store.seed({ ...inDm('rc_old', 4), userId: 'alice1' }, [misc('hermes-owned:alice1:rc_old:x'), misc('hermes-owner:alice1')]);
        expect(await index.ofSession('rc_old')).toEqual([]);
        expect((await index.owned('alice1')).map((e) => e.sessionId).sort()).toEqual(['rc_dm', 'rc_old', 'rc_thread']);
        // Written again (a second resume): still one record.
        await index.add('alice1', inDm('rc_dm', 5));
        expect(await index.ofSession('rc_dm')).toHaveLength(2);
    });
});

describe('membership for the session commands (engine)', () => {
    it("reads a person's rooms once per call, however many rooms are asked about", async () => {
        const reads: string[] = [];
        const read = {
            getUserReader: () => ({
                getUserRoomIds: async (userId: string) => {
                    reads.push(userId);
                    return userId === 'alice1' ? ['GRP', 'DMALICE'] : [];
                },
            }),
        } as unknown as IRead;
        const memberOf = memberships(read);
        expect(await Promise.all(['GRP', 'DMALICE', 'OTHER'].map((r) => memberOf('alice1', r)))).toEqual([true, true, false]);
        expect(await memberOf('bob1', 'GRP')).toBe(false);
        expect(reads).toEqual(['alice1', 'bob1']);
    });
});

describe('asker tokens: the newest of the conversation and of the Hermes session (issue 31, item 3)', () => {
    const KEY = 'asker-key-0123456789abcdef-0123456789abcdef';
    const nowS = Math.floor(T0 / 1000);
    let store: MemoryPersistence;
    let tokens: AskerTokens;
    let clock: number;

    beforeEach(() => {
        store = new MemoryPersistence();
        // Each mark a millisecond after the one before, as turns of a conversation follow each other.
        clock = T0;
        tokens = new AskerTokens(store.read, store.write, () => clock++);
    });

    it("after a resume, a turn in the other conversation retires the earlier asker's token in the shared transcript", async () => {
        // Alice's DM turn on rc_dm; she starts afresh there and resumes rc_dm in a shared thread, where bob asks.
        const alices = askerToken(KEY, 'alice1', 'DMALICE', nowS);
        const bobs = askerToken(KEY, 'bob1', 'GRP', nowS + 1);
        await tokens.markNewest(DM, alices, 'rc_dm');
        expect(await tokens.isNewest(alices)).toBe(true);
        await tokens.markNewest(THREAD, bobs, 'rc_dm');
        expect(await tokens.isNewest(alices)).toBe(false);
        expect(await tokens.isNewest(bobs)).toBe(true);
    });

    it('a newer turn of the same conversation on another session retires it too; other conversations and sessions keep theirs', async () => {
        const first = askerToken(KEY, 'alice1', 'DMALICE', nowS);
        const second = askerToken(KEY, 'alice1', 'DMALICE', nowS + 1);
        const elsewhere = askerToken(KEY, 'bob1', 'GRP', nowS + 2);
        await tokens.markNewest(DM, first, 'rc_dm');
        await tokens.markNewest(THREAD, elsewhere, 'rc_thread');
        await tokens.markNewest(DM, second, 'rc_dm_next');
        expect(await tokens.isNewest(first)).toBe(false);
        expect(await tokens.isNewest(second)).toBe(true);
        expect(await tokens.isNewest(elsewhere)).toBe(true);
    });

    it('a conversation marked by the previous version (no session) gives way to a mark of this one, and the other way round', async () => {
        const old = askerToken(KEY, 'alice1', 'GRP', nowS);
        const mine = askerToken(KEY, 'bob1', 'GRP', nowS + 1);
        const later = askerToken(KEY, 'carol1', 'GRP', nowS + 2);
        await tokens.markNewest(THREAD, old);
        await tokens.markNewest(THREAD, mine, 'rc_thread');
        expect(await tokens.isNewest(old)).toBe(false);
        expect(await tokens.isNewest(mine)).toBe(true);
        await tokens.markNewest(THREAD, later);
        expect(await tokens.isNewest(mine)).toBe(false);
        expect(await tokens.isNewest(later)).toBe(true);
    });

    it('marking stays two writes; checking is the token read, then both pointer reads side by side', async () => {
        const token = askerToken(KEY, 'alice1', 'DMALICE', nowS);
        store.resetCalls();
        await tokens.markNewest(DM, token, 'rc_dm');
        expect(store.calls.sort()).toEqual(['create', 'updateByAssociations']);
        store.resetCalls();
        expect(await tokens.isNewest(token)).toBe(true);
        expect(store.calls).toEqual(['readByAssociations', 'readByAssociations', 'readByAssociations']);
    });
});
