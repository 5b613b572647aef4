import { IConfigurationExtend, ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { UIActionButtonContext } from '@rocket.chat/apps-engine/definition/ui';
import {
    IUIKitResponse,
    UIKitActionButtonInteractionContext,
    UIKitBlockInteractionContext,
    UIKitViewSubmitInteractionContext,
} from '@rocket.chat/apps-engine/definition/uikit';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { approvalViewOf } from '../../approvals/approvalPrompt';
import { askText, catchUpText, startActionTurn, summaryText } from '../../actions/actionTurn';
import { POST_SUMMARY_ACTION, postSummary } from '../../actions/postSummary';
import { ACTIONS, askModal, panelView, parseViewId } from '../../actions/views';
import { commandSessionKey } from '../../commands/conversationScope';
import { runCommand } from '../../commands/runCommand';
import { commandAllowed } from '../../commands/textCommand';
import { conversationKind } from '../../admission/admit';
import { policyForRoom } from '../../policy/roomPolicy';
import { ContextMessage } from '../../context/contextMessage';
import { pointerLine } from '../../context/replyPointer';
import { pickContextFiles } from '../../files/contextFiles';
import { threadWorthy } from '../../context/frontier';
import { cutAtCodePoint, neutralise } from '../../context/renderLine';
import { t, Translate, translator } from '../../i18n/messages';
import { formatStamp } from '../../context/timestamp';
import { resetSession } from '../../sessions/sessionRecord';
import { distinctNewestFirst } from '../../sessions/sessionIndex';
import { stopTurn } from '../../turns/stopTurn';
import { turnsAhead } from '../../turns/freshClaim';
import { usageDay } from '../../usage/usage';
import { CallPorts } from '../callPorts';
import { Accessors, Gate, Subject, Way } from './gate';
import { describeRefusal, refusalNotice, roomRules } from '../../admission/turnAdmission';
import { HermesConfig } from '../../settings/config';

/** Messages a catch-up or a summary reads at most. */
const MAX_READ = 200;
const DAY_MS = 86_400_000;

/** The buttons the app adds to Rocket.Chat: on messages, and in the room menu. */
export async function registerButtons(configuration: IConfigurationExtend): Promise<void> {
    const ui = configuration.ui;
    await ui.registerButton({ actionId: ACTIONS.ask, labelI18n: 'action_ask', context: UIActionButtonContext.MESSAGE_ACTION });
    await ui.registerButton({ actionId: ACTIONS.summarize, labelI18n: 'action_summarize', context: UIActionButtonContext.MESSAGE_ACTION });
    await ui.registerButton({ actionId: ACTIONS.catchUp, labelI18n: 'action_catch_up', context: UIActionButtonContext.ROOM_ACTION });
    await ui.registerButton({ actionId: ACTIONS.panel, labelI18n: 'action_panel', context: UIActionButtonContext.ROOM_ACTION });
}

interface Ctx {
    call: CallPorts;
    config: HermesConfig;
    bot: IUser;
    user: IUser;
    room: IRoom;
    triggerId: string;
    /** The clicking person's language preference: what only they see is in it. */
    language?: string;
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
        const ctx = await this.open('action-button', { read, modify, persistence, logger }, data.user, subject, data.triggerId);
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
                await this.summarize(ctx, data.message?.threadId || data.message?.id);
                return done;
            case ACTIONS.catchUp:
                await this.catchUp(ctx);
                return done;
            case ACTIONS.panel:
                await modify.getUiController().openSurfaceView((await this.panel(ctx)) as never, { triggerId: data.triggerId }, ctx.user);
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
        const ctx = await this.open('view-submit', { read, modify, persistence, logger }, data.user, subject, data.triggerId);
        if (ctx) {
            await this.ask(ctx, view.other, question, privately);
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
            !([ACTIONS.panelStop, ACTIONS.panelRefresh, ACTIONS.panelNew, ACTIONS.panelResume] as string[]).includes(data.actionId)
        ) {
            return false;
        }
        // Refresh only shows the clicker their panel; Stop, New session and Resume change the conversation.
        const need = data.actionId === ACTIONS.panelRefresh ? 'read' : 'post';
        const ctx = await this.open('block-action', accessors, data.user, { roomId: view.roomId, need }, data.triggerId);
        if (!ctx) {
            return true;
        }
        const key = this.mainKey(ctx);
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
            notice = await this.resume(ctx, key, String(data.value ?? ''));
        }
        await modify.getUiController().updateSurfaceView((await this.panel(ctx, notice)) as never, { triggerId: data.triggerId }, ctx.user);
        return true;
    }

    /**
     * The panel's Resume: `/hermes resume <id>` (the same command, its allowlist and its answer) for
     * one of the sessions the panel lists that is the person's own. The click's value is the
     * person's to forge: any other id is refused here, without a word (the panel never offered it).
     */
    private async resume(ctx: Ctx, key: string, sessionId: string): Promise<string | undefined> {
        const index = ctx.call.sessionIndex();
        const listed = (await index.inScope(key)).some((e) => e.sessionId === sessionId);
        if (!listed || !(await index.owned(ctx.user.id)).some((e) => e.sessionId === sessionId)) {
            ctx.call.log.info(`Panel resume refused for ${ctx.user.id} in room ${ctx.room.id}: not one of their sessions here.`);
            return undefined;
        }
        const isDm = this.isDm(ctx);
        const answer = await runCommand({ kind: 'known', name: 'resume', args: sessionId }, { id: ctx.user.id, username: ctx.user.username }, key, {
            ...ctx.call.commands(ctx.config),
            room: policyForRoom(ctx.config, ctx.room.id, isDm),
            scope: { roomId: ctx.room.id, roomType: String(ctx.room.type), roomName: ctx.room.slugifiedName, kind: isDm ? 'dm' : 'room' },
            language: ctx.language,
        });
        return answer.text;
    }

    private isDm(ctx: Ctx): boolean {
        return conversationKind({ roomType: String(ctx.room.type), directMemberCount: ctx.room.userIds?.length }) === 'dm';
    }

    /** Through the gate (the caller against the room and message named), then the surface's own rule: message actions on. */
    private async open(way: Way, a: Accessors, user: IUser, subject: Subject, triggerId: string): Promise<Ctx | undefined> {
        const admitted = await this.gate.person(way, a, user, subject);
        if (!admitted) {
            return undefined;
        }
        const { call, config, bot, room, language } = admitted;
        if (!config || !config.messageActions) {
            call.log.debug(`Refused a message action from ${user.id} in room ${room.id}: message actions are off or no configuration.`);
            await call.chat(room).whisper(user.id, { roomId: room.id }, (tr) => tr('action_not_available'));
            return undefined;
        }
        // The room's rules as a mention meets them (an `off` or automation room, a malformed policy), before any history is read.
        const rules = roomRules(
            {
                source: 'action',
                asker: { id: user.id, username: user.username },
                room: { id: room.id, type: String(room.type), directMemberCount: room.userIds?.length },
            },
            config,
        );
        if (!rules.admit) {
            call.log.info(`Refused a message action from ${user.id} in room ${room.id}: ${describeRefusal(rules)}.`);
            await call.chat(room).whisper(user.id, { roomId: room.id }, refusalNotice(rules, config));
            return undefined;
        }
        return { call, config, bot, user, room, triggerId, language };
    }

    private mainKey(ctx: Ctx, threadId?: string): string {
        // A room whose policy names a profile has its sessions under that profile's keys, as its turns and `/hermes` do.
        const policy = policyForRoom(ctx.config, ctx.room.id, this.isDm(ctx));
        return commandSessionKey(
            {
                roomType: String(ctx.room.type),
                roomId: ctx.room.id,
                directMemberCount: ctx.room.userIds?.length,
                threadId,
                userId: ctx.user.id,
                profile: policy.kind === 'entry' ? policy.policy.profile : undefined,
            },
            ctx.config,
        );
    }

    private async start(ctx: Ctx, turn: Parameters<typeof startActionTurn>[0]): Promise<void> {
        const call = ctx.call;
        const config = ctx.config;
        const started = await startActionTurn(turn, {
            turns: call.turns(),
            claim: (id) => call.receipts().claim(id),
            schedule: async (job) => call.schedule(job, 0),
            now: () => Date.now(),
            config,
            usage: call.usage(),
            notify: (text) => call.chat(ctx.room).whisper(ctx.user.id, { roomId: ctx.room.id, threadId: turn.threadId }, text),
            log: call.log,
        });
        if (started) {
            call.log.info(`Message action ${turn.kind} by ${ctx.user.id} in room ${ctx.room.id} started (turn ${turn.id}, ${config.hermesTransport}).`);
        }
    }

    /** "Ask Hermes about this": the question with the message as its pointer; into the message's thread, or privately in a one-off session. */
    private async ask(ctx: Ctx, messageId: string, question: string, privately: boolean): Promise<void> {
        const found = await ctx.call.history().message(messageId);
        const target = found && found.roomId === ctx.room.id ? found : undefined;
        const pointer = target ? pointerLine(target, ctx.bot.id) : undefined;
        const threadId = found?.threadId || messageId;
        await this.start(ctx, {
            id: `ask.${ctx.triggerId}`,
            kind: 'ask',
            ...who(ctx),
            threadId,
            private: privately,
            sessionKey: privately ? undefined : this.mainKey(ctx, threadId),
            user: askText(pointer, question),
            // The message asked about is quoted: its files go as a quoted message's do (context_files).
            contextFiles:
                target && ctx.config.contextFiles > 0
                    ? pickContextFiles({ messages: [], quoted: target, max: ctx.config.contextFiles, botId: ctx.bot.id })
                    : undefined,
        });
    }

    /** "Summarize this thread": the whole thread, in a one-off session, privately, with a button to post it. */
    private async summarize(ctx: Ctx, threadId: string | undefined): Promise<void> {
        if (!threadId) {
            return;
        }
        const thread = await ctx.call.history().thread(threadId, { id: '', createdAt: new Date() });
        await this.start(ctx, {
            id: `summary.${ctx.triggerId}`,
            kind: 'summary',
            ...who(ctx),
            threadId,
            private: true,
            user: summaryText(visible(thread, ctx.bot.id), this.renderOpts(ctx), MAX_READ),
        });
    }

    /**
     * "Catch me up": what the room said since the person last wrote there, or in the last 24
     * hours (Rocket.Chat does not hand apps a person's read position), at most 200 messages.
     */
    private async catchUp(ctx: Ctx): Promise<void> {
        const now = Date.now();
        const history = await ctx.call.history().mainChannel(ctx.room.id, { id: '', createdAt: new Date(now) }, (h) => h.length >= MAX_READ, MAX_READ);
        const lastOwn = history.map((m) => m.senderId).lastIndexOf(ctx.user.id);
        const sinceOwn = lastOwn !== -1 && now - history[lastOwn].createdAt.getTime() < DAY_MS;
        const window = sinceOwn ? history.slice(lastOwn + 1) : history.filter((m) => now - m.createdAt.getTime() < DAY_MS);
        const sinceIn = (tr: Translate) =>
            sinceOwn ? tr('action_catch_up_since_wrote', { at: formatStamp(history[lastOwn].createdAt, ctx.config.timezone) }) : tr('action_catch_up_day');
        const since = sinceIn(t);
        const messages = visible(window, ctx.bot.id);
        if (messages.length === 0) {
            await ctx.call.chat(ctx.room).whisper(ctx.user.id, { roomId: ctx.room.id }, (tr) => tr('action_catch_up_nothing', { since: sinceIn(tr) }));
            return;
        }
        await this.start(ctx, {
            id: `catchup.${ctx.triggerId}`,
            kind: 'catchup',
            ...who(ctx),
            private: true,
            user: catchUpText(messages, since, this.renderOpts(ctx), MAX_READ),
        });
    }

    private renderOpts(ctx: Ctx) {
        return { timeZone: ctx.config.timezone, botId: ctx.bot.id, allowedUserIds: ctx.config.allowedUserIds };
    }

    /** The person's own turns in this room, their sessions here (Resume on their own), their usage today. */
    private async panel(ctx: Ctx, notice?: string) {
        const now = Date.now();
        const open = await ctx.call.turns().open();
        const mine = open.filter((r) => r.askerId === ctx.user.id && r.roomId === ctx.room.id);
        const key = this.mainKey(ctx);
        const current = (await ctx.call.sessions().get(key)).sessionId;
        const canResume = commandAllowed('resume', ctx.user.id, ctx.config);
        const index = ctx.call.sessionIndex();
        const own = canResume ? new Set((await index.owned(ctx.user.id)).map((e) => e.sessionId)) : new Set<string>();
        const sessions = distinctNewestFirst(await index.inScope(key)).map((e) => ({
            id: e.sessionId,
            title: e.autoTitle ?? e.sessionId,
            lastActive: e.startedAt,
            current: e.sessionId === current,
            own: own.has(e.sessionId),
        }));
        const today = (await ctx.call.usage().today(usageDay(now, ctx.config.timezone), ctx.user.id, ctx.room.id, { user: true, room: false })).user;
        return panelView(
            {
                roomId: ctx.room.id,
                turns: mine.map((r) => ({
                    id: r.id,
                    elapsedMs: now - (r.startedAt ?? r.createdAt),
                    tools: r.progress,
                    approval: r.approval && !r.approval.closed ? approvalViewOf(r, r.approval.request, ctx.config, r.approval.unknownCommand) : undefined,
                    // Queued with nothing ahead and a free slot: being handed to Hermes this moment, so working, not waiting.
                    queued:
                        r.phase === 'queued' &&
                        (r.waiting === 'slot' ||
                            turnsAhead(
                                r,
                                open.filter((o) => o.sessionKey === r.sessionKey),
                                now,
                            ).length > 0),
                })),
                sessions,
                canResume,
                notice,
                today: today ?? { turns: 0, in: 0, out: 0 },
                timeZone: ctx.config.timezone,
            },
            // Only this person sees the panel: in their language.
            translator(ctx.language),
        );
    }
}

/** The asker and the room of an action's turn. */
function who(ctx: Ctx): Pick<Parameters<typeof startActionTurn>[0], 'asker' | 'room'> {
    return {
        asker: { id: ctx.user.id, username: ctx.user.username, language: ctx.language },
        room: { id: ctx.room.id, type: String(ctx.room.type), name: ctx.room.slugifiedName, directMemberCount: ctx.room.userIds?.length },
    };
}

/** What a summary or a catch-up reads: what a thread session would be handed (context/frontier.ts). */
function visible(messages: ContextMessage[], botId: string): ContextMessage[] {
    return messages.filter((m) => threadWorthy(m, botId));
}
