import { ButtonsView } from '../delivery/chatPort';
import { move } from '../turns/machine';
import { ApprovalRequest } from '../hermes/runs';
import { HermesConfig } from '../settings/config';
import { Seen } from '../turns/observe';
import { streamHeldElsewhere } from '../turns/owner';
import { TickPorts } from '../turns/tickPorts';
import { describe, TurnRecord } from '../turns/turnRecord';
import { offeredChoices } from './approvalPolicy';
import { approvalButtons, timedOutText } from './approvalView';

/** Without the stream, a decided approval followed by "still waiting" this much later is a new one. */
const NEW_APPROVAL_AFTER_MS = 5_000;

/** The choices a turn's approval offers, by the policy (the view may offer fewer). */
export function choicesFor(rec: TurnRecord, request: ApprovalRequest, config: Pick<HermesConfig, 'adminUserIds'>): string[] {
    return offeredChoices(request, { isDirect: rec.kind === 'dm' && !rec.threadId, askerId: rec.askerId, adminUserIds: config.adminUserIds });
}

/** The approval message's text and buttons for this turn: what the room shows and the panel repeats. */
export function approvalViewOf(rec: TurnRecord, request: ApprovalRequest, config: Pick<HermesConfig, 'adminUserIds'>, unknown = false): ButtonsView {
    return approvalButtons(rec.id, request, rec.askerUsername, choicesFor(rec, request, config), unknown);
}

/**
 * Posts the approval message when Hermes waits for one (each approval of a run gets its own
 * message), and closes it when Hermes moves on without a decision from here (timed out in
 * Hermes). Decisions are written by the button handler into their own record, never into
 * the turn record. Returns whether the turn record changed.
 */
export async function showApproval(rec: TurnRecord, seen: Seen, ports: TickPorts): Promise<boolean> {
    const live = seen.live;
    const waiting = seen.status?.status === 'waiting_for_approval' || Boolean(live?.approval && !live.approvalResolution);
    const open = rec.approval && !rec.approval.closed ? rec.approval : undefined;
    if (waiting && (!rec.approval || (await isNewApproval(rec, seen, ports)))) {
        return postApproval(rec, seen, ports);
    }
    if (open && !waiting && (seen.status || live?.approvalResolution)) {
        // Hermes moved on. Decided here (the handler edited the message), or timed out in Hermes.
        const decision = await ports.store.decision(rec.id, open.messageId);
        move(rec, { kind: 'approvalClosed' });
        if (!decision?.decided) {
            await ports.store.decide(rec.id, { messageId: open.messageId, timedOut: true });
            await ports.chat.edit(open.messageId, rec.roomId, timedOutText(open.request), { kind: 'approval', turnId: rec.id });
            ports.log.info(`Approval for turn ${describe(rec)} timed out in Hermes.`);
        }
        return true;
    }
    return false;
}

async function isNewApproval(rec: TurnRecord, seen: Seen, ports: TickPorts): Promise<boolean> {
    const current = rec.approval;
    if (!current) {
        return true;
    }
    const count = (seen.live as { approvals?: number } | undefined)?.approvals;
    if (seen.live && typeof count === 'number') {
        return count > current.number;
    }
    // No stream here (another process started it): a decided approval with Hermes still waiting long after is a new one.
    const decision = await ports.store.decision(rec.id, current.messageId);
    return Boolean(decision && (current.closed || decision.decided) && ports.now() - (current.postedAt ?? 0) > NEW_APPROVAL_AFTER_MS);
}

async function postApproval(rec: TurnRecord, seen: Seen, ports: TickPorts): Promise<boolean> {
    const request = seen.status?.approval ?? seen.live?.approval;
    if (!request && seen.live && !seen.live.done) {
        // v0.18.2's status has no approval details; they come on the event stream, which wakes the turn.
        return false;
    }
    if (!request && !seen.live && streamHeldElsewhere(rec, ports.now())) {
        // The stream is on another instance, alive: it posts the approval with the command (a tick of this turn runs there soon).
        return false;
    }
    // After a restart the stream (the only carrier of the command on v0.18.2) is gone: the
    // command cannot be shown, so nobody is asked to approve it blind; only Deny is offered.
    const unknown = !request?.command;
    const shown: ApprovalRequest = request ?? { command: '', description: '', choices: ['once', 'deny'], allowPermanent: false };
    const view = approvalViewOf(rec, shown, ports.config, unknown);
    const messageId = await ports.chat.post({ roomId: rec.roomId, threadId: rec.threadId }, view.text, 'approval', { turnId: rec.id, buttons: view });
    const number = (seen.live as { approvals?: number } | undefined)?.approvals ?? (rec.approval?.number ?? 0) + 1;
    move(rec, { kind: 'approvalAsked', approval: { messageId, request: shown, number, unknownCommand: unknown || undefined, postedAt: ports.now() } });
    ports.log.info(`Turn ${describe(rec)} waits for approval ${number} (choices: ${view.buttons.map((b) => b.value.split('|')[1]).join(', ')}).`);
    return true;
}
