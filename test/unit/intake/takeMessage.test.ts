import { t } from '../../../src/i18n/messages';
import { takeMessage } from '../../../src/intake/takeMessage';
import { IntakePorts } from '../../../src/intake/intakePorts';
import { Turn } from '../../../src/turns/turn';
import { ContextMessage } from '../../../src/context/contextMessage';
import { intakePorts, MemoryChat, MemorySessions, MemoryTurnStore, TEST_CONFIG } from '../../support/turnPorts';

/** Issue 17 defect 9: a message the app claims always has a turn, or the asker hears why not. */
function ports(store: MemoryTurnStore, order: string[]): { ports: IntakePorts; chat: MemoryChat } {
    const chat = new MemoryChat(() => Date.now());
    return {
        chat,
        ports: intakePorts({
            chat,
            turns: store,
            schedule: async () => {
                order.push('schedule');
            },
            claim: async () => {
                order.push(store.records.size > 0 ? 'claim after the turn record' : 'claim');
            },
        }),
    };
}

const dmTurn = (text: string): Turn => ({
    message: { id: 'M1', roomId: 'D1', roomType: 'd', directMemberCount: 2, senderId: 'U1', senderUsername: 'alice', text, isSystem: false, edited: false },
    kind: 'dm',
    text,
    createdAt: new Date(),
});

describe('defect 9: the receipt follows the turn record', () => {
    it('the stored turn record is the receipt (nothing else is claimed), then the first tick is scheduled', async () => {
        const store = new MemoryTurnStore();
        const order: string[] = [];
        await takeMessage(dmTurn('hello'), ports(store, order).ports);
        expect(order).toEqual(['schedule']);
        expect(store.records.get('M1')?.phase).toBe('queued');
    });

    it('the head names the Hermes session its event read (a turn sent later reads that transcript beside its session)', async () => {
        const store = new MemoryTurnStore();
        const { ports: p } = ports(store, []);
        await takeMessage(dmTurn('hello'), p);
        const head = store.records.get('M1');
        expect(head?.sessionSeen).toBe((await p.sessions.get(head?.sessionKey ?? '')).sessionId);
        expect(head?.sessionSeen).toMatch(/\S/);
    });

    it('a turn record that cannot be stored: the asker is told at once, the message is claimed, nothing is scheduled', async () => {
        const store = new MemoryTurnStore();
        store.dead = true;
        const order: string[] = [];
        const { ports: p, chat } = ports(store, order);
        const outcome = await takeMessage(dmTurn('hello'), p);
        expect(outcome).toEqual({ kind: 'refused', reason: 'not-stored' });
        expect(chat.visible().map((m) => m.kind)).toEqual(['notice']);
        expect(order).toEqual(['claim']);
    });
});

describe('reads beside the admission', () => {
    it("a question's session and context are read while the admission is decided; turned away, nothing is stored, claimed, posted or scheduled", async () => {
        const store = new MemoryTurnStore();
        const order: string[] = [];
        const { ports: p, chat } = ports(store, order);
        let decide: (admitted: boolean) => void = () => undefined;
        const sessionsRead: string[] = [];
        const sessions = p.sessions;
        p.sessions = { ...sessions, get: async (key) => (sessionsRead.push(key), sessions.get(key)) } as typeof sessions;
        p.admitted = new Promise((resolve) => (decide = resolve));
        const outcome = takeMessage(dmTurn('hello'), p);
        // The session is read before the admission answers.
        await new Promise((r) => setImmediate(r));
        expect(sessionsRead).toHaveLength(1);
        decide(false);
        expect(await outcome).toEqual({ kind: 'refused', reason: 'not-admitted' });
        expect(store.records.size).toBe(0);
        expect(order).toEqual([]);
        expect(chat.visible()).toEqual([]);
    });

    it("with a daily budget set, the day's usage is read beside the session, not after it", async () => {
        const store = new MemoryTurnStore();
        const order: string[] = [];
        const { ports: p } = ports(store, order);
        p.config = { ...TEST_CONFIG, budgetUserTurns: 5 };
        const reads: string[] = [];
        let sessionAnswer: () => void = () => undefined;
        const sessions = p.sessions;
        p.sessions = {
            ...sessions,
            get: async (key) => {
                reads.push('session');
                await new Promise<void>((resolve) => (sessionAnswer = resolve));
                return sessions.get(key);
            },
        } as typeof sessions;
        p.usage = {
            today: async () => (reads.push('usage'), { user: { turns: 1, in: 0, out: 0 } }),
            record: async () => undefined,
            over: async () => ({ turns: 0, in: 0, out: 0 }),
        };
        const outcome = takeMessage(dmTurn('hello'), p);
        await new Promise((r) => setImmediate(r));
        // Both reads went out while the session's is still on its way.
        expect(reads).toEqual(['session', 'usage']);
        sessionAnswer();
        expect(await outcome).toEqual({ kind: 'queued' });
        expect(store.records.get('M1')?.phase).toBe('queued');
    });

    it('a command reads and answers nothing before the admission says yes', async () => {
        const store = new MemoryTurnStore();
        const order: string[] = [];
        const { ports: p, chat } = ports(store, order);
        p.admitted = Promise.resolve(false);
        expect(await takeMessage(dmTurn('/new'), p)).toEqual({ kind: 'refused', reason: 'not-admitted' });
        expect(chat.visible()).toEqual([]);
        expect(order).toEqual([]);
        p.admitted = Promise.resolve(true);
        expect(await takeMessage(dmTurn('/new'), p)).toEqual({ kind: 'command', name: 'new' });
        expect(order).toEqual(['claim']);
    });
});

describe('the head before the context', () => {
    it("a room turn's head is stored while its context is still being read; its first step gets the text with its job", async () => {
        const store = new MemoryTurnStore();
        const order: string[] = [];
        const { ports: p } = ports(store, order);
        const jobs: Array<Parameters<IntakePorts['schedule']>[0]> = [];
        p.schedule = async (job) => {
            jobs.push(job);
        };
        let release: (messages: ContextMessage[]) => void = () => undefined;
        p.history = { ...p.history, mainChannel: () => new Promise((resolve) => (release = resolve)) };
        const earlier = new Date(Date.now() - 60_000);
        const turn: Turn = {
            message: {
                id: 'Q1',
                roomId: 'R1',
                roomType: 'c',
                senderId: 'U1',
                senderUsername: 'alice',
                text: '@hermes what now?',
                isSystem: false,
                edited: false,
            },
            kind: 'room',
            text: 'what now?',
            createdAt: new Date(),
        };
        const outcome = takeMessage(turn, p);
        for (let i = 0; i < 20 && !store.records.has('Q1'); i++) {
            await new Promise((r) => setImmediate(r));
        }
        // Stored (claimed, without text) and its first step scheduled before the history answered.
        expect(store.records.get('Q1')?.phase).toBe('queued');
        expect(store.records.get('Q1')?.user).toBeUndefined();
        expect(await outcome).toEqual({ kind: 'queued' });
        expect(jobs).toHaveLength(1);
        expect(jobs[0].record?.user).toBeUndefined();
        release([{ id: 'H1', senderId: 'U2', senderUsername: 'bob', text: 'the deploy is red', createdAt: earlier, isSystem: false, files: [] }]);
        const text = await jobs[0].text;
        expect(text?.user).toContain('the deploy is red');
        expect(text?.user).toContain('what now?');
    });
});

describe("the event's place in the intake (turns/intakeGate.ts)", () => {
    it('is given back once the head is stored, before the turn runs in the event; for a command, before it runs', async () => {
        const store = new MemoryTurnStore();
        const order: string[] = [];
        const { ports: p } = ports(store, order);
        p.stored = () => order.push(store.records.has('M1') ? 'stored after the head' : 'stored');
        await takeMessage(dmTurn('hello'), p);
        expect(order).toEqual(['stored after the head', 'schedule']);

        const commandOrder: string[] = [];
        const { ports: c, chat } = ports(new MemoryTurnStore(), commandOrder);
        c.stored = () => commandOrder.push(chat.visible().length === 0 ? 'stored before the answer' : 'stored');
        expect(await takeMessage(dmTurn('/new'), c)).toEqual({ kind: 'command', name: 'new' });
        expect(commandOrder).toEqual(['stored before the answer', 'claim']);
    });
});

describe('the admission every turn follows (src/admission/turnAdmission.ts, issue 31 item 7)', () => {
    const roomTurn = (roomId: string): Turn => ({
        message: { id: 'Q9', roomId, roomType: 'c', senderId: 'U1', senderUsername: 'alice', text: '@hermes hi', isSystem: false, edited: false },
        kind: 'room',
        text: 'hi',
        createdAt: new Date(),
    });

    it('a turn in a room set to off or an automation room is refused at the start, silently: nothing stored, read, posted or sent', async () => {
        for (const config of [
            { ...TEST_CONFIG, roomPolicies: 'R9 off' },
            { ...TEST_CONFIG, automationRoomIds: ['R9'] },
        ]) {
            const store = new MemoryTurnStore();
            const order: string[] = [];
            const { ports: p, chat } = ports(store, order);
            p.config = config;
            const reads: string[] = [];
            p.sessions = { get: async (key: string) => (reads.push(key), new MemorySessions().get(key)), save: async () => undefined };
            const outcome = await takeMessage(roomTurn('R9'), p);
            expect(outcome.kind).toBe('refused');
            expect(store.records.size).toBe(0);
            expect(reads).toEqual([]);
            expect(chat.visible()).toEqual([]);
            expect(chat.whispers).toEqual([]);
        }
    });

    it("a room's profile and model from the admission are the turn's route", async () => {
        const store = new MemoryTurnStore();
        const { ports: p } = ports(store, []);
        p.config = { ...TEST_CONFIG, roomPolicies: 'R9 profile=research model=fast' };
        expect(await takeMessage(roomTurn('R9'), p)).toEqual({ kind: 'queued' });
        expect(store.records.get('Q9')?.route).toEqual({ profile: 'research', model: 'fast' });
    });
});

describe('refused in place: the asker hears why, once, and the message is claimed', () => {
    const roomTurn = (roomId: string, senderId = 'U1'): Turn => ({
        message: { id: 'Q7', roomId, roomType: 'c', senderId, senderUsername: 'alice', text: '@hermes hi', isSystem: false, edited: false },
        kind: 'room',
        text: 'hi',
        createdAt: new Date(),
    });

    it('no valid configuration: nothing is said before the admission; admitted, the "not configured" notice', async () => {
        const store = new MemoryTurnStore();
        const order: string[] = [];
        const { ports: p, chat } = ports(store, order);
        p.config = undefined;
        const logs: string[] = [];
        p.log = { ...p.log, warn: (m: string) => void logs.push(m) };
        p.admitted = Promise.resolve(false);
        expect(await takeMessage(dmTurn('hello'), p)).toEqual({ kind: 'refused', reason: 'not-admitted' });
        expect(chat.visible()).toEqual([]);
        p.admitted = Promise.resolve(true);
        expect(await takeMessage(dmTurn('hello'), p)).toEqual({ kind: 'refused', reason: 'not-configured' });
        expect(chat.visible().map((m) => [m.kind, m.text])).toEqual([['notice', t('notice_not-configured')]]);
        expect(order).toEqual(['claim']);
        expect(logs).toEqual(['Turn for message M1 in room D1 refused: the app has no valid configuration (see the settings errors above).']);
        expect(store.records.size).toBe(0);
    });

    it('the same without a Hermes client (a configuration that could not build one)', async () => {
        const { ports: p, chat } = ports(new MemoryTurnStore(), []);
        p.hermes = undefined;
        p.admitted = Promise.resolve(false);
        expect(await takeMessage(dmTurn('hello'), p)).toEqual({ kind: 'refused', reason: 'not-admitted' });
        p.admitted = Promise.resolve(true);
        expect(await takeMessage(dmTurn('hello'), p)).toEqual({ kind: 'refused', reason: 'not-configured' });
        expect(chat.visible().map((m) => m.kind)).toEqual(['notice']);
    });

    it("a malformed line for the room in room_policies: the room-policy notice, never the default's answer", async () => {
        const store = new MemoryTurnStore();
        const order: string[] = [];
        const { ports: p, chat } = ports(store, order);
        p.config = { ...TEST_CONFIG, roomPolicies: 'R8 mode=sometimes' };
        const logs: string[] = [];
        p.log = { ...p.log, warn: (m: string) => void logs.push(m) };
        expect(await takeMessage(roomTurn('R8'), p)).toEqual({ kind: 'refused', reason: 'room-policy' });
        // In a room the notice mentions the asker.
        expect(chat.visible().map((m) => [m.kind, m.text])).toEqual([['notice', `@alice ${t('notice_room-policy')}`]]);
        expect(order).toEqual(['claim']);
        expect(logs.join('\n')).toContain("the room's entry in room_policies is malformed");
        expect(store.records.size).toBe(0);
    });

    it('a sender outside allowed_user_ids (the event turns them away; one that still gets here): refused without a word, claimed', async () => {
        const store = new MemoryTurnStore();
        const order: string[] = [];
        const { ports: p, chat } = ports(store, order);
        p.config = { ...TEST_CONFIG, allowedUserIds: ['U2'] };
        const logs: string[] = [];
        p.log = { ...p.log, info: (m: string) => void logs.push(m) };
        p.admitted = Promise.resolve(false);
        // Not a question headed for Hermes: the admission is asked first, and says no.
        expect(await takeMessage(roomTurn('R7'), p)).toEqual({ kind: 'refused', reason: 'not-admitted' });
        p.admitted = Promise.resolve(true);
        expect(await takeMessage(roomTurn('R7'), p)).toEqual({ kind: 'refused', reason: 'not-allowed' });
        expect(chat.visible()).toEqual([]);
        expect(logs.filter((l) => l.includes('refused'))).toHaveLength(1);
        expect(logs.find((l) => l.includes('refused'))).toMatch(/^Turn for message Q7 in room R7 refused: .+\.$/);
        expect(order).toEqual(['claim']);
    });
});
