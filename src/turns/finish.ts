import { isPostRefusal } from '../admission/botPosting';
import { releaseSlot, wakeWaiters } from './slots';
import { codeBlock, timedOutText, visibleCommand } from '../approvals/approvalView';
import { chatApprovalIn } from '../approvals/chatApproval';
import { PostedMessage, ReplyTarget } from '../delivery/chatPort';
import { firstMessagePrefix } from '../delivery/quote';
import { splitMessage } from '../delivery/split';
import { t, translator } from '../i18n/messages';
import { holdAnswers } from '../context/frontier';
import { deliveryHeader, SILENT } from '../delivery/cronDelivery';
import { POST_SUMMARY_ACTION } from '../delivery/blocks';
import { HermesSessions } from '../hermes/sessionsApi';
import { autoTitle } from '../sessions/titles';
import { shortCount, Usage, usageDay } from '../usage/usage';
import { isAcceptableSessionId } from '../sessions/sessionId';
import { Outcome } from './observe';
import { takeSession } from './sessionSnapshot';
import { SessionRecord } from '../sessions/sessionRecord';
import { stopTyping } from './progress';
import { mustWake, startedAlone } from './waiters';
import { TickPorts } from './tickPorts';
import { takeLease } from './lease';
import { comesBefore, DeliveryState, describe, hermesFor, openTickets, TurnRecord } from './turnRecord';

/** People remembered per session record (each one was written to the session index). */
const MAX_ASKERS = 200;
/** Clock difference tolerated when matching a part posted just before a crash. */
const CLOCK_SLACK_MS = 5_000;

/**
 * Posts the outcome exactly once, removes the status message, ends the turn, and wakes the
 * next turn of the session. The outcome's parts are fixed and saved before the first is
 * posted; each posted part's id is recorded; a retry after a crash posts only what is not
 * there yet (a part posted but not recorded is recognised by its text), so nothing is
 * posted twice and nothing is lost.
 */
export async function finish(rec: TurnRecord, outcome: Outcome, ports: TickPorts, quick = false): Promise<void> {
    const early: Early = { wake: quick ? freeSlotEarly(rec, ports) : undefined };
    try {
        await end(rec, outcome, ports, quick, early);
        failingFinishes.delete(rec.id);
    } catch (error) {
        if (!givesUp(rec.id, ports.now())) {
            throw error;
        }
        await abandon(rec, error, ports);
    } finally {
        // The turns it woke take their steps in this call: the call holds until they are woken.
        await early.wake;
    }
}

/**
 * A finish that keeps throwing (a bug, a record it cannot read) is tried again on every tick;
 * after this long, and FINISH_ATTEMPTS tries, the turn is ended without the rest of its outcome,
 * so its session's next turns are not held behind it for ever. Long enough for the store or the
 * chat to come back from a short outage, which a retry rides out.
 */
const FINISH_GIVE_UP_MS = 30_000;
const FINISH_ATTEMPTS = 3;
/** Per process and turn: since when, and how often, its finish has thrown. */
const failingFinishes = new Map<string, { since: number; count: number }>();

function givesUp(turnId: string, now: number): boolean {
    const failing = failingFinishes.get(turnId) ?? { since: now, count: 0 };
    failing.count++;
    failingFinishes.set(turnId, failing);
    return failing.count >= FINISH_ATTEMPTS && now - failing.since >= FINISH_GIVE_UP_MS;
}

/**
 * The last resort for a turn whose finish has failed too long: the asker hears that the answer
 * did not come (unless all of it was posted), its status message goes, an approval still open
 * says it timed out (its buttons would decide nothing), a scheduled prompt's run is recorded as
 * failed (its job would otherwise show it running), and the turn ends and wakes its session's
 * next, with no lease (the lease may be what fails). Each step on its own: one that fails does
 * not keep the others from running.
 */
async function abandon(rec: TurnRecord, error: unknown, ports: TickPorts): Promise<void> {
    failingFinishes.delete(rec.id);
    ports.log.error(
        `Turn ${describe(rec)} could not be finished for ${FINISH_GIVE_UP_MS / 1000} s (${error instanceof Error ? error.message : String(error)}); it is ended without the rest of its outcome.`,
    );
    ports.live.end(rec.id);
    await stopTyping(rec.id);
    const d = rec.delivery;
    if (!d || d.posted.length < d.parts.length) {
        // A private ask is told privately, in the asker's language; a room's, in the room.
        const told = rec.privateTo
            ? ports.chat.whisper(rec.privateTo, target(rec), (tr) => tr('notice_finish-failed'))
            : ports.chat.post(target(rec), t('notice_finish-failed'), 'notice', { turnId: rec.id });
        await told.catch(() => ports.log.error(`The asker of ${describe(rec)} could not be told that it failed.`));
    }
    if (rec.statusMessageId) {
        await ports.chat.remove(rec.statusMessageId, rec.roomId).catch(() => undefined);
    }
    const open = rec.approval && !rec.approval.closed ? rec.approval : undefined;
    if (open) {
        await ports.chat.edit(open.messageId, rec.roomId, timedOutText(open.request), { kind: 'approval', turnId: rec.id }).catch(() => undefined);
    }
    if (rec.cron && ports.cronDone) {
        await ports.cronDone(rec.cron.jobId, rec.id, { at: ports.now(), status: 'failed', error: 'finish-failed' }).catch(() => undefined);
    }
    await ports.store.remove(rec.id, { stop: true, decisions: Boolean(rec.approval) });
    rec.phase = 'done';
    releaseSlot(rec.id, ports.now());
    await wakeNext(rec, ports);
}

/** The waiters woken for the slot this turn freed before its end (quick: when its run ended; otherwise with its lease). */
interface Early {
    wake?: Promise<void>;
}

async function end(rec: TurnRecord, outcome: Outcome, ports: TickPorts, quick: boolean, early: Early): Promise<void> {
    let retrying = false;
    if (quick) {
        // Still in its message event (tick.ts carryOn): the record in persistence says this process
        // is sending the turn, or once its run is written, carrying it (`carried`), so no other
        // instance finishes it, and there is no earlier delivery.
        ports.live.end(rec.id);
        await stopTyping(rec.id);
        rec.delivery = await fixDelivery(rec, outcome, ports);
        if (rec.delivery.parts.length > 1) {
            // Several parts: saved before the first goes out, so a crash between them posts only the rest.
            await ports.store.save(rec);
        }
    } else {
        // Cross-instance guard: ticks of other instances may finish the turn at the same moment (turns/lease.ts).
        const held = rec.slot?.state === 'running';
        const fresh = await takeLease(
            rec,
            ports.store,
            () => ports.now(),
            async (found) => {
                ports.live.end(rec.id);
                await stopTyping(rec.id);
                rec.approval = found.approval ?? rec.approval;
                retrying = Boolean(found.delivery);
                rec.delivery = found.delivery ?? (await fixDelivery(rec, outcome, ports));
                if (!found.delivery && found.carried) {
                    // A message event carried it and is gone without handing it over: it may have posted
                    // the answer (a quick turn's one part is not written down before its record goes).
                    rec.delivery.startedAt = found.startedAt ?? found.createdAt;
                    retrying = true;
                }
                // Its run is over: the lease's write frees its slot for every instance's read, and
                // its waiters are woken while the lease settles (not 200 ms later).
                if (held) {
                    rec.slot = undefined;
                }
            },
            () => {
                early.wake = held && startedAlone(rec.id) !== true ? wakeForFreedSlot(rec, ports) : undefined;
            },
        );
        if (!fresh || !rec.delivery) {
            return;
        }
    }
    const here = retrying || (rec.statusPosting && !rec.statusMessageId) ? await ports.chat.botMessages(target(rec)) : [];
    if (retrying) {
        recognisePosted(rec.delivery, here, rec.startedAt);
    }
    await postParts(rec, ports);
    await cleanUp(rec, here, ports);
    if (rec.cron && ports.cronDone) {
        const status = rec.delivery.parts.length === 0 ? 'silent' : outcome.kind === 'answer' && !rec.delivery.failed ? 'delivered' : 'failed';
        const error = outcome.kind === 'failed' ? outcome.failure.replace(/^notice_/, '') : outcome.kind === 'stopped' ? `stopped by ${outcome.by}` : undefined;
        await ports.cronDone(rec.cron.jobId, rec.id, { at: ports.now(), status, error });
    }
    const before = takeSession(rec.id);
    const answered = outcome.kind === 'answer' && !rec.delivery.failed;
    // The turn's lasting receipt and its usage in one write, the session's news and the thread
    // followed: side by side (none needs another), all before the record (an open turn's receipt)
    // goes. A crash among them leaves the turn open: it is finished again, posting nothing twice.
    await Promise.all([
        recordUsage(rec, answered && outcome.kind === 'answer' ? outcome.usage : undefined, answered, ports),
        answered ? recordSession(rec, outcome.sessionId, ports, before) : undefined,
        // Only an answer the thread saw: a private one (a summary, an Ask for the asker alone) must
        // not make the bot answer unaddressed messages there in public.
        answered && rec.threadId && rec.kind === 'room' && !rec.privateTo && ports.follow
            ? ports
                  .follow(rec.threadId, rec.askerId)
                  .catch((e: unknown) => ports.log.warn(`Following thread ${rec.threadId} failed: ${e instanceof Error ? e.message : String(e)}`))
            : undefined,
    ]);
    // A turn that never asked for an approval has no decisions; one not stopped, most likely no stop record.
    const removed = await ports.store.remove(rec.id, { stop: outcome.kind === 'stopped', decisions: Boolean(rec.approval) });
    rec.phase = 'done';
    releaseSlot(rec.id, ports.now());
    // Its early wake-ups have claimed (in this process) before the end's read counts the slots.
    await early.wake;
    if (mustWake(rec.id, ports.store.waitOn ? removed : undefined)) {
        await wakeNext(rec, ports);
    }
    const took = ports.now() - (rec.startedAt ?? rec.createdAt);
    if (outcome.kind === 'failed') {
        ports.log.error(`Hermes turn failed for ${describe(rec)} after ${took} ms: ${outcome.detail}`);
    } else {
        ports.log.info(`Turn ${describe(rec)} ${rec.delivery.summary} after ${took} ms.`);
    }
}

/**
 * Turns waiting without ticks: the next of this session, and the oldest waiters for the slot
 * this turn freed. One read of the open turns serves both.
 */
async function wakeNext(rec: TurnRecord, ports: TickPorts): Promise<void> {
    const open = (await openTickets(ports.store)).filter((o) => o.id !== rec.id);
    const next = open.filter((o) => o.sessionKey === rec.sessionKey && o.phase === 'queued').sort((a, b) => (comesBefore(a, b) ? -1 : 1))[0];
    if (next) {
        await ports.schedule({ turnId: next.id, chain: next.chain, open, sessionKey: next.sessionKey }, 0);
    }
    await wakeWaiters(
        open.filter((o) => o.id !== next?.id),
        ports,
    );
}

/**
 * The run is over at Hermes, so its slot serves the oldest waiters of other sessions now, while
 * this turn still posts its outcome and ends: the next run starts a few round trips sooner
 * (post, receipt and session writes, removal). Only where the woken turns take their first step
 * in this call, claiming on this read, in which this turn holds no slot (woken through the
 * scheduler, they would read its record still holding it); and only for a turn whose start saw
 * others waiting, so a turn on a quiet server reads nothing more. Its session's next turn waits
 * for the answer: the end wakes it, and any waiter that came since, as before.
 */
function freeSlotEarly(rec: TurnRecord, ports: TickPorts): Promise<void> | undefined {
    if (rec.slot?.state !== 'running' || !ports.carries?.() || startedAlone(rec.id) !== false) {
        return undefined;
    }
    return wakeForFreedSlot(rec, ports);
}

/**
 * Counts the slot of `rec` free here and wakes the oldest waiters of other sessions: a quick
 * turn's when its run ended (above), a turn ended outside its event once its lease's write has
 * told every instance (end), unless it is known here to have started alone.
 */
function wakeForFreedSlot(rec: TurnRecord, ports: TickPorts): Promise<void> {
    releaseSlot(rec.id, ports.now(), true);
    const woken = async () => {
        // A read already on its way will do (the turns ending beside this one ask at once): the
        // waiters it wakes are in it, and each claims on it after its own ticket was written.
        const open = await openTickets(ports.store, { inFlight: true });
        await wakeWaiters(
            open.filter((o) => o.id !== rec.id),
            ports,
            rec.sessionKey,
        );
    };
    return woken().catch((e: unknown) =>
        ports.log.warn(`Waking the turns waiting for the slot of ${describe(rec)} failed: ${e instanceof Error ? e.message : String(e)}`),
    );
}

/** The outcome as the messages it becomes, split to the server's limit; the first quotes the question in a room. */
async function fixDelivery(rec: TurnRecord, outcome: Outcome, ports: TickPorts): Promise<DeliveryState> {
    // A private answer is read by its asker alone: its notices in their language (privateLanguage is set only then); in a room, the server's.
    const t = translator(rec.privateLanguage);
    let text: string;
    let kind: DeliveryState['kind'] = 'notice';
    const pending = outcome.kind === 'answer' && rec.transport === 'chat' ? chatApprovalIn(outcome.text) : undefined;
    if (pending) {
        // Never the tool result's JSON: what happened, and what would let Hermes ask.
        ports.log.warn(`Turn ${describe(rec)} needed an approval, which chat completions cannot ask for; the asker is told.`);
        text = pending.command
            ? t('notice_chat_approval', {
                  command: codeBlock(visibleCommand(pending.command)),
                  description: pending.description ? `> ${oneLine(pending.description)}\n` : '',
              })
            : t('notice_chat_approval_unknown');
    } else if (outcome.kind === 'answer') {
        // Hermes starts an answer after a tool call with blank lines: trimmed, as a person would type it.
        const body = outcome.text.trim() || t('notice_empty-answer');
        text = outcome.incomplete ? `${body}\n\n${t('notice_incomplete_marker')}` : body;
        // What changed about the session before this answer: said first, once.
        const before = [
            rec.threadName ? `**${rec.threadName}**` : undefined,
            rec.autoReset ? t(`session_auto_reset_${rec.autoReset}`) : undefined,
            rec.recap,
        ].filter(Boolean);
        text = before.length > 0 ? `${before.join('\n\n')}\n\n${text}` : text;
        if (ports.config.usageFooter && outcome.usage) {
            text = `${text}\n\n${t('usage_footer_line', { in: shortCount(outcome.usage.in), out: shortCount(outcome.usage.out) })}`;
        }
        kind = 'answer';
    } else if (outcome.kind === 'stopped') {
        text = t('notice_stopped', { by: outcome.by });
    } else {
        text = t(outcome.failure);
    }
    if (rec.cron) {
        return cronDelivery(rec, rec.cron.name, outcome, text, kind, ports);
    }
    const server = await ports.server();
    // A private answer quotes nothing: there is no question message in the room to point at.
    const prefix = rec.privateTo
        ? ''
        : (firstMessagePrefix(
              {
                  kind: rec.kind,
                  threadId: rec.threadId,
                  roomType: rec.roomType,
                  roomId: rec.roomId,
                  roomName: rec.roomName,
                  messageId: rec.id,
                  askerUsername: rec.askerUsername,
              },
              server,
          ) ?? '');
    const parts = splitMessage(text, server.maxMessageSize, prefix.length).map((part, i) => (i === 0 ? `${prefix}${part}` : part));
    const summary = outcome.kind === 'answer' ? 'answered' : outcome.kind === 'stopped' ? `stopped by ${outcome.by}` : 'ended with a notice';
    return { kind, parts, posted: [], startedAt: ports.now(), summary };
}

/**
 * A scheduled prompt's run: no question to quote; the delivery opens with the job's header
 * (Hermes's own cron framing); an answer that is exactly `[SILENT]` posts nothing.
 */
async function cronDelivery(
    rec: TurnRecord,
    name: string,
    outcome: Outcome,
    text: string,
    kind: DeliveryState['kind'],
    ports: TickPorts,
): Promise<DeliveryState> {
    const startedAt = ports.now();
    if (outcome.kind === 'answer' && outcome.text.trim() === SILENT) {
        return { kind, parts: [], posted: [], startedAt, summary: 'delivered nothing ([SILENT])' };
    }
    const header = `**${deliveryHeader(name)}**\n`;
    const parts = splitMessage(text, (await ports.server()).maxMessageSize, header.length).map((part, i) => (i === 0 ? `${header}${part}` : part));
    return { kind, parts, posted: [], startedAt, summary: outcome.kind === 'answer' ? 'delivered' : 'ended with a notice' };
}

/**
 * After a crash: a part that went out but whose id was not saved is there with its text. Not
 * before the turn was sent (`sentAt`): the turns of a session go one at a time, so whatever its
 * turn before posted (the same words, often: "Done.") came before this one reached Hermes.
 */
function recognisePosted(delivery: DeliveryState, here: PostedMessage[], sentAt = 0): void {
    const known = new Set(delivery.posted);
    const since = Math.max(delivery.startedAt - CLOCK_SLACK_MS, sentAt);
    for (let i = delivery.posted.length; i < delivery.parts.length; i++) {
        const found = here.find(
            (m) => !known.has(m.id) && m.createdAt >= since && sameText(m.text, delivery.parts[i]) && (m.mark?.kind ?? 'answer') === delivery.kind,
        );
        if (!found) {
            return;
        }
        delivery.posted.push(found.id);
        known.add(found.id);
    }
}

/** The server may rewrite a message slightly (filters): the start identifies a part well enough. */
function sameText(posted: string, part: string): boolean {
    return posted === part || (posted.length > 0 && posted.slice(0, 200) === part.slice(0, 200));
}

/**
 * Posts the parts not yet posted, in order. If one is refused, the rest is not posted (it
 * would read out of order) and a notice says which part failed; a first part refused as
 * too large is split again once with the server's current limit.
 */
async function postParts(rec: TurnRecord, ports: TickPorts): Promise<void> {
    const d = rec.delivery as DeliveryState;
    let resplit = false;
    while (!d.failed && d.posted.length < d.parts.length) {
        const i = d.posted.length;
        try {
            d.posted.push(rec.privateTo ? await whisperPart(rec, d, i, ports) : await ports.chat.post(target(rec), d.parts[i], d.kind, { turnId: rec.id }));
            if (d.posted.length < d.parts.length) {
                await ports.store.save(rec);
            }
        } catch (error) {
            if (i === 0 && !resplit && isSizeError(error)) {
                resplit = true;
                const limit = (await ports.server(true)).maxMessageSize;
                ports.log.info(`Message_MaxAllowedSize is now ${limit}; splitting the outcome of ${describe(rec)} again.`);
                d.parts = resplitFirst(d.parts, limit);
                await ports.store.save(rec);
                continue;
            }
            d.failed = true;
            ports.log.error(
                `Posting part ${i + 1} of ${d.parts.length} for ${describe(rec)} failed: ${error instanceof Error ? error.message : String(error)}`,
            );
            await ports.store.save(rec);
            if (isPostRefusal(error)) {
                // The server refuses the bot here (blocked, muted, read-only, encrypted): a notice in the room would be
                // refused too, and a retry could not help. The asker hears it privately, once (the turn is over).
                await ports.chat
                    .whisper(rec.askerId, target(rec), (tr) => tr('notice_cannot-post'))
                    .catch(() => ports.log.error(`The asker of ${describe(rec)} could not be told either.`));
                continue;
            }
            await ports.chat
                .post(target(rec), t('notice_part-failed', { part: i + 1, parts: d.parts.length }), 'notice', { turnId: rec.id })
                .catch(() => ports.log.error(`The failure notice for ${describe(rec)} could not be posted either.`));
        }
    }
}

/**
 * A private answer (message actions): shown only to the asker, never stored in the room. A
 * thread summary's last part offers to post the whole summary to the thread.
 */
async function whisperPart(rec: TurnRecord, d: DeliveryState, i: number, ports: TickPorts): Promise<string> {
    const t = translator(rec.privateLanguage);
    const last = i === d.parts.length - 1;
    const offer = last && rec.offerPost && d.kind === 'answer' && ports.keepSummary ? await ports.keepSummary(rec, d.parts.join('\n\n')) : undefined;
    const buttons = offer
        ? { text: d.parts[i], buttons: [{ actionId: POST_SUMMARY_ACTION, label: t('action_post_to_thread'), value: offer, style: 'primary' as const }] }
        : undefined;
    await ports.chat.whisper(rec.privateTo as string, target(rec), d.parts[i], buttons);
    return `private-${i}`;
}

function resplitFirst(parts: string[], limit: number): string[] {
    return splitMessage(parts.join('\n\n'), limit);
}

/** Removes the status message (also one whose id a crash lost), closes an open approval. */
async function cleanUp(rec: TurnRecord, here: PostedMessage[], ports: TickPorts): Promise<void> {
    const statusIds = new Set([rec.statusMessageId, ...here.filter((m) => m.mark?.kind === 'status' && m.mark.turnId === rec.id).map((m) => m.id)]);
    for (const id of statusIds) {
        if (id) {
            await ports.chat
                .remove(id, rec.roomId)
                .catch((e: unknown) =>
                    ports.log.warn(`Status message of turn ${describe(rec)} could not be removed: ${e instanceof Error ? e.message : String(e)}`),
                );
        }
    }
    const open = rec.approval && !rec.approval.closed ? rec.approval : undefined;
    if (open && !(await ports.store.decision(rec.id, open.messageId))?.decided) {
        await ports.chat.edit(open.messageId, rec.roomId, timedOutText(open.request), { kind: 'approval', turnId: rec.id }).catch(() => undefined);
    }
}

/**
 * Hermes answered: the session record learns what it must (a rotated id, its first turn, a
 * thread's new frontier with the answer's parts held), in one write, and only if one of those changed.
 */
async function recordSession(rec: TurnRecord, returnedId: string | undefined, ports: TickPorts, before: SessionRecord | undefined): Promise<void> {
    if (before && !sessionLearns(rec, before, returnedId, ports)) {
        return;
    }
    // A person's first turn in the session is indexed beside the session's read, on what the turn
    // found (the index write is idempotent): the session is saved only after both, so a failed
    // index write still leaves it unsaved and the retry indexes the asker.
    const expected = before ? askerIn(rec, before, returnedId) : undefined;
    const indexed = expected?.newAsker ? indexAsker(rec, expected, ports) : undefined;
    indexed?.catch(() => undefined);
    const session = await ports.sessions.get(rec.sessionKey);
    await indexed;
    if (rec.sessionId && rec.sessionId !== session.sessionId) {
        // /new or /reset while the turn ran: the new session holds none of this turn.
        return;
    }
    const found = askerIn(rec, session, returnedId);
    const { rotated, sessionId, askers, newAsker, autoTitleNow } = found;
    const reached = rec.trimmed ? rec.frontier?.withoutBlock : rec.frontier?.next;
    const frontier = reached ? holdAnswers(reached, rec.delivery?.posted ?? [], ports.now()) : session.frontier;
    if (newAsker && !(expected?.newAsker && expected.sessionId === sessionId && expected.autoTitleNow === autoTitleNow)) {
        // The session changed while the turn ran (rare): indexed on what it is now.
        await indexAsker(rec, found, ports);
    }
    if (session.pendingTitle) {
        await applyPendingTitle(rec, sessionId, session.pendingTitle, ports);
    }
    const keepActivity = ports.config.sessionReset !== 'none';
    if (rotated || session.turns === 0 || reached || newAsker || keepActivity || session.recap || session.pendingTitle) {
        await ports.sessions.save({
            ...session,
            sessionId,
            turns: session.turns + 1,
            frontier,
            askers: newAsker ? [...askers, rec.askerId].slice(-MAX_ASKERS) : askers,
            autoTitle: autoTitleNow,
            lastActiveAt: keepActivity ? ports.now() : undefined,
            recap: undefined,
            pendingTitle: undefined,
        });
    }
}

/** What a session record tells of the turn's asker: the id to record it under (Hermes may have rotated it), and whether they are new to it. */
function askerIn(rec: TurnRecord, session: SessionRecord, returnedId: string | undefined) {
    const rotated = Boolean(returnedId && returnedId !== session.sessionId && isAcceptableSessionId(returnedId));
    const sessionId = rotated ? (returnedId as string) : session.sessionId;
    // A rotated id is a new session in Hermes's list: its askers are recorded anew.
    const askers = rotated ? [] : (session.askers ?? []);
    // A record whose save was cut between its head and its payload (its process killed) has no text: no title from it.
    const titled = typeof rec.user === 'string' ? autoTitle(rec.user) : undefined;
    return { rotated, sessionId, askers, newAsker: !askers.includes(rec.askerId), autoTitleNow: session.autoTitle ?? titled };
}

/** The asker as an owner of the session (the session commands list what a person owns). */
async function indexAsker(rec: TurnRecord, found: { sessionId: string; autoTitleNow: string | undefined }, ports: TickPorts): Promise<void> {
    await ports.index?.add(rec.askerId, {
        sessionId: found.sessionId,
        key: rec.sessionKey,
        roomId: rec.roomId,
        roomType: rec.roomType,
        roomName: rec.roomName,
        threadId: rec.threadId,
        kind: rec.kind,
        startedAt: ports.now(),
        autoTitle: found.autoTitleNow,
    });
}

/**
 * Whether the session record, as the turn found it, would change: read again (and written) only
 * then. Something set while the turn ran (a title asked for meanwhile) waits for the next turn.
 */
function sessionLearns(rec: TurnRecord, session: SessionRecord, returnedId: string | undefined, ports: TickPorts): boolean {
    const { rotated, newAsker } = askerIn(rec, session, returnedId);
    const reached = rec.trimmed ? rec.frontier?.withoutBlock : rec.frontier?.next;
    return (
        rotated || session.turns === 0 || Boolean(reached) || newAsker || ports.config.sessionReset !== 'none' || Boolean(session.recap || session.pendingTitle)
    );
}

/** The turn counts against the asker's and the room's daily totals (usage/), if answered. A failed write costs the count (and the lasting receipt), never the answer. */
async function recordUsage(rec: TurnRecord, usage: Usage | undefined, answered: boolean, ports: TickPorts): Promise<void> {
    await ports.usage
        ?.record(usageDay(ports.now(), ports.config.timezone), rec.askerId, rec.roomId, usage, { receipt: rec.id, answered })
        .catch((e: unknown) => ports.log.warn(`Usage of ${describe(rec)} could not be recorded: ${e instanceof Error ? e.message : String(e)}`));
}

/** `/hermes title` before the session existed: Hermes has it now. A title taken meanwhile is logged, not retried. */
async function applyPendingTitle(rec: TurnRecord, sessionId: string, title: string, ports: TickPorts): Promise<void> {
    try {
        const result = await new HermesSessions(hermesFor(rec, ports.hermes)).setTitle(sessionId, title);
        if (result !== 'set') {
            ports.log.warn(
                `The title asked for session ${sessionId} could not be set (${result === 'taken' ? 'another session has it' : 'Hermes has no such session'}).`,
            );
        }
    } catch (error) {
        ports.log.warn(`The title asked for session ${sessionId} could not be set: ${error instanceof Error ? error.message : String(error)}`);
    }
}

function target(rec: TurnRecord): ReplyTarget {
    return { roomId: rec.roomId, threadId: rec.threadId };
}

function isSizeError(error: unknown): boolean {
    return error instanceof Error && /size-exceeded|MaxAllowedSize/i.test(error.message);
}

/** A description from Hermes as one quoted line: its own line breaks would end the quote. */
function oneLine(text: string): string {
    return text.replace(/\s+/g, ' ').trim();
}
