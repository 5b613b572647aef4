import { freeSlotEarly, wakeForFreedSlot, wakeNext } from './wakeAfterEnd';
import { releaseSlot } from './slots';
import { move, stateOf } from './machine';
import { timedOutText } from '../approvals/approvalView';
import { t } from '../i18n/messages';
import { Outcome } from './observe';
import { takeSession } from './sessionSnapshot';
import { stopTyping } from './progress';
import { mustWake, startedAlone } from './waiters';
import { TickPorts } from './tickPorts';
import { takeLease } from './lease';
import { claimAs } from './owner';
import { describe, TurnRecord } from './turnRecord';
import { cleanUp, fixDelivery, postParts, recognisePosted, target } from './deliverOutcome';
import { recordSession, recordUsage } from './recordSession';
import { endMerged } from './followUps';
import { processMemory } from './processMemory';
import { ack } from './ack';
import { forgetStream } from './streamAnswer';

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
const failingFinishes = processMemory.map<string, { since: number; count: number }>('finish.failingFinishes');

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
    forgetStream(rec.id);
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
    await ack(rec, 'failed', ports);
    await ports.store.remove(rec.id, { stop: true, decisions: Boolean(rec.approval) });
    if (stateOf(rec) !== 'done') {
        // Not when its end got as far as removing it (a wake-up after that failed).
        move(rec, { kind: 'abandoned' });
    }
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
        // Still in its message event (carryOn.ts): the record in persistence says this process
        // is sending the turn, or once its run is written, carrying it (owner.ts), so no other
        // instance finishes it, and there is no earlier delivery.
        ports.live.end(rec.id);
        await stopTyping(rec.id);
        const delivery = await fixDelivery(rec, outcome, ports);
        move(rec, { kind: 'outcomeFixed', delivery });
        if (delivery.parts.length > 1) {
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
                const delivery = found.delivery ?? (await fixDelivery(rec, outcome, ports));
                if (!found.delivery && claimAs(found, 'carrying')) {
                    // A message event carried it and is gone without handing it over: it may have posted
                    // the answer (a quick turn's one part is not written down before its record goes).
                    delivery.startedAt = found.startedAt ?? found.createdAt;
                    retrying = true;
                }
                move(rec, { kind: 'outcomeFixed', delivery });
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
        if (!fresh) {
            return;
        }
    }
    if (!rec.delivery) {
        // Fixed above: in the event always, under the lease when the lease was taken.
        return;
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
        ack(rec, answered ? 'answered' : 'failed', ports),
        endMerged(rec, answered ? 'answered' : outcome.kind === 'stopped' ? 'stopped' : 'failed', ports),
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
    forgetStream(rec.id);
    move(rec, { kind: 'ended' });
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
