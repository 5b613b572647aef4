import { askText, catchUpText, startActionTurn, summaryText } from '../../actions/actionTurn';
import { ContextMessage } from '../../context/contextMessage';
import { threadWorthy } from '../../context/frontier';
import { pointerLine } from '../../context/replyPointer';
import { formatStamp } from '../../time/timestamp';
import { pickContextFiles } from '../../files/contextFiles';
import { t, Translate } from '../../i18n/messages';
import { Ctx, mainKey } from './uiSurface';

/** Messages a catch-up or a summary reads at most. */
const MAX_READ = 200;
const DAY_MS = 86_400_000;

/*
 * The message actions (Ask Hermes about this, Summarize this thread) and Catch me up, once the
 * gate and the surface's rules admitted the click: each reads what it is about and starts an
 * ordinary turn (actions/actionTurn.ts), which is admitted again as a mention is (room policy,
 * budgets).
 */

/** Starts an action's turn; logs it when it started (a refusal was told to the asker there). */
async function startTurnOf(ctx: Ctx, turn: Parameters<typeof startActionTurn>[0]): Promise<void> {
    const call = ctx.call;
    const config = ctx.config;
    const started = await startActionTurn(
        turn,
        call.actionPorts(config, (text) => call.chat(ctx.room).whisper(ctx.user.id, { roomId: ctx.room.id, threadId: turn.threadId }, text)),
    );
    if (started) {
        call.log.info(`Message action ${turn.kind} by ${ctx.user.id} in room ${ctx.room.id} started (turn ${turn.id}, ${config.hermesTransport}).`);
    }
}

/** "Ask Hermes about this": the question with the message as its pointer; into the message's thread, or privately in a one-off session. */
export async function askAbout(ctx: Ctx, messageId: string, question: string, privately: boolean): Promise<void> {
    const found = await ctx.call.history().message(messageId);
    const target = found && found.roomId === ctx.room.id ? found : undefined;
    const pointer = target ? pointerLine(target, ctx.bot.id) : undefined;
    const threadId = found?.threadId || messageId;
    await startTurnOf(ctx, {
        id: `ask.${ctx.triggerId}`,
        kind: 'ask',
        ...who(ctx),
        threadId,
        private: privately,
        sessionKey: privately ? undefined : mainKey(ctx, threadId),
        user: askText(pointer, question),
        // The message asked about is quoted: its files go as a quoted message's do (context_files).
        contextFiles:
            target && ctx.config.contextFiles > 0
                ? pickContextFiles({ messages: [], quoted: target, max: ctx.config.contextFiles, botId: ctx.bot.id })
                : undefined,
    });
}

/** "Summarize this thread": the whole thread, in a one-off session, privately, with a button to post it. */
export async function summarizeThread(ctx: Ctx, threadId: string | undefined): Promise<void> {
    if (!threadId) {
        return;
    }
    const thread = await ctx.call.history().thread(threadId, { id: '', createdAt: new Date() });
    await startTurnOf(ctx, {
        id: `summary.${ctx.triggerId}`,
        kind: 'summary',
        ...who(ctx),
        threadId,
        private: true,
        user: summaryText(visible(thread, ctx.bot.id), renderOpts(ctx), MAX_READ),
    });
}

/**
 * "Catch me up": what the room said since the person last wrote there, or in the last 24
 * hours (Rocket.Chat does not hand apps a person's read position), at most 200 messages.
 */
export async function catchUp(ctx: Ctx): Promise<void> {
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
    await startTurnOf(ctx, {
        id: `catchup.${ctx.triggerId}`,
        kind: 'catchup',
        ...who(ctx),
        private: true,
        user: catchUpText(messages, since, renderOpts(ctx), MAX_READ),
    });
}

function renderOpts(ctx: Ctx) {
    return { timeZone: ctx.config.timezone, botId: ctx.bot.id, allowedUserIds: ctx.config.allowedUserIds };
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
