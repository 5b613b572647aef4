import { beingSent } from '../turns/owner';
import { LiveChatPort } from '../delivery/chatPort';
import { HermesClient } from '../hermes/client';
import { HermesError } from '../hermes/errors';
import { LogPort } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { hermesFor, TurnRecord } from '../turns/turnRecord';
import { TurnStore } from '../turns/turnStore';
import { choicesFor } from './approvalPrompt';
import { mayDecide } from './approvalPolicy';
import { commandFullyShown, decidedText, fullCommandView, timedOutText } from './approvalView';

export type Decision = 'decided' | 'shown' | 'not-yours' | 'not-pending' | 'always-refused' | 'not-shown-whole';

export interface DecidePorts {
    config: HermesConfig;
    hermes: HermesClient;
    store: TurnStore;
    chat: LiveChatPort;
    log: LogPort;
    sleep?: (ms: number) => Promise<void>;
}

/**
 * Answers Hermes's pending approval for a turn, from a button or a text reply. Only the
 * asker or an admin may decide; "always" only where it was offered; Approve only for a
 * command the person could read whole. The decision is its own record (the turn's ticks
 * own the turn record); the approval message is edited to say who decided what.
 */
export async function decideApproval(
    rec: TurnRecord,
    user: { id: string; username: string },
    choice: string,
    ports: DecidePorts,
    opts: { seenFull?: boolean; where?: { roomId: string; threadId?: string } } = {},
): Promise<Decision> {
    const sleep = ports.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    // Decide on the turn as it is now: a finished turn is gone, and nothing is written for it.
    const current = await ports.store.get(rec.id);
    if (!current) {
        return 'not-pending';
    }
    rec = current;
    // A click can beat the tick that posted the approval message to saving it: give it a moment.
    // A quick turn's record may still say it is being sent (carryOn.ts writes the run and
    // the approval together when the turn leaves its event).
    for (let i = 0; i < 10 && approvalMayBeSaving(rec); i++) {
        await sleep(100);
        rec = (await ports.store.get(rec.id)) ?? rec;
    }
    const approval = rec.approval;
    if (!approval || approval.closed || rec.phase !== 'running' || !rec.runId) {
        return 'not-pending';
    }
    const earlier = await ports.store.decision(rec.id, approval.messageId);
    if (earlier?.decided || earlier?.timedOut) {
        return 'not-pending';
    }
    if (!mayDecide(user.id, rec.askerId, ports.config.adminUserIds)) {
        return 'not-yours';
    }
    const offered = choicesFor(rec, approval.request, ports.config);
    if (choice === 'show') {
        if (approval.unknownCommand) {
            return 'not-pending';
        }
        await ports.chat.whisper(user.id, opts.where ?? { roomId: rec.roomId, threadId: rec.threadId }, ...viewArgs(rec, offered));
        return 'shown';
    }
    if (!offered.includes(choice)) {
        return 'always-refused';
    }
    if (choice !== 'deny' && !opts.seenFull && !commandFullyShown(approval.request, approval.unknownCommand)) {
        return 'not-shown-whole';
    }
    try {
        await hermesFor(rec, ports.hermes).approve(rec.runId, choice);
    } catch (error) {
        if (error instanceof HermesError && (error.status === 409 || error.status === 404)) {
            await ports.store.decide(rec.id, { messageId: approval.messageId, timedOut: true });
            await ports.chat.edit(approval.messageId, rec.roomId, timedOutText(approval.request), { kind: 'approval', turnId: rec.id }).catch(() => undefined);
            ports.log.info(`Approval for message ${rec.id} arrived after Hermes moved on (${error.detail}).`);
            return 'not-pending';
        }
        throw error;
    }
    await ports.store.decide(rec.id, { messageId: approval.messageId, decided: { by: user.username, choice } });
    await ports.chat.edit(approval.messageId, rec.roomId, decidedText(approval.request, user.username, choice), { kind: 'approval', turnId: rec.id });
    ports.log.info(`Approval for message ${rec.id}: ${choice} by ${user.id}.`);
    return 'decided';
}

function viewArgs(rec: TurnRecord, offered: string[]): [string, ReturnType<typeof fullCommandView>] {
    const view = fullCommandView(rec.id, (rec.approval as NonNullable<TurnRecord['approval']>).request, offered);
    return [view.text, view];
}

/** A turn at Hermes (or being sent) with no approval recorded: the tick that posted one may still be saving it. */
function approvalMayBeSaving(r: TurnRecord): boolean {
    return !r.approval && (r.phase === 'running' || beingSent(r));
}

/**
 * The turn in this conversation whose approval is pending, if any. As for a click: a `yes`
 * can beat the tick that posted the approval to saving it, so while a turn of the session is
 * at Hermes with no approval recorded, it looks again for up to a second.
 */
export async function pendingApproval(
    store: TurnStore,
    sessionKey: string,
    sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
): Promise<TurnRecord | undefined> {
    for (let i = 0; ; i++) {
        const open = await store.openInSession(sessionKey);
        const pending = open.find((r) => r.approval && !r.approval.closed);
        if (pending || i >= 10 || !open.some(approvalMayBeSaving)) {
            return pending;
        }
        await sleep(100);
    }
}
