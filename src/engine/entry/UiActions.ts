import { IConfigurationExtend, ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { UIActionButtonContext } from '@rocket.chat/apps-engine/definition/ui';
import {
    IUIKitResponse,
    UIKitActionButtonInteractionContext,
    UIKitBlockInteractionContext,
    UIKitViewSubmitInteractionContext,
} from '@rocket.chat/apps-engine/definition/uikit';
import { postSummary } from '../../actions/postSummary';
import { POST_SUMMARY_ACTION } from '../../delivery/blocks';
import { ACTIONS, askModal, parseViewId } from '../../actions/views';
import { cutAtCodePoint, neutralise } from '../../security/inertText';
import { t, translator } from '../../i18n/messages';
import { resetSession } from '../../sessions/sessionRecord';
import { stopTurn } from '../../turns/stopTurn';
import { Gate, Subject } from './gate';
import { askAbout, catchUp, summarizeThread } from './MessageActions';
import { panelOf, panelExchange, panelResume } from './PanelSurface';
import { mainKey, openSurface } from './uiSurface';

/** The buttons the app adds to Rocket.Chat: on messages, and in the room menu. */
export async function registerButtons(configuration: IConfigurationExtend): Promise<void> {
    const ui = configuration.ui;
    await ui.registerButton({ actionId: ACTIONS.ask, labelI18n: 'action_ask', context: UIActionButtonContext.MESSAGE_ACTION });
    await ui.registerButton({ actionId: ACTIONS.summarize, labelI18n: 'action_summarize', context: UIActionButtonContext.MESSAGE_ACTION });
    await ui.registerButton({ actionId: ACTIONS.catchUp, labelI18n: 'action_catch_up', context: UIActionButtonContext.ROOM_ACTION });
    await ui.registerButton({ actionId: ACTIONS.panel, labelI18n: 'action_panel', context: UIActionButtonContext.ROOM_ACTION });
}

/**
 * What only an app inside Rocket.Chat can do (message actions, the room menu, the run panel).
 * Every action is admitted like a message (allowlist, ignored senders, rooms the bot is in)
 * and runs as a normal turn; answers meant for one person are whispered.
 */
export class UiActions {
    constructor(private readonly gate: Gate) {}

    public async actionButton(
        context: UIKitActionButtonInteractionContext,
        read: IRead,
        modify: IModify,
        persistence: IPersistence,
        logger: ILogger,
    ): Promise<IUIKitResponse> {
        const data = context.getInteractionData();
        const done = context.getInteractionResponder().successResponse();
        // A message action names a message (its room is the server's); a room action only the room. Both only show the clicker something.
        const onMessage = data.actionId === ACTIONS.ask || data.actionId === ACTIONS.summarize;
        const subject: Subject = onMessage
            ? { room: data.room ?? data.message?.room, message: data.message, messageNamed: true, need: 'read' }
            : { room: data.room, need: 'read' };
        const ctx = await openSurface(this.gate, 'action-button', { read, modify, persistence, logger }, data.user, subject, data.triggerId);
        if (!ctx) {
            return done;
        }
        switch (data.actionId) {
            case ACTIONS.ask: {
                const message = data.message;
                if (message?.id) {
                    const quoted = cutAtCodePoint(neutralise(message.text ?? '').replace(/\s+/g, ' '), 300);
                    await modify
                        .getUiController()
                        .openSurfaceView(askModal(ctx.room.id, message.id, quoted, translator(ctx.language)) as never, { triggerId: data.triggerId }, ctx.user);
                }
                return done;
            }
            case ACTIONS.summarize:
                await summarizeThread(ctx, data.message?.threadId || data.message?.id);
                return done;
            case ACTIONS.catchUp:
                await catchUp(ctx);
                return done;
            case ACTIONS.panel:
                await modify.getUiController().openSurfaceView((await panelOf(ctx)) as never, { triggerId: data.triggerId }, ctx.user);
                return done;
        }
        return done;
    }

    public async viewSubmit(
        context: UIKitViewSubmitInteractionContext,
        read: IRead,
        modify: IModify,
        persistence: IPersistence,
        logger: ILogger,
    ): Promise<IUIKitResponse> {
        const data = context.getInteractionData();
        const responder = context.getInteractionResponder();
        const view = parseViewId(data.view.id);
        if (view?.kind !== 'hermes-ask' || !view.other) {
            return responder.successResponse();
        }
        const state = (data.view.state ?? {}) as Record<string, Record<string, unknown>>;
        const question = String(state.question?.question ?? '').trim();
        if (!question) {
            return responder.viewErrorResponse({ viewId: data.view.id, errors: { question: t('action_ask_empty') } });
        }
        const privately = state.where?.where === 'private';
        // The view id is the client's to forge: its room and message are checked like a click's.
        const subject: Subject = { roomId: view.roomId, messageId: view.other, need: privately ? 'read' : 'post' };
        const ctx = await openSurface(this.gate, 'view-submit', { read, modify, persistence, logger }, data.user, subject, data.triggerId);
        if (ctx) {
            await askAbout(ctx, view.other, question, privately);
        }
        return responder.successResponse();
    }

    /** Clicks inside the panel, and "Post to thread" under a private summary. Resolves false when the click is not one of these. */
    public async blockAction(
        context: UIKitBlockInteractionContext,
        read: IRead,
        modify: IModify,
        persistence: IPersistence,
        logger: ILogger,
    ): Promise<boolean> {
        const data = context.getInteractionData();
        const accessors = { read, modify, persistence, logger };
        if (data.actionId === POST_SUMMARY_ACTION) {
            // The notice the button sits in was shown in the summary's room: the click names it, and posting there needs posting rights.
            const room = data.room ?? data.message?.room;
            const admitted = await this.gate.person('block-action', accessors, data.user, { room, need: 'post' });
            if (!admitted) {
                return true;
            }
            const { call } = admitted;
            const where = { roomId: admitted.room.id, threadId: data.message?.threadId };
            const result = await postSummary(String(data.value ?? ''), { userId: data.user.id, roomId: admitted.room.id }, call.summaries(), (s) =>
                call
                    .chat()
                    .post({ roomId: s.roomId, threadId: s.threadId }, s.text, 'answer')
                    .then(() => undefined),
            );
            const key = result === 'posted' ? 'action_summary_posted' : result === 'gone' ? 'action_summary_gone' : 'action_summary_not_yours';
            await call.chat().whisper(data.user.id, where, (tr) => tr(key));
            return true;
        }
        const view = parseViewId((data.container as { id?: string } | undefined)?.id);
        if (
            view?.kind !== 'hermes-panel' ||
            !([ACTIONS.panelStop, ACTIONS.panelRefresh, ACTIONS.panelNew, ACTIONS.panelResume, ACTIONS.panelRetry, ACTIONS.panelUndo] as string[]).includes(
                data.actionId,
            )
        ) {
            return false;
        }
        // Refresh only shows the clicker their panel; Stop, New session, Resume, Retry and Undo change the conversation.
        const need = data.actionId === ACTIONS.panelRefresh ? 'read' : 'post';
        const ctx = await openSurface(this.gate, 'block-action', accessors, data.user, { roomId: view.roomId, need }, data.triggerId);
        if (!ctx) {
            return true;
        }
        const key = mainKey(ctx);
        let notice: string | undefined;
        if (data.actionId === ACTIONS.panelStop) {
            const rec = await ctx.call.turns().get(String(data.value ?? ''));
            // The panel shows only the person's own turns; a forged click on another's turn is refused by stopTurn's own rule.
            if (rec && rec.askerId === ctx.user.id) {
                await stopTurn(
                    rec.sessionKey,
                    { id: ctx.user.id, username: ctx.user.username },
                    { ...ctx.call.commands(ctx.config), isAdmin: false, store: ctx.call.turns() },
                );
            }
        } else if (data.actionId === ACTIONS.panelNew) {
            await resetSession(ctx.call.sessions(), key);
        } else if (data.actionId === ACTIONS.panelResume) {
            notice = await panelResume(ctx, key, String(data.value ?? ''));
        } else if (data.actionId === ACTIONS.panelRetry || data.actionId === ACTIONS.panelUndo) {
            notice = await panelExchange(ctx, key, data.actionId === ACTIONS.panelRetry ? 'retry' : 'undo');
        }
        await modify.getUiController().updateSurfaceView((await panelOf(ctx, notice)) as never, { triggerId: data.triggerId }, ctx.user);
        return true;
    }
}
