import { t } from '../../../src/i18n/messages';
import { HermesClient } from '../../../src/hermes/client';
import { takeMessage } from '../../../src/intake/takeMessage';
import { Turn } from '../../../src/turns/turn';
import { intakePorts, MemoryChat, MemoryTurnStore, queuedTurn, ScriptedRuns, TEST_CONFIG } from '../../support/turnPorts';

/**
 * A message that opens no turn is answered where it was asked (intake/answerInPlace.ts): a yes
 * or no while an approval is pending in the conversation decides it (or tells the person
 * privately why not), a command runs and answers in the room, or privately when it is about
 * the asker's own sessions; the message is claimed, and no turn is stored.
 */

const DM_KEY = 'agent:main:rocketchat:dm:D1';

function setup() {
    const store = new MemoryTurnStore();
    const chat = new MemoryChat(() => Date.now());
    const transport = new ScriptedRuns();
    const claimed: string[] = [];
    const scheduled: string[] = [];
    const ports = intakePorts({
        hermes: new HermesClient(transport, TEST_CONFIG),
        chat,
        turns: store,
        schedule: async (job) => void scheduled.push(job.wake ? `${job.turnId} (wake-up)` : job.turnId),
        claim: async () => void claimed.push('claimed'),
    });
    return { store, chat, transport, claimed, scheduled, ports };
}

const dm = (text: string, sender = { id: 'U1', username: 'alice' }): Turn => ({
    message: {
        id: `M${Math.random()}`,
        roomId: 'D1',
        roomType: 'd',
        directMemberCount: 2,
        senderId: sender.id,
        senderUsername: sender.username,
        text,
        isSystem: false,
        edited: false,
    },
    kind: 'dm',
    text,
    createdAt: new Date(),
});

/** A turn of the DM at Hermes, waiting for the approval posted as message `A1`. */
async function pendingIn(store: MemoryTurnStore, chat: MemoryChat): Promise<string> {
    const messageId = await chat.post({ roomId: 'D1' }, 'the approval', 'approval', { turnId: 'T1' });
    await store.save(
        queuedTurn('T1', {
            sessionKey: DM_KEY,
            roomId: 'D1',
            roomType: 'd',
            kind: 'dm',
            phase: 'running',
            transport: 'runs',
            runId: 'run_1',
            approval: { messageId, request: { command: 'ls', description: 'list', choices: ['once', 'deny'], allowPermanent: false }, number: 1 },
        }),
    );
    return messageId;
}

describe('a yes or no in a conversation', () => {
    it('decides its pending approval: Hermes is told, the message claimed, no turn stored', async () => {
        const { store, chat, transport, claimed, scheduled, ports } = setup();
        const messageId = await pendingIn(store, chat);
        expect(await takeMessage(dm('yes'), ports)).toEqual({ kind: 'command', name: 'approval:once' });
        expect(transport.requests.filter((r) => r.url.endsWith('/v1/runs/run_1/approval')).map((r) => JSON.parse(String(r.body)))).toEqual([
            { choice: 'once' },
        ]);
        expect(await store.decision('T1', messageId)).toEqual({ messageId, decided: { by: 'alice', choice: 'once' } });
        expect(claimed).toEqual(['claimed']);
        expect(scheduled).toEqual([]);
        expect([...store.records.keys()]).toEqual(['T1']);
        // Decided: nothing to tell the person privately.
        expect(chat.whispers).toEqual([]);
    });

    it('by someone who may not decide: told privately, nothing sent to Hermes', async () => {
        const { store, chat, transport, ports } = setup();
        await pendingIn(store, chat);
        expect(await takeMessage(dm('no', { id: 'U9', username: 'mallory' }), ports)).toEqual({ kind: 'command', name: 'approval:deny' });
        expect(chat.whispers).toEqual([{ userId: 'U9', text: 'Only the person who asked, or an admin, can decide this approval.', buttons: undefined }]);
        expect(transport.requests.filter((r) => r.url.includes('/approval'))).toEqual([]);
    });

    it('after Hermes moved on: told privately that it is no longer pending', async () => {
        const { store, chat, ports } = setup();
        const messageId = await pendingIn(store, chat);
        await store.decide('T1', { messageId, timedOut: true });
        await takeMessage(dm('yes'), ports);
        expect(chat.whispers.map((w) => w.text)).toEqual(['This approval is no longer pending: Hermes has moved on.']);
    });

    it('an approve for a command that could not be shown whole: told privately to use the buttons, nothing sent to Hermes', async () => {
        const { store, chat, transport, ports } = setup();
        await pendingIn(store, chat);
        const rec = store.records.get('T1') as NonNullable<ReturnType<typeof store.records.get>>;
        rec.approval = { ...(rec.approval as NonNullable<typeof rec.approval>), unknownCommand: true };
        expect(await takeMessage(dm('yes'), ports)).toEqual({ kind: 'command', name: 'approval:once' });
        expect(chat.whispers.map((w) => w.text)).toEqual([t('approval_not_shown_whole')]);
        expect(transport.requests.filter((r) => r.url.includes('/approval'))).toEqual([]);
    });

    it('with nothing pending is a question like any other', async () => {
        const { store, scheduled, ports } = setup();
        const turn = dm('yes');
        expect(await takeMessage(turn, ports)).toEqual({ kind: 'queued' });
        expect(scheduled).toEqual([turn.message.id]);
        expect(store.records.get(turn.message.id)?.phase).toBe('queued');
    });
});

describe('a command typed as a message', () => {
    it('answers in the conversation, claims the message and stores no turn', async () => {
        const { store, chat, claimed, scheduled, ports } = setup();
        expect(await takeMessage(dm('/new'), ports)).toEqual({ kind: 'command', name: 'new' });
        expect(chat.messages.map((m) => [m.target.roomId, m.text])).toEqual([
            ['D1', ':sparkles: Started a new conversation. Earlier messages are no longer part of it.'],
        ]);
        expect(chat.whispers).toEqual([]);
        expect(claimed).toEqual(['claimed']);
        expect(scheduled).toEqual([]);
        expect(store.records.size).toBe(0);
    });

    it('about the asker’s own sessions answers privately, nothing in the room', async () => {
        const { chat, ports } = setup();
        // Nobody has a session through the app yet.
        ports.index = { owned: async () => [], inScope: async () => [], ofSession: async () => [], add: async () => undefined };
        expect(await takeMessage(dm('/sessions'), ports)).toEqual({ kind: 'command', name: 'sessions' });
        expect(chat.messages).toEqual([]);
        expect(chat.whispers).toEqual([{ userId: 'U1', text: 'You have no sessions in this conversation yet.', buttons: undefined }]);
    });
});

describe('stop as a text command', () => {
    it("wakes the asker's queued turn, which has no ticks of its own, so it sees the stop at once", async () => {
        const { store, scheduled, ports } = setup();
        await store.save(queuedTurn('T2', { sessionKey: DM_KEY, roomId: 'D1', roomType: 'd', kind: 'dm', askerId: 'U1', waiting: true }));
        expect(await takeMessage(dm('!stop'), ports)).toEqual({ kind: 'command', name: 'stop' });
        expect(scheduled).toEqual(['T2 (wake-up)']);
    });
});

describe('a command that needs a port this place lacks', () => {
    it('says privately that it is not available here', async () => {
        const { chat, ports } = setup();
        expect(await takeMessage(dm('/sessions'), ports)).toEqual({ kind: 'command', name: 'sessions' });
        expect(chat.whispers.map((w) => w.text)).toEqual(['This command is not available here.']);
        expect(chat.messages).toEqual([]);
    });
});
