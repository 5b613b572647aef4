import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IUIKitResponse, UIKitBlockInteractionContext, UIKitViewSubmitInteractionContext } from '@rocket.chat/apps-engine/definition/uikit';
import { translator } from '../../i18n/messages';
import { ownDownVote, parseWhyViewId, saveWhy, WHY_ACTION, whyModal } from '../../feedback/why';
import { Admitted, Gate } from './gate';

/**
 * The "Tell us why" button under the private notice after a 👎, and its modal (feedback/why.ts).
 * Both name an answer (the button's value, the modal's id) and a room (the click's `rid`, the
 * modal's id): claims the gate checks (the caller is in the room, the answer is in it), then
 * the caller's own 👎 on that answer must exist; anything else gets the gate's one private line.
 */
export class FeedbackActions {
    constructor(private readonly gate: Gate) {}

    /** Resolves false when the click is not this button's. */
    public async blockAction(
        context: UIKitBlockInteractionContext,
        read: IRead,
        modify: IModify,
        persistence: IPersistence,
        logger: ILogger,
    ): Promise<boolean> {
        const data = context.getInteractionData();
        if (data.actionId !== WHY_ACTION) {
            return false;
        }
        const answerId = String(data.value ?? '');
        const admitted = await this.gate.person('block-action', { read, modify, persistence, logger }, data.user, {
            room: data.room ?? data.message?.room,
            messageId: answerId,
            need: 'read',
        });
        if (admitted && (await this.vote(admitted, answerId))) {
            const view = whyModal(admitted.room.id, answerId, translator(admitted.language));
            await modify.getUiController().openSurfaceView(view as never, { triggerId: data.triggerId }, admitted.user);
        }
        return true;
    }

    /** Resolves undefined when the modal is not this one's. */
    public async viewSubmit(
        context: UIKitViewSubmitInteractionContext,
        read: IRead,
        modify: IModify,
        persistence: IPersistence,
        logger: ILogger,
    ): Promise<IUIKitResponse | undefined> {
        const data = context.getInteractionData();
        const named = parseWhyViewId(data.view.id);
        if (!named) {
            return undefined;
        }
        const done = context.getInteractionResponder().successResponse();
        const admitted = await this.gate.person('view-submit', { read, modify, persistence, logger }, data.user, {
            roomId: named.roomId,
            messageId: named.answerId,
            need: 'read',
        });
        const vote = admitted && (await this.vote(admitted, named.answerId));
        if (!admitted || !vote) {
            return done;
        }
        const state = (data.view.state ?? {}) as Record<string, Record<string, unknown>>;
        const why = String(state.why?.why ?? '');
        if (why.trim()) {
            await saveWhy(admitted.call.feedback(), vote, why);
            await admitted.call.chat().whisper(admitted.user.id, { roomId: admitted.room.id }, (tr) => tr('feedback_why_thanks'));
        }
        return done;
    }

    /** The caller's own 👎 on the answer in the admitted room; a refusal is the gate's line. */
    private async vote(admitted: Admitted, answerId: string) {
        const vote = await ownDownVote(admitted.call.feedback(), answerId, admitted.user.id, admitted.room.id);
        if (!vote) {
            admitted.call.log.info(`Refused the feedback form from ${admitted.user.id} for answer ${answerId}: no 👎 of theirs there.`);
            await admitted.call.chat(admitted.room).whisper(admitted.user.id, { roomId: admitted.room.id }, (tr) => tr('action_not_available'));
        }
        return vote;
    }
}
