import { isPostRefusal, isSizeRefusal } from '../admission/botPosting';
import { codeBlock, timedOutText, visibleCommand } from '../approvals/approvalView';
import { chatApprovalIn } from '../approvals/chatApproval';
import { PostedMessage, ReplyTarget } from '../delivery/chatPort';
import { splitMessage } from '../delivery/split';
import { t, translator } from '../i18n/messages';
import { afterFrozen, findStreamPost, streamedInto } from './streamAnswer';
import { answerParts, framedAnswer } from './answerParts';
import { deliveryHeader, SILENT } from '../delivery/cronDelivery';
import { withoutMedia } from '../delivery/mediaTags';
import { POST_SUMMARY_ACTION } from '../delivery/blocks';
import { shortCount } from '../usage/usage';
import { Outcome } from './observe';
import { TickPorts } from './tickPorts';
import { DeliveryState, describe, TurnRecord } from './turnRecord';

/*
 * The outcome of a turn posted exactly once (finish.ts decides when): its parts fixed and saved
 * before the first is posted, a part posted before a crash recognised by its text, a scheduled
 * run framed as Hermes's cron delivers, the status message removed.
 */

/** Clock difference tolerated when matching a part posted just before a crash. */
const CLOCK_SLACK_MS = 5_000;

/** The outcome as the messages it becomes, split to the server's limit; the first quotes the question in a room. */
export async function fixDelivery(rec: TurnRecord, outcome: Outcome, ports: TickPorts): Promise<DeliveryState> {
    // A private answer is read by its asker alone: its notices in their language (privateLanguage is set only then); in a room, the server's.
    const t = translator(rec.privateLanguage);
    let text: string;
    let kind: DeliveryState['kind'] = 'notice';
    /** The answer goes on from messages streamed before an approval: no quote, no opening lines again. */
    let continued = false;
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
        // Its MEDIA: tags name files on Hermes's machine that its API server does not serve (mediaTags.ts).
        const media = withoutMedia(outcome.text);
        // Streamed before an approval request and left there: an answer that repeats it says only the rest.
        const rest = afterFrozen(rec.stream, media.text.trim());
        continued = rest !== undefined;
        const body = (rest ?? media.text.trim()) || (media.files.length > 0 ? '' : t('notice_empty-answer'));
        const notes = [
            media.files.length > 0 ? t('notice_media_left_out', { files: media.files.map((f) => `\`${f.replace(/`/g, '')}\``).join(', ') }) : undefined,
            outcome.incomplete ? t('notice_incomplete_marker') : undefined,
        ].filter(Boolean);
        text = [body, ...notes].filter(Boolean).join('\n\n');
        const footer =
            ports.config.usageFooter && outcome.usage
                ? t('usage_footer_line', { in: shortCount(outcome.usage.in), out: shortCount(outcome.usage.out) })
                : undefined;
        text = continued ? [text, footer].filter(Boolean).join('\n\n') : framedAnswer(rec, text, t, footer);
        kind = 'answer';
    } else if (outcome.kind === 'stopped') {
        text = t('notice_stopped', { by: outcome.by });
    } else {
        text = t(outcome.failure);
    }
    if (rec.cron) {
        return cronDelivery(rec, rec.cron.name, outcome, text, kind, ports);
    }
    if (rec.stream?.posting) {
        // A streamed message went out just before its process died, its id not saved: the answer goes into it all the same.
        await findStreamPost(rec, rec.stream, ports);
    }
    const parts = await answerParts(rec, text, ports, !continued);
    const summary = outcome.kind === 'answer' ? 'answered' : outcome.kind === 'stopped' ? `stopped by ${outcome.by}` : 'ended with a notice';
    return { kind, parts, posted: [], startedAt: ports.now(), summary, ...streamedInto(rec.stream, kind, parts.length) };
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
export function recognisePosted(delivery: DeliveryState, here: PostedMessage[], sentAt = 0): void {
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
export async function postParts(rec: TurnRecord, ports: TickPorts): Promise<void> {
    const d = rec.delivery as DeliveryState;
    let resplit = false;
    while (!d.failed && d.posted.length < d.parts.length) {
        const i = d.posted.length;
        try {
            const streamed = d.reuse?.[i];
            if (streamed) {
                // The message the answer was streamed into becomes this part (an edit has no size check on the server).
                await ports.chat.edit(streamed, rec.roomId, d.parts[i], undefined);
            }
            d.posted.push(
                streamed ?? (rec.privateTo ? await whisperPart(rec, d, i, ports) : await ports.chat.post(target(rec), d.parts[i], d.kind, { turnId: rec.id })),
            );
            if (d.posted.length < d.parts.length) {
                await ports.store.save(rec);
            }
        } catch (error) {
            if (i === 0 && !resplit && isSizeRefusal(error)) {
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

/** Removes the status message (also one whose id a crash lost) and streamed messages the outcome did not need, closes an open approval. */
export async function cleanUp(rec: TurnRecord, here: PostedMessage[], ports: TickPorts): Promise<void> {
    const kept = new Set([...(rec.delivery?.posted ?? []), ...(rec.stream?.ids.slice(0, rec.stream.frozen) ?? [])]);
    const statusIds = new Set([
        rec.statusMessageId,
        ...here.filter((m) => m.mark?.kind === 'status' && m.mark.turnId === rec.id).map((m) => m.id),
        ...(rec.delivery?.drop ?? []),
    ]);
    for (const id of statusIds) {
        if (id && !kept.has(id)) {
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

export function target(rec: TurnRecord): ReplyTarget {
    return { roomId: rec.roomId, threadId: rec.threadId };
}

/** A description from Hermes as one quoted line: its own line breaks would end the quote. */
function oneLine(text: string): string {
    return text.replace(/\s+/g, ' ').trim();
}
