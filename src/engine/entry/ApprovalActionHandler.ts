import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IUIKitResponse, UIKitBlockInteractionContext } from '@rocket.chat/apps-engine/definition/uikit';
import { APPROVAL_ACTION, parseApprovalValue } from '../../approvals/approvalPolicy';
import { decideApproval } from '../../approvals/decide';
import { MessageKey } from '../../i18n/messages';
import { parseViewId } from '../../actions/views';
import { Gate } from './gate';

const REFUSAL: Record<string, MessageKey> = {
    'not-yours': 'approval_not_yours',
    'not-pending': 'approval_no_longer_pending',
    'always-refused': 'approval_always_refused',
    'not-shown-whole': 'approval_not_shown_whole',
};

/** A click on an approval button (the UIKit block action): decide, or tell only the clicker why not. */
export class ApprovalActionHandler {
    constructor(private readonly gate: Gate) {}

    public async handle(
        context: UIKitBlockInteractionContext,
        read: IRead,
        persistence: IPersistence,
        modify: IModify,
        logger: ILogger,
    ): Promise<IUIKitResponse> {
        const data = context.getInteractionData();
        const parsed = parseApprovalValue(data.value);
        const done = () => context.getInteractionResponder().successResponse();
        if (data.actionId !== APPROVAL_ACTION || !parsed) {
            return done();
        }
        // The click's room is the client's claim: the gate checks the clicker against it, and the turn must be of that room.
        // A click inside the panel carries no room: the panel's view id names it (the client's claim as well).
        const room = data.room ?? data.message?.room;
        const roomId = room ? undefined : parseViewId((data.container as { id?: string } | undefined)?.id)?.roomId;
        const subject = { room, roomId, message: data.message, need: 'post' as const };
        const admitted = await this.gate.person('block-action', { read, modify, persistence, logger }, data.user, subject);
        if (!admitted?.config) {
            return done();
        }
        const ports = admitted.call.decide(admitted.config);
        const found = await ports.store.get(parsed.turnId);
        const rec = found?.roomId === admitted.room.id ? found : undefined;
        const where = { roomId: admitted.room.id, threadId: data.message?.threadId ?? rec?.threadId };
        const result = rec
            ? await decideApproval(rec, { id: data.user.id, username: data.user.username }, parsed.choice, ports, { seenFull: parsed.seenFull, where })
            : 'not-pending';
        if (result !== 'decided' && result !== 'shown') {
            await ports.chat.whisper(data.user.id, where, (tr) => tr(REFUSAL[result]));
        }
        return done();
    }
}
