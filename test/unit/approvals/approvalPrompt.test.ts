import { showApproval } from '../../../src/approvals/approvalPrompt';
import { LiveTurn } from '../../../src/hermes/liveTurn';
import { ApprovalRequest, RunStatus } from '../../../src/hermes/runs';
import { stateOf } from '../../../src/turns/machine';
import { Seen } from '../../../src/turns/observe';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, VirtualScheduler } from '../../support/turnPorts';

/**
 * The approval prompt of a running turn (approvals/approvalPrompt.ts showApproval): posted once
 * per approval Hermes asks for, with the choices the policy leaves; without the stream (after a
 * restart) only Deny; left to the instance whose live stream carries the command; closed when
 * Hermes moves on, as decided here or timed out there.
 */

const RM: ApprovalRequest = { command: 'rm -rf /tmp/x', description: 'delete a folder', choices: ['once', 'session', 'always', 'deny'], allowPermanent: true };

function setup(over: Partial<TurnRecord> = {}) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched });
    const rec = queuedTurn(`AP${sched.time}`, { phase: 'running', transport: 'runs', runId: 'run_1', startedAt: sched.time, ...over });
    return { ...env, sched, rec };
}

function live(over: Partial<LiveTurn> = {}): LiveTurn {
    return { kind: 'run-events', runId: 'run_1', tools: [], toolsDropped: 0, text: '', truncated: false, done: false, abort: new AbortController(), ...over };
}

const waitingStatus: RunStatus = { status: 'waiting_for_approval' };
const running: RunStatus = { status: 'running' };

describe('an approval Hermes asks for', () => {
    it('is posted once from the stream, with the command, the asker and the choices a room turn may offer', async () => {
        const { ports, chat, rec, sched, logs } = setup();
        const seen: Seen = { live: live({ approval: RM, approvals: 1 }) };
        expect(await showApproval(rec, seen, ports)).toBe(true);
        expect(chat.messages).toHaveLength(1);
        const [posted] = chat.messages;
        expect(posted.kind).toBe('approval');
        expect(posted.mark).toEqual({ kind: 'approval', turnId: rec.id });
        expect(posted.text).toContain('rm -rf /tmp/x');
        expect(posted.text).toContain('> delete a folder');
        expect(posted.text).toContain('Only @alice or an admin can decide.');
        // "Always" changes the bot for everyone: never in a room.
        expect(posted.buttons?.buttons.map((b) => b.value)).toEqual([`${rec.id}|once`, `${rec.id}|session`, `${rec.id}|deny`]);
        expect(rec.approval).toEqual({ messageId: posted.id, request: RM, number: 1, postedAt: sched.time });
        expect(stateOf(rec)).toBe('awaiting-approval');
        expect(logs).toContain(`Turn message ${rec.id} in room R1 waits for approval 1 (choices: once, session, deny).`);
        // The same approval seen again posts nothing more.
        expect(await showApproval(rec, seen, ports)).toBe(false);
        expect(chat.messages).toHaveLength(1);
    });

    it('offers "always" in an admin’s own 1:1 DM when Hermes allows a permanent approval', async () => {
        const { ports, chat, rec } = setup({ kind: 'dm', roomType: 'd', askerId: 'ADMIN' });
        ports.config = { ...ports.config, adminUserIds: ['ADMIN'] };
        await showApproval(rec, { live: live({ approval: RM, approvals: 1 }) }, ports);
        expect(chat.messages[0].buttons?.buttons.map((b) => b.value)).toEqual([`${rec.id}|once`, `${rec.id}|session`, `${rec.id}|always`, `${rec.id}|deny`]);
    });

    it('waits for the stream when the status says waiting but the stream here has not carried the request yet', async () => {
        const { ports, chat, rec } = setup();
        expect(await showApproval(rec, { status: waitingStatus, live: live() }, ports)).toBe(false);
        expect(chat.messages).toHaveLength(0);
        expect(rec.approval).toBeUndefined();
    });

    it('is left to another live instance that holds the stream (it has the command)', async () => {
        const { ports, chat, rec, sched } = setup();
        rec.owner = { as: 'streaming', process: 'another-instance', until: sched.time + 30_000, at: sched.time };
        expect(await showApproval(rec, { status: waitingStatus }, ports)).toBe(false);
        expect(chat.messages).toHaveLength(0);
    });

    it('after a restart (no stream anywhere) offers only Deny, and says the command is unknown', async () => {
        const { ports, chat, rec, sched } = setup();
        rec.owner = { as: 'streaming', process: 'a-process-that-died', until: sched.time - 1, at: sched.time - 30_000 };
        expect(await showApproval(rec, { status: waitingStatus }, ports)).toBe(true);
        expect(chat.messages[0].buttons?.buttons.map((b) => b.value)).toEqual([`${rec.id}|deny`]);
        expect(rec.approval?.unknownCommand).toBe(true);
        expect(rec.approval?.number).toBe(1);
        expect(rec.approval?.request).toEqual({ command: '', description: '', choices: ['once', 'deny'], allowPermanent: false });
    });

    it('takes a newer server’s status description when there is no stream', async () => {
        const { ports, chat, rec } = setup();
        expect(await showApproval(rec, { status: { status: 'waiting_for_approval', approval: RM } }, ports)).toBe(true);
        expect(chat.messages[0].text).toContain('rm -rf /tmp/x');
        expect(rec.approval?.unknownCommand).toBeUndefined();
    });

    it('a second approval of the same run gets its own message, numbered by the stream', async () => {
        const { ports, chat, rec } = setup();
        await showApproval(rec, { live: live({ approval: RM, approvals: 1 }) }, ports);
        const second: ApprovalRequest = { ...RM, command: 'curl example.org' };
        expect(await showApproval(rec, { live: live({ approval: second, approvals: 2 }) }, ports)).toBe(true);
        expect(chat.messages).toHaveLength(2);
        expect(chat.messages[1].text).toContain('curl example.org');
        expect(rec.approval?.number).toBe(2);
        expect(rec.approval?.messageId).toBe(chat.messages[1].id);
    });
});

describe('without the stream, an approval decided here while Hermes still says it waits', () => {
    async function decidedAgo(ms: number) {
        const env = setup();
        const { ports, rec, sched, store } = env;
        await showApproval(rec, { status: { status: 'waiting_for_approval', approval: RM } }, ports);
        const first = rec.approval?.messageId as string;
        await store.decide(rec.id, { messageId: first, decided: { by: 'alice', choice: 'once' } });
        sched.time += ms;
        const changed = await showApproval(rec, { status: { status: 'waiting_for_approval', approval: RM } }, ports);
        return { ...env, first, changed };
    }

    it('is the same one within 5 s (Hermes has not taken the decision in yet)', async () => {
        const { chat, changed } = await decidedAgo(5_000);
        expect(changed).toBe(false);
        expect(chat.messages).toHaveLength(1);
    });

    it('is a new approval after that, posted as number 2', async () => {
        const { chat, changed, rec } = await decidedAgo(5_001);
        expect(changed).toBe(true);
        expect(chat.messages).toHaveLength(2);
        expect(rec.approval?.number).toBe(2);
    });

    it('not decided yet, is the same one however long it waits', async () => {
        const { ports, rec, sched, chat } = setup();
        await showApproval(rec, { status: { status: 'waiting_for_approval', approval: RM } }, ports);
        sched.time += 60_000;
        expect(await showApproval(rec, { status: { status: 'waiting_for_approval', approval: RM } }, ports)).toBe(false);
        expect(chat.messages).toHaveLength(1);
    });
});

describe('when Hermes moves on', () => {
    it('closes an approval decided here, leaving its message as the decision edited it', async () => {
        const { ports, chat, rec, store, logs } = setup();
        await showApproval(rec, { live: live({ approval: RM, approvals: 1 }) }, ports);
        const id = rec.approval?.messageId as string;
        await store.decide(rec.id, { messageId: id, decided: { by: 'alice', choice: 'once' } });
        const edits = chat.edits;
        expect(await showApproval(rec, { status: running }, ports)).toBe(true);
        expect(rec.approval?.closed).toBe(true);
        expect(stateOf(rec)).toBe('running');
        expect(chat.edits).toBe(edits);
        expect(logs.some((l) => l.includes('timed out'))).toBe(false);
    });

    it('marks one nobody decided as timed out in Hermes: its own record, its message edited, a log line', async () => {
        const { ports, chat, rec, store, logs } = setup();
        await showApproval(rec, { live: live({ approval: RM, approvals: 1 }) }, ports);
        const id = rec.approval?.messageId as string;
        expect(await showApproval(rec, { live: live({ approval: RM, approvals: 1, approvalResolution: 'deny' }) }, ports)).toBe(true);
        expect(await store.decision(rec.id, id)).toEqual({ messageId: id, timedOut: true });
        expect(chat.messages[0].text).toBe(':hourglass: The approval for `rm -rf /tmp/x` timed out; Hermes did not run it.');
        expect(chat.messages[0].buttons).toBeUndefined();
        expect(logs).toContain(`Approval for turn message ${rec.id} in room R1 timed out in Hermes.`);
        expect(rec.approval?.closed).toBe(true);
    });

    it('does nothing while nobody has said so: no status read and the stream has no resolution', async () => {
        const { ports, rec, chat } = setup();
        await showApproval(rec, { live: live({ approval: RM, approvals: 1 }) }, ports);
        expect(await showApproval(rec, { live: live({ approvals: 1 }) }, ports)).toBe(false);
        expect(rec.approval?.closed).toBeUndefined();
        expect(chat.edits).toBe(0);
    });

    it('does nothing for a turn with no approval', async () => {
        const { ports, rec, chat } = setup();
        expect(await showApproval(rec, { status: running, live: live() }, ports)).toBe(false);
        expect(chat.messages).toHaveLength(0);
    });
});
