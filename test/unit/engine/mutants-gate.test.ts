import { IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { Notice, noticeModify } from '../../support/noticeModify';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { AppState } from '../../../src/engine/appState';
import { Gate, Subject, Way } from '../../../src/engine/entry/gate';
import { FetchTransport } from '../../../src/hermes/fetchTransport';
import { memoryLog } from '../../support/fakeEngine';
import { MemoryPersistence } from '../../support/memoryPersistence';

/**
 * Gate edges the older tests (gate.test.ts) left open, found by mutation testing (`npm run
 * mutate`): the notice each way gets, a request that names no room, the thread and message
 * named together, what an admitted request carries, the bot user missing, and the ways in that
 * carry no caller's claim (events, jobs, endpoints).
 */
const user = (id: string, extra: Record<string, unknown> = {}) => ({ id, username: id, roles: ['user'], ...extra }) as unknown as IUser;
const room = (id: string, type: string, extra: Partial<IRoom> = {}) => ({ id, type, slugifiedName: id, ...extra }) as unknown as IRoom;

const ROOMS: Record<string, IRoom> = {
    general: room('general', 'c'),
    secret: room('secret', 'p'),
};
const MEMBERS: Record<string, string[]> = {
    bot: ['general', 'secret'],
    alice: ['general', 'secret'],
    mallory: ['general'],
    member01: ['general'],
};
const MESSAGES: Record<string, IMessage> = {
    inSecret: { id: 'inSecret', room: ROOMS.secret } as IMessage,
    inGeneral: { id: 'inGeneral', room: ROOMS.general } as IMessage,
    roomless: { id: 'roomless' } as IMessage,
};

function world(opts: { bot?: boolean; settings?: Record<string, unknown> } = {}) {
    const reads: string[] = [];
    const notices: Notice[] = [];
    const store = new MemoryPersistence();
    const settings: Record<string, unknown> = { hermes_url: 'http://127.0.0.1:9', hermes_api_key: 'k'.repeat(24), ...opts.settings };
    const people: Record<string, IUser> = { carla: user('carla', { settings: { preferences: { language: 'de' } } }) };
    const read = {
        getEnvironmentReader: () => ({ getSettings: () => ({ getValueById: async (id: string) => settings[id] }) }),
        getPersistenceReader: () => store.read,
        getUserReader: () => ({
            getAppUser: async () => (opts.bot === false ? undefined : user('bot')),
            getById: async (id: string) => people[id] ?? user(id),
            getUserRoomIds: async (id: string) => {
                reads.push(`rooms of ${id}`);
                return id === 'carla' ? ['general'] : (MEMBERS[id] ?? []);
            },
        }),
        getRoomReader: () => ({
            getById: async (id: string) => {
                reads.push(`room ${id}`);
                return ROOMS[id];
            },
            getOwners: async () => [],
            getModerators: async () => [],
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
    const accessors = { read, modify, persistence: store.write as IPersistence, logger: log.logger as never };
    const person = (who: IUser, subject: Subject, way: Way = 'command') => gate.person(way, accessors, who, subject);
    const refusals = () => log.lines.filter((l) => l.includes('Refused'));
    return { gate, accessors, person, reads, notices, log, refusals };
}

describe('Gate.person: the refusal notice', () => {
    it('names the command for a command and Hermes for every other way in', async () => {
        const w = world();
        const ways: Way[] = ['command', 'action-button', 'block-action', 'view-submit'];
        for (const way of ways) {
            expect(await w.person(user('mallory'), { roomId: 'secret', need: 'read' }, way)).toBeUndefined();
        }
        expect(w.notices).toEqual([
            { to: 'mallory', room: 'secret', text: '`/hermes` is not available here.' },
            { to: 'mallory', room: 'secret', text: 'Hermes is not available here.' },
            { to: 'mallory', room: 'secret', text: 'Hermes is not available here.' },
            { to: 'mallory', room: 'secret', text: 'Hermes is not available here.' },
        ]);
        expect(w.refusals()).toEqual([
            'info Refused command from mallory naming room secret: caller-not-member.',
            'info Refused action-button from mallory naming room secret: caller-not-member.',
            'info Refused block-action from mallory naming room secret: caller-not-member.',
            'info Refused view-submit from mallory naming room secret: caller-not-member.',
        ]);
    });

    it("is in the caller's language", async () => {
        const w = world();
        expect(
            await w.person(user('carla', { settings: { preferences: { language: 'de' } } }), { roomId: 'secret', need: 'read' }, 'action-button'),
        ).toBeUndefined();
        expect(w.notices).toEqual([{ to: 'carla', room: 'secret', text: 'Hermes ist hier nicht verfügbar.' }]);
    });
});

describe('Gate.person: what a request names', () => {
    it('a request naming no room at all: refused in the log with "-", nothing read, no notice', async () => {
        const w = world();
        expect(await w.person(user('alice'), { need: 'read' })).toBeUndefined();
        expect(w.reads).toEqual([]);
        expect(w.notices).toEqual([]);
        expect(w.refusals()).toEqual(['info Refused command from alice naming room -: no-room.']);
    });

    it('an empty room id is no room either (nothing read)', async () => {
        const w = world();
        expect(await w.person(user('alice'), { roomId: '', need: 'read' })).toBeUndefined();
        expect(w.reads).toEqual([]);
        expect(w.notices).toEqual([]);
    });

    it('names the message and the thread together in the log, message first', async () => {
        const w = world();
        expect(await w.person(user('alice'), { roomId: 'general', messageId: 'inGeneral', threadId: 'inSecret', need: 'read' })).toBeUndefined();
        expect(w.refusals()).toEqual(['info Refused command from alice naming room general (inGeneral, inSecret): thread-elsewhere.']);
        expect(w.reads).toContain('message inGeneral');
        expect(w.reads).toContain('message inSecret');
    });

    it('reads no message when the request names none, and a given message is not read again', async () => {
        const w = world();
        expect(await w.person(user('alice'), { roomId: 'general', message: MESSAGES.inGeneral, need: 'read' })).toBeDefined();
        expect(w.reads.filter((r) => r.startsWith('message'))).toEqual([]);
    });

    it('a message without a room, or named but not found, is elsewhere', async () => {
        const w = world();
        expect(await w.person(user('alice'), { roomId: 'general', messageId: 'roomless', need: 'read' })).toBeUndefined();
        expect(await w.person(user('alice'), { roomId: 'general', messageId: 'missing', need: 'read' })).toBeUndefined();
        expect(await w.person(user('alice'), { roomId: 'general', threadId: 'missing', need: 'read' })).toBeUndefined();
        expect(w.refusals()).toEqual([
            'info Refused command from alice naming room general (roomless): message-elsewhere.',
            'info Refused command from alice naming room general (missing): message-elsewhere.',
            'info Refused command from alice naming room general (missing): thread-elsewhere.',
        ]);
    });

    it('refuses a sender on ignore_senders by username, and a caller outside allowed_user_ids', async () => {
        const ignoring = world({ settings: { ignore_senders: 'mallory' } });
        expect(await ignoring.person(user('mallory'), { roomId: 'general', need: 'read' })).toBeUndefined();
        expect(ignoring.refusals()).toEqual(['info Refused command from mallory naming room general: ignored-sender.']);
        const allowing = world({ settings: { allowed_user_ids: 'member01' } });
        expect(await allowing.person(user('mallory'), { roomId: 'general', need: 'read' })).toBeUndefined();
        expect(await allowing.person(user('member01'), { roomId: 'general', need: 'read' })).toBeDefined();
        expect(allowing.refusals()).toEqual(['info Refused command from mallory naming room general: not-allowed.']);
    });
});

describe('Gate.person: what it lets through', () => {
    it('carries the ports, configuration, bot, caller, room, message and language', async () => {
        const w = world();
        const carla = user('carla', { settings: { preferences: { language: 'de' } } });
        const admitted = await w.person(carla, { room: ROOMS.general, message: MESSAGES.inGeneral, need: 'post' });
        expect(admitted).toBeDefined();
        expect(admitted?.bot.id).toBe('bot');
        expect(admitted?.user).toBe(carla);
        expect(admitted?.room).toBe(ROOMS.general);
        expect(admitted?.message).toBe(MESSAGES.inGeneral);
        expect(admitted?.language).toBe('de');
        expect(admitted?.config?.hermesUrl).toBe('http://127.0.0.1:9');
        expect(admitted?.call.bot?.id).toBe('bot');
        expect(w.refusals()).toEqual([]);
    });

    it('without the bot user (the app not set up yet) refuses quietly, reading nothing', async () => {
        const w = world({ bot: false });
        await expect(w.person(user('alice'), { roomId: 'general', need: 'read' })).resolves.toBeUndefined();
        expect(w.reads).toEqual([]);
        expect(w.notices).toEqual([]);
    });
});

describe('Gate: the ways in that carry no claim', () => {
    it('an event and a job get the ports with the bot and configuration', async () => {
        const w = world();
        const event = await w.gate.event(w.accessors);
        expect(event.bot?.id).toBe('bot');
        expect(event.config?.hermesUrl).toBe('http://127.0.0.1:9');
        const job = await w.gate.job(w.accessors);
        expect(job.bot?.id).toBe('bot');
        expect(job.config?.hermesUrl).toBe('http://127.0.0.1:9');
        expect(w.reads).toEqual([]);
    });

    it('an endpoint gets the configuration and a log, nothing else', async () => {
        const w = world();
        const got = await w.gate.endpoint(w.accessors);
        expect(Object.keys(got).sort()).toEqual(['config', 'log']);
        expect(got.config?.hermesUrl).toBe('http://127.0.0.1:9');
        got.log.info('endpoint line');
        expect(w.log.lines).toContain('info endpoint line');
    });
});
