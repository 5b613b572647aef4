import { LiveChatPort } from '../delivery/chatPort';
import { HermesClient } from '../hermes/client';
import { HermesError } from '../hermes/errors';
import { LogPort } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { TurnRecord, TurnStore } from '../turns/turnRecord';
import { mayDecide, offeredChoices } from './approvalPolicy';
import { decidedText, timedOutText } from './approvalView';

export type Decision = 'decided' | 'not-yours' | 'not-pending' | 'always-refused';

export interface DecidePorts {
    config: HermesConfig;
    hermes: HermesClient;
    store: TurnStore;
    chat: LiveChatPort;
    log: LogPort;
}

/**
 * Answers Hermes's pending approval for a turn, from a button or a text reply. Only the
 * asker or an admin may decide; "always" only where it was offered. The approval message is
 * edited to say who decided what, and its buttons go.
 */
export async function decideApproval(rec: TurnRecord, user: { id: string; username: string }, choice: string, ports: DecidePorts): Promise<Decision> {
    // A click can beat the tick that posted the approval message to saving it: give it a moment.
    for (let i = 0; i < 10 && !rec.approval && rec.phase === 'running'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        rec = (await ports.store.get(rec.id)) ?? rec;
    }
    if (!rec.approval || rec.approval.decided || rec.approval.timedOut || rec.phase !== 'running' || !rec.runId) {
        return 'not-pending';
    }
    if (!mayDecide(user.id, rec.askerId, ports.config.adminUserIds)) {
        return 'not-yours';
    }
    const offered = offeredChoices(rec.approval.request, { isDirect: rec.kind === 'dm' && !rec.threadId, askerId: rec.askerId, adminUserIds: ports.config.adminUserIds });
    if (!offered.includes(choice)) {
        return 'always-refused';
    }
    try {
        await ports.hermes.approve(rec.runId, choice);
    } catch (error) {
        if (error instanceof HermesError && (error.status === 409 || error.status === 404)) {
            rec.approval.timedOut = true;
            await ports.store.save(rec);
            await ports.chat.edit(rec.approval.messageId, timedOutText(rec.approval.request), null).catch(() => undefined);
            ports.log.info(`Approval for message ${rec.id} arrived after Hermes moved on (${error.detail}).`);
            return 'not-pending';
        }
        throw error;
    }
    rec.approval.decided = { by: user.username, choice };
    await ports.store.save(rec);
    await ports.chat.edit(rec.approval.messageId, decidedText(rec.approval.request, user.username, choice), null);
    ports.log.info(`Approval for message ${rec.id}: ${choice} by ${user.id}.`);
    return 'decided';
}

/** The turn in this conversation whose approval is pending, if any. */
export async function pendingApproval(store: TurnStore, sessionKey: string): Promise<TurnRecord | undefined> {
    return (await store.openInSession(sessionKey)).find((r) => r.approval && !r.approval.decided && !r.approval.timedOut);
}
