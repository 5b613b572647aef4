import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IUIKitResponse, UIKitBlockInteractionContext } from '@rocket.chat/apps-engine/definition/uikit';
import { APPROVAL_ACTION, parseApprovalValue } from '../../approvals/approvalPolicy';
import { decideApproval } from '../../approvals/decide';
import { MessageKey } from '../../i18n/messages';
import { AppState, CallPorts } from '../callPorts';

const REFUSAL: Record<string, MessageKey> = {
    'not-yours': 'approval_not_yours',
    'not-pending': 'approval_no_longer_pending',
    'always-refused': 'approval_always_refused',
    'not-shown-whole': 'approval_not_shown_whole',
};

/** A click on an approval button (the UIKit block action): decide, or tell only the clicker why not. */
export class ApprovalActionHandler {
    constructor(private readonly app: AppState) {}

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
        const call = await CallPorts.open(this.app, read, modify, persistence, logger);
        if (!call.config || !call.bot) {
            return done();
        }
        const ports = call.decide(call.config);
        const rec = await ports.store.get(parsed.turnId);
        const where = { roomId: data.room?.id ?? rec?.roomId ?? '', threadId: data.message?.threadId ?? rec?.threadId };
        const result = rec
            ? await decideApproval(rec, { id: data.user.id, username: data.user.username }, parsed.choice, ports, { seenFull: parsed.seenFull, where })
            : 'not-pending';
        if (result !== 'decided' && result !== 'shown' && where.roomId) {
            await ports.chat.whisper(data.user.id, where, (tr) => tr(REFUSAL[result]));
        }
        return done();
    }
}
