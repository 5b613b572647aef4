import { IHttp, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IUIKitResponse, UIKitBlockInteractionContext } from '@rocket.chat/apps-engine/definition/uikit';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { EngineChat } from '../delivery/engineChat';
import { HermesClient } from '../hermes/client';
import { HermesTransport } from '../hermes/transport';
import { t, MessageKey } from '../i18n/messages';
import { LogPort } from '../security/safeLog';
import { ConfigHolder } from '../settings/configHolder';
import { ensureConfig } from '../settings/ensureConfig';
import { EngineTurns } from '../turns/engineTurns';
import { APPROVAL_ACTION, parseApprovalValue } from './approvalPolicy';
import { decideApproval } from './decide';

const REFUSAL: Record<string, MessageKey> = {
    'not-yours': 'approval_not_yours',
    'not-pending': 'approval_no_longer_pending',
    'always-refused': 'approval_always_refused',
    'not-shown-whole': 'approval_not_shown_whole',
};

/** A click on an approval button: decide, or tell only the clicker why not. */
export class ApprovalActionHandler {
    private bot: IUser | undefined;

    constructor(private readonly config: ConfigHolder, private readonly transport: HermesTransport) {}

    public async handle(context: UIKitBlockInteractionContext, read: IRead, _http: IHttp, persistence: IPersistence, modify: IModify, log: LogPort): Promise<IUIKitResponse> {
        const data = context.getInteractionData();
        const parsed = parseApprovalValue(data.value);
        const config = await ensureConfig(this.config, read, log, persistence);
        if (data.actionId !== APPROVAL_ACTION || !parsed || !config) {
            return context.getInteractionResponder().successResponse();
        }
        this.bot ??= await read.getUserReader().getAppUser();
        if (!this.bot) {
            return context.getInteractionResponder().successResponse();
        }
        const store = new EngineTurns(read.getPersistenceReader(), persistence);
        const chat = new EngineChat(read, modify, this.bot);
        const rec = await store.get(parsed.turnId);
        const where = { roomId: data.room?.id ?? rec?.roomId ?? '', threadId: data.message?.threadId ?? rec?.threadId };
        const result = rec
            ? await decideApproval(rec, { id: data.user.id, username: data.user.username }, parsed.choice, { config, hermes: new HermesClient(this.transport, config), store, chat, log }, { seenFull: parsed.seenFull, where })
            : 'not-pending';
        if (result !== 'decided' && result !== 'shown' && where.roomId) {
            await chat.whisper(data.user.id, where, t(REFUSAL[result]));
        }
        return context.getInteractionResponder().successResponse();
    }
}
