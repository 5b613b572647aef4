import { IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { Notice, noticeModify } from '../../support/noticeModify';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { AppState } from '../../../src/engine/appState';
import { Gate, Subject } from '../../../src/engine/entry/gate';
import { FetchTransport } from '../../../src/hermes/fetchTransport';
import { memoryLog } from '../../support/fakeEngine';
import { MemoryPersistence } from '../../support/memoryPersistence';

/**
 * The gate (src/engine/entry/gate.ts) over a small fake server: which reads it makes for a
 * request's claims, what it lets through, and what a refusal leaves (one private line in the
 * claimed room, a log line with ids only). The end-to-end table is test/e2e/trustBoundary.test.ts.
 */
const user = (id: string, roles: string[] = ['user']) => ({ id, username: id, roles }) as unknown as IUser;
const room = (id: string, type: string, extra: Partial<IRoom> = {}) => ({ id, type, slugifiedName: id, ...extra }) as unknown as IRoom;

const ROOMS: Record<string, IRoom> = {
    general: room('general', 'c'),
    secret: room('secret', 'p'),
    news: room('news', 'c', { isReadOnly: true }),
    alicebot: room('alicebot', 'd', { userIds: ['alice', 'bot'] }),
};
const MEMBERS: Record<string, string[]> = {
    bot: ['general', 'secret', 'news'],
    alice: ['general', 'secret', 'news'],
    mallory: ['general', 'news'],
    mod: ['news'],
};
const MESSAGES: Record<string, IMessage> = {
    m1: { id: 'm1', room: ROOMS.secret } as IMessage,
    m2: { id: 'm2', room: ROOMS.general } as IMessage,
};

function world() {
    const reads: string[] = [];
    const notices: Notice[] = [];
    const store = new MemoryPersistence();
    const settings: Record<string, unknown> = { hermes_url: 'http://127.0.0.1:9', hermes_api_key: 'k'.repeat(24) };
    const read = {
        getEnvironmentReader: () => ({ getSettings: () => ({ getValueById: async (id: string) => settings[id] }) }),
        getPersistenceReader: () => store.read,
        getUserReader: () => ({
            getAppUser: async () => user('bot'),
            getById: async (id: string) => user(id),
            getUserRoomIds: async (id: string) => {
                reads.push(`rooms of ${id}`);
                return MEMBERS[id] ?? [];
            },
        }),
        getRoomReader: () => ({
            getById: async (id: string) => {
                reads.push(`room ${id}`);
                return ROOMS[id];
            },
            getOwners: async (id: string) => {
                reads.push(`owners of ${id}`);
                return [];
            },
            getModerators: async (id: string) => {
                reads.push(`moderators of ${id}`);
                return id === 'news' ? [user('mod')] : [];
            },
        }),
        getMessageReader: () => ({
            getById: async (id: string) => {
                reads.push(`message ${id}`);
                return MESSAGES[id];
            },
        }),
    } as unknown as IRead;
    const modify = noticeModify(notices);
    const log = memoryLog();
    const gate = new Gate(new AppState(new FetchTransport()));
    const person = (who: IUser, subject: Subject) =>
        gate.person('command', { read, modify, persistence: store.write as IPersistence, logger: log.logger as never }, who, subject);
    return { person, reads, notices, log, settings };
}

const REFUSED = '`/hermes` is not available here.';

describe('Gate.person', () => {
    it('lets a member through with the room as the server has it, reading the caller’s rooms and the bot’s side by side', async () => {
        const w = world();
        const admitted = await w.person(user('alice'), { roomId: 'secret', need: 'read' });
        expect(admitted?.room.id).toBe('secret');
        expect(admitted?.user.id).toBe('alice');
        expect(w.reads.sort()).toEqual(['room secret', 'rooms of alice', 'rooms of bot']);
        expect(w.notices).toEqual([]);
    });

    it('refuses a caller who is not a member: one private line in the named room, a log line with ids only', async () => {
        const w = world();
        expect(await w.person(user('mallory'), { roomId: 'secret', need: 'read' })).toBeUndefined();
        expect(w.notices).toEqual([{ to: 'mallory', room: 'secret', text: REFUSED }]);
        expect(w.log.lines.filter((l) => l.includes('Refused'))).toEqual(['info Refused command from mallory naming room secret: caller-not-member.']);
    });

    it("refuses anyone but its two members a DM's id, without reading anyone's rooms", async () => {
        const w = world();
        expect(await w.person(user('mallory'), { room: ROOMS.alicebot, need: 'read' })).toBeUndefined();
        expect(w.reads).toEqual([]);
        expect(await w.person(user('alice'), { room: ROOMS.alicebot, need: 'post' })).toBeDefined();
    });

    it('refuses a message or thread of another room, naming them in the log', async () => {
        const w = world();
        expect(await w.person(user('alice'), { roomId: 'general', messageId: 'm1', need: 'read' })).toBeUndefined();
        expect(await w.person(user('alice'), { roomId: 'general', threadId: 'm1', need: 'read' })).toBeUndefined();
        expect(await w.person(user('alice'), { roomId: 'general', message: MESSAGES.m1, need: 'read' })).toBeUndefined();
        expect(await w.person(user('alice'), { roomId: 'general', messageNamed: true, need: 'read' })).toBeUndefined();
        expect(w.log.lines.filter((l) => l.includes('Refused'))).toEqual([
            'info Refused command from alice naming room general (m1): message-elsewhere.',
            'info Refused command from alice naming room general (m1): thread-elsewhere.',
            'info Refused command from alice naming room general (m1): message-elsewhere.',
            'info Refused command from alice naming room general: message-elsewhere.',
        ]);
        expect(await w.person(user('alice'), { roomId: 'general', messageId: 'm2', threadId: 'm2', need: 'read' })).toBeDefined();
        expect(w.notices).toHaveLength(4);
    });

    it('a room that does not exist: refused in the log, no notice (there is no room to show it in), nothing else read', async () => {
        const w = world();
        expect(await w.person(user('alice'), { roomId: 'nowhere', messageId: 'm1', need: 'read' })).toBeUndefined();
        expect(w.reads).toEqual(['room nowhere']);
        expect(w.notices).toEqual([]);
        expect(w.log.lines.filter((l) => l.includes('Refused'))).toEqual(['info Refused command from alice naming room nowhere (m1): no-room.']);
    });

    it('the bot’s own request is refused without a word', async () => {
        const w = world();
        expect(await w.person(user('bot'), { roomId: 'general', need: 'read' })).toBeUndefined();
        expect(w.notices).toEqual([]);
    });

    it('a read-only room: owners and moderators are read only for a change, and only there', async () => {
        const w = world();
        expect(await w.person(user('mallory'), { roomId: 'news', need: 'read' })).toBeDefined();
        expect(w.reads).not.toContain('moderators of news');
        expect(await w.person(user('mallory'), { roomId: 'news', need: 'post' })).toBeUndefined();
        expect(w.reads).toContain('moderators of news');
        expect(await w.person(user('mod'), { roomId: 'news', need: 'post' })).toBeDefined();
        expect(await w.person(user('mallory', ['admin']), { roomId: 'news', need: 'post' })).toBeDefined();
        w.reads.length = 0;
        expect(await w.person(user('alice'), { roomId: 'general', need: 'post' })).toBeDefined();
        expect(w.reads).not.toContain('moderators of general');
    });
});
