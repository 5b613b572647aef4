import { approvalViewOf } from '../../approvals/approvalPrompt';
import { panelView } from '../../actions/views';
import { runCommand } from '../../commands/runCommand';
import { commandAllowed } from '../../admission/textCommand';
import { translator } from '../../i18n/messages';
import { policyForRoom } from '../../policy/roomPolicy';
import { distinctNewestFirst } from '../../sessions/sessionIndex';
import { turnsAhead } from '../../turns/freshClaim';
import { usageDay } from '../../usage/usage';
import { Ctx, isDm, mainKey } from './uiSurface';

/*
 * The Hermes panel (the room menu's contextual bar): what it shows and its Resume. UiActions
 * routes the panel's clicks here once the gate admitted them.
 */

/** The person's own turns in this room, their sessions here (Resume on their own), their usage today. */
export async function panelOf(ctx: Ctx, notice?: string) {
    const now = Date.now();
    const open = await ctx.call.turns().open();
    const mine = open.filter((r) => r.askerId === ctx.user.id && r.roomId === ctx.room.id);
    const key = mainKey(ctx);
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
            canRetry: commandAllowed('retry', ctx.user.id, ctx.config),
            canUndo: commandAllowed('undo', ctx.user.id, ctx.config),
            notice,
            today: today ?? { turns: 0, in: 0, out: 0 },
            timeZone: ctx.config.timezone,
        },
        // Only this person sees the panel: in their language.
        translator(ctx.language),
    );
}

/**
 * The panel's Resume: `/hermes resume <id>` (the same command, its allowlist and its answer) for
 * one of the sessions the panel lists that is the person's own. The click's value is the
 * person's to forge: any other id is refused here, without a word (the panel never offered it).
 */
export async function panelResume(ctx: Ctx, key: string, sessionId: string): Promise<string | undefined> {
    const index = ctx.call.sessionIndex();
    const listed = (await index.inScope(key)).some((e) => e.sessionId === sessionId);
    if (!listed || !(await index.owned(ctx.user.id)).some((e) => e.sessionId === sessionId)) {
        ctx.call.log.info(`Panel resume refused for ${ctx.user.id} in room ${ctx.room.id}: not one of their sessions here.`);
        return undefined;
    }
    const dm = isDm(ctx);
    const answer = await runCommand({ kind: 'known', name: 'resume', args: sessionId }, { id: ctx.user.id, username: ctx.user.username }, key, {
        ...ctx.call.commands(ctx.config),
        room: policyForRoom(ctx.config, ctx.room.id, dm),
        scope: { roomId: ctx.room.id, roomType: String(ctx.room.type), roomName: ctx.room.slugifiedName, kind: dm ? 'dm' : 'room' },
        language: ctx.language,
    });
    return answer.text;
}

/** The panel's Retry and Undo: `/hermes retry` and `undo` of the person's conversation here (the same command, its rules and its answer). */
export async function panelExchange(ctx: Ctx, key: string, verb: 'retry' | 'undo'): Promise<string> {
    const dm = isDm(ctx);
    const answer = await runCommand({ kind: 'known', name: verb, args: '' }, { id: ctx.user.id, username: ctx.user.username }, key, {
        ...ctx.call.commands(ctx.config),
        ...ctx.call.commandExtras(ctx.config, ctx.room),
        room: policyForRoom(ctx.config, ctx.room.id, dm),
        language: ctx.language,
    });
    return answer.text;
}
