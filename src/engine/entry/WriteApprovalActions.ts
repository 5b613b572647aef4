import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { UIKitBlockInteractionContext } from '@rocket.chat/apps-engine/definition/uikit';
import { decideWrite } from '../../mcp/approveWrite';
import { parseWriteValue, WRITE_ACTION } from '../../mcp/writeRequest';
import { approveWritePorts } from '../writePorts';
import { Gate } from './gate';

/**
 * A click on the approval of an MCP write request (mcp/approveWrite.ts). The click's room and
 * message are the client's claim: the gate checks the clicker against them, and the request
 * must have been shown in that room, on that message, for that clicker.
 */
export class WriteApprovalActions {
    constructor(private readonly gate: Gate) {}

    /** False when the click is not on a write request's buttons. */
    public async blockAction(
        context: UIKitBlockInteractionContext,
        read: IRead,
        modify: IModify,
        persistence: IPersistence,
        logger: ILogger,
    ): Promise<boolean> {
        const data = context.getInteractionData();
        if (data.actionId !== WRITE_ACTION) {
            return false;
        }
        const parsed = parseWriteValue(data.value);
        const room = data.room ?? data.message?.room;
        const admitted =
            parsed && (await this.gate.person('block-action', { read, modify, persistence, logger }, data.user, { room, message: data.message, need: 'read' }));
        if (!parsed || !admitted?.config) {
            return true;
        }
        const where = { roomId: admitted.room.id, threadId: data.message?.threadId };
        const ports = await approveWritePorts(admitted.call, admitted.config, { id: data.user.id, language: admitted.language }, where);
        if (!admitted.config.mcpWriteTools) {
            // Switched off since it was proposed: nothing is done in anyone's name any more.
            await ports.tell((t) => t('write_not_pending'));
            return true;
        }
        await decideWrite({ ...parsed, userId: data.user.id, username: data.user.username, roomId: admitted.room.id, messageId: data.message?.id }, ports);
        return true;
    }
}
