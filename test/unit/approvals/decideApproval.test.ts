import { decideApproval, DecidePorts, pendingApproval } from '../../../src/approvals/decide';
import { HermesClient } from '../../../src/hermes/client';
import { HttpRequest, HttpResult } from '../../../src/hermes/transport';
import { ApprovalRequest } from '../../../src/hermes/runs';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { MemoryChat, MemoryTurnStore, queuedTurn, ScriptedRuns, TEST_CONFIG } from '../../support/turnPorts';

/**
 * Deciding a pending approval (approvals/decide.ts), from a button or a typed yes/no: only the
 * asker or an admin, only a choice that was offered, Approve only for a command the person
 * could read whole; Hermes is told, the decision is its own record, the message says who
 * decided what; a decision that comes after Hermes moved on says so and sends nothing more.
 */

const RM: ApprovalRequest = { command: 'rm -rf /tmp/x', description: 'delete a folder', choices: ['once', 'session', 'always', 'deny'], allowPermanent: true };

/** ScriptedRuns, with the answer to the approval request chosen by the test. */
class ApprovalRuns extends ScriptedRuns {
    public approvalAnswer: HttpResult | undefined;

    public override async send(request: HttpRequest): Promise<HttpResult> {
        if (this.approvalAnswer && new URL(request.url).pathname.endsWith('/approval')) {
            this.requests.push(request);
            return this.approvalAnswer;
        }
        return super.send(request);
    }
}

let n = 0;

async function setup(over: Partial<TurnRecord> = {}, request: ApprovalRequest = RM) {
    const store = new MemoryTurnStore();
    const chat = new MemoryChat(() => 1_000);
    const transport = new ApprovalRuns();
    const logs: string[] = [];
    const log = { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m), error: (m: string) => logs.push(m), debug: () => undefined };
    const config = { ...TEST_CONFIG, adminUserIds: ['ADMIN'] };
    const sleeps: number[] = [];
    const ports: DecidePorts = {
        config,
        hermes: new HermesClient(transport, config),
        store,
        chat,
        log: log as never,
        sleep: async (ms) => {
            sleeps.push(ms);
        },
    };
    const rec = queuedTurn(`DA${++n}`, { phase: 'running', transport: 'runs', runId: 'run_7', ...over });
    const messageId = await chat.post({ roomId: rec.roomId }, 'the approval', 'approval', { turnId: rec.id });
    rec.approval = over.approval === undefined && !('approval' in over) ? { messageId, request, number: 1 } : over.approval;
    await store.save(rec);
    const approvals = () => transport.requests.filter((r) => new URL(r.url).pathname === '/v1/runs/run_7/approval').map((r) => JSON.parse(String(r.body)));
    return { store, chat, transport, logs, ports, rec, messageId, approvals, sleeps };
}

const alice = { id: 'U1', username: 'alice' };

describe('deciding an approval', () => {
    it('by its asker: Hermes is told, the decision is recorded, the message says who approved what', async () => {
        const { ports, rec, store, chat, messageId, approvals, logs } = await setup();
        expect(await decideApproval(rec, alice, 'once', ports)).toBe('decided');
        expect(approvals()).toEqual([{ choice: 'once' }]);
        expect(await store.decision(rec.id, messageId)).toEqual({ messageId, decided: { by: 'alice', choice: 'once' } });
        expect(chat.messages[0].text).toBe(':white_check_mark: `rm -rf /tmp/x` — Approve once by @alice.');
        expect(chat.messages[0].mark).toEqual({ kind: 'approval', turnId: rec.id });
        expect(logs).toContain(`Approval for message ${rec.id}: once by U1.`);
    });

    it('a denial is said as one', async () => {
        const { ports, rec, chat, approvals } = await setup();
        expect(await decideApproval(rec, alice, 'deny', ports)).toBe('decided');
        expect(approvals()).toEqual([{ choice: 'deny' }]);
        expect(chat.messages[0].text).toBe(':no_entry_sign: `rm -rf /tmp/x` — denied by @alice.');
    });

    it('by an admin who did not ask', async () => {
        const { ports, rec } = await setup();
        expect(await decideApproval(rec, { id: 'ADMIN', username: 'root' }, 'session', ports)).toBe('decided');
    });

    it('by anyone else: refused, nothing sent or written', async () => {
        const { ports, rec, store, chat, messageId, approvals } = await setup();
        expect(await decideApproval(rec, { id: 'U2', username: 'bob' }, 'once', ports)).toBe('not-yours');
        expect(approvals()).toEqual([]);
        expect(await store.decision(rec.id, messageId)).toBeUndefined();
        expect(chat.edits).toBe(0);
    });

    it('"always" where it was not offered (a room): refused', async () => {
        const { ports, rec, approvals } = await setup();
        expect(await decideApproval(rec, alice, 'always', ports)).toBe('always-refused');
        expect(approvals()).toEqual([]);
    });

    it('Approve for a command cut in the message: only after the whole command was shown; Deny at any time', async () => {
        const long: ApprovalRequest = { ...RM, command: `echo ${'x'.repeat(5_000)}` };
        const first = await setup({}, long);
        expect(await decideApproval(first.rec, alice, 'once', first.ports)).toBe('not-shown-whole');
        expect(first.approvals()).toEqual([]);
        expect(await decideApproval(first.rec, alice, 'once', first.ports, { seenFull: true })).toBe('decided');
        const second = await setup({}, long);
        expect(await decideApproval(second.rec, alice, 'deny', second.ports)).toBe('decided');
    });

    it('"show" whispers the whole command with the choices offered, to the person who asked to see it', async () => {
        const { ports, rec, chat, approvals } = await setup();
        expect(await decideApproval(rec, alice, 'show', ports, { where: { roomId: 'R1', threadId: 'T1' } })).toBe('shown');
        expect(approvals()).toEqual([]);
        expect(chat.whispers).toHaveLength(1);
        expect(chat.whispers[0].userId).toBe('U1');
        expect(chat.whispers[0].text).toContain('rm -rf /tmp/x');
        expect(chat.whispers[0].buttons?.buttons.map((b) => b.value)).toEqual([`${rec.id}|once|full`, `${rec.id}|session|full`, `${rec.id}|deny|full`]);
    });

    it('"show" of a command nobody can know (after a restart): nothing to show', async () => {
        const { ports, rec, store, chat } = await setup();
        rec.approval = { ...(rec.approval as NonNullable<TurnRecord['approval']>), unknownCommand: true };
        await store.save(rec);
        expect(await decideApproval(rec, alice, 'show', ports)).toBe('not-pending');
        expect(chat.whispers).toEqual([]);
    });

    it('after Hermes moved on (409): recorded as timed out, the message says so, nothing else', async () => {
        const { ports, rec, store, chat, messageId, transport, logs } = await setup();
        transport.approvalAnswer = {
            status: 409,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ error: { message: 'no approval is active', code: 'approval_not_active' } }),
        };
        expect(await decideApproval(rec, alice, 'once', ports)).toBe('not-pending');
        expect(await store.decision(rec.id, messageId)).toEqual({ messageId, timedOut: true });
        expect(chat.messages[0].text).toBe(':hourglass: The approval for `rm -rf /tmp/x` timed out; Hermes did not run it.');
        expect(logs.some((l) => l.startsWith(`Approval for message ${rec.id} arrived after Hermes moved on`))).toBe(true);
    });

    it('any other Hermes failure is raised to the caller, with nothing recorded', async () => {
        const { ports, rec, store, messageId, transport } = await setup();
        transport.approvalAnswer = { status: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: 'boom' } }) };
        await expect(decideApproval(rec, alice, 'once', ports)).rejects.toThrow();
        expect(await store.decision(rec.id, messageId)).toBeUndefined();
    });
});

describe('an approval that is not pending', () => {
    it('of a turn that ended (its record is gone)', async () => {
        const { ports, rec, store, approvals } = await setup();
        await store.remove(rec.id);
        expect(await decideApproval(rec, alice, 'once', ports)).toBe('not-pending');
        expect(approvals()).toEqual([]);
    });

    it('closed, or decided before (a second click)', async () => {
        const closed = await setup();
        closed.rec.approval = { ...(closed.rec.approval as NonNullable<TurnRecord['approval']>), closed: true };
        await closed.store.save(closed.rec);
        expect(await decideApproval(closed.rec, alice, 'once', closed.ports)).toBe('not-pending');
        const twice = await setup();
        expect(await decideApproval(twice.rec, alice, 'once', twice.ports)).toBe('decided');
        expect(await decideApproval(twice.rec, { id: 'ADMIN', username: 'root' }, 'deny', twice.ports)).toBe('not-pending');
        expect(twice.approvals()).toEqual([{ choice: 'once' }]);
    });

    it('timed out in Hermes before the click', async () => {
        const { ports, rec, store, messageId } = await setup();
        await store.decide(rec.id, { messageId, timedOut: true });
        expect(await decideApproval(rec, alice, 'once', ports)).toBe('not-pending');
    });

    it('a running turn with none recorded yet: looked at again for up to a second (its tick may be saving it), then not pending', async () => {
        const { ports, rec, store, sleeps } = await setup({ approval: undefined });
        await store.save({ ...rec, approval: undefined });
        expect(await decideApproval(rec, alice, 'once', ports)).toBe('not-pending');
        expect(sleeps).toEqual(Array(10).fill(100));
    });
});

describe('the pending approval of a conversation (a typed yes or no)', () => {
    it('is the open turn with an approval not closed', async () => {
        const { store, rec } = await setup();
        const found = await pendingApproval(store, rec.sessionKey, async () => undefined);
        expect(found?.id).toBe(rec.id);
    });

    it('is looked for again while a turn of the session is at Hermes with none recorded, up to ten times', async () => {
        const { store, rec } = await setup({ approval: undefined });
        await store.save({ ...rec, approval: undefined });
        const waits: number[] = [];
        expect(await pendingApproval(store, rec.sessionKey, async (ms) => void waits.push(ms))).toBeUndefined();
        expect(waits).toEqual(Array(10).fill(100));
    });

    it('is none at once when no turn of the session may be saving one', async () => {
        const { store, rec } = await setup({ phase: 'queued', runId: undefined, approval: undefined });
        await store.save({ ...rec, approval: undefined });
        const waits: number[] = [];
        expect(await pendingApproval(store, rec.sessionKey, async (ms) => void waits.push(ms))).toBeUndefined();
        expect(waits).toEqual([]);
    });
});
