import { heldElsewhere, PROCESS_ID } from './processId';
import { move } from './machine';
import { chainEnded, chainOn, chainTickRan, chainWaiting } from './chain';
import { quickEnded, quickSignal, quickWake } from './quick';
import { hermesFor } from './turnRecord';
import { finish } from './finish';
import { observe } from './observe';
import { onError, pollSucceeded } from './retryPolicy';
import { nextLookIn, showProgress } from './progress';
import { claimSlot, releaseSlot, slotBlockers } from './slots';
import { mayEndUnread, noteStart } from './waiters';
import { submit, wakeByJob } from './submit';
import { takeOverFromGone } from './takeOverGone';
import { TickJob, TickPorts } from './tickPorts';
import { comesBefore, describe, openTickets, TurnRecord } from './turnRecord';
import { blocksSession, FRESH_RELOOK_MS, takeFresh, turnsAhead, waitsOnFreshClaim } from './freshClaim';

/**
 * How often a running turn's chain ticks. Rocket.Chat's scheduler runs one job per
 * processor at a time (Agenda, concurrency 1), so a tick never waits on Hermes: it looks
 * once, acts, and comes back. A turn whose stream lives in this process is woken by the
 * stream when it ends or asks for an approval, so it ticks seldom; one that must poll
 * Hermes ticks more often.
 */
export const LIVE_TICK_MS = 2_000;
export const POLL_TICK_MS = 1_000;
/** A tick that finds another tick of its turn still working in this process comes back this much later. */
export const BUSY_RETRY_MS = 500;
/** A running turn writes its record at least this often, so the sweep can tell a live chain from a lost one. */
export const HEARTBEAT_MS = 10_000;

/**
 * How long a turn's steps may stay inside its message event (quick.ts): a turn Hermes answers
 * within this costs no scheduler job; a longer one is handed to its chain of ticks. Short, because
 * the engine runs the next app's handler of the same message only after this one returns.
 */
export const QUICK_MS = 3_000;
/**
 * How long one call (a message event) may go on starting the turns its quick turns wake, and
 * when it stops carrying any: the engine gives a call 30 s.
 */
const CARRY_MS = 15_000;
const CALL_MS = 20_000;
/** How long past the end of its call a carried turn's mark keeps other instances away (clock differences, the hand-over's write). */
const CARRIED_SLACK_MS = 2_000;
/** A running quick turn not answered this soon shows typing (carryOn). */
const FIRST_LOOK_MS = 500;
/**
 * A running quick turn not answered this soon has its run written (carryOn). Short: a process
 * that dies before leaves its turn to be sent again (v0.18.2 cannot be asked for a run by its
 * message), but a turn Hermes answers at once costs no write for it.
 */
const RUN_WRITE_MS = 100;

/** Turns this app process is working on right now: two ticks of one turn never overlap here. */
const busy = new Set<string>();
/** Whether a tick of any turn is working in this process now (its beat goes on meanwhile: processBeat.ts). */
export function ticksInHand(): boolean {
    return busy.size > 0;
}
/** Turns whose steps run in a quick job's call right now (carryOn). */
const quickTurns = new Set<string>();
/** Jobs that came for a turn while a quick call had it: passed on if that call did not carry the turn. */
const pokedWhileQuick = new Set<string>();
/** Wake-ups that arrived while a tick of their turn was working: that tick passes them on when it ends. */
const wokenWhileBusy = new Set<string>();

/**
 * One step of a turn's life: queue → submit → watch → deliver. Returns in milliseconds:
 * every wait is a later tick. State is persisted where it matters, so the next tick (in this
 * process, or in another after a restart) carries on.
 */
export async function tick(job: TickJob, ports: TickPorts): Promise<void> {
    if (!job.wake) {
        chainTickRan(job);
    }
    if (busy.has(job.turnId)) {
        if (job.wake) {
            wokenWhileBusy.add(job.turnId);
            // A turn in its event's loop hands over to its chain now; the wake-up follows when it has.
            quickSignal(job.turnId);
        } else if (quickTurns.has(job.turnId)) {
            // A quick call is working on it (a waiter woken twice, say): if that call carries the
            // turn, it ends it or hands it to a chain; if the turn only waited, it looks again.
            pokedWhileQuick.add(job.turnId);
            return;
        } else if (job.chain && !chainWaiting(job.turnId)) {
            // Keep the chain alive: another tick of this turn is still working here. Only when no
            // chain tick waits already: a stray job (an old chain's, one without a chain) must not
            // replace the live chain's next tick with itself.
            await chainOn(job, BUSY_RETRY_MS, ports);
        }
        return;
    }
    busy.add(job.turnId);
    ports.beat?.();
    const spawned: Array<Promise<void>> = [];
    const outer = ports;
    let carried = false;
    /** Whether the call carried its turn and handed it to its chain (carryOn). */
    let handedOver = false;
    /** When the call carrying a quick turn began (its first event, or this job). */
    const since = job.since ?? Date.now();
    if (job.quick) {
        quickTurns.add(job.turnId);
        ports = carrying(outer, job.turnId, since, spawned);
    }
    try {
        // Any tick of the turn here re-arms this process's waker: a wake-up job may have run on
        // another instance, which cannot re-arm it.
        ports.live.woke(job.turnId);
        // A woken turn's head is in its waker's read of the tickets; its text, if this process wrote it, here.
        const known = job.record ?? (job.open && ports.store.fromTickets?.(job.turnId, job.open));
        if (!known && job.sessionKey && !job.session) {
            // Its record is read (another instance wrote its text): its session beside it. Otherwise
            // the session is read only once the turn may go (a woken turn that must wait again reads none).
            job.session = ports.sessions.get(job.sessionKey);
            job.session.catch(() => undefined);
        }
        const rec = known ?? (await ports.store.get(job.turnId));
        // A tick of a chain the sweep replaced ends here: one chain per turn, always.
        if (!rec || rec.phase === 'done' || (rec.chain && job.chain !== rec.chain)) {
            return;
        }
        await takeOverFromGone(rec, ports);
        await step(rec, job, ports);
        // Only a turn this step started sending stays in the event; a waiting one is woken later.
        if (job.quick && (rec.phase as TurnRecord['phase']) !== 'done' && ports.live.submission(rec.id)) {
            carried = true;
            await carryOn(rec, ports, since);
            handedOver = (rec.phase as TurnRecord['phase']) !== 'done';
        }
        if ((rec.phase as TurnRecord['phase']) === 'done') {
            await chainEnded(job.turnId, ports);
        }
    } finally {
        busy.delete(job.turnId);
        if (job.quick) {
            quickTurns.delete(job.turnId);
            if (pokedWhileQuick.delete(job.turnId)) {
                if (!carried) {
                    await outer.schedule({ turnId: job.turnId, chain: job.chain }, 0).catch(() => undefined);
                } else if (handedOver && !chainWaiting(job.turnId)) {
                    // The hand-over's own tick came while this call still had the turn (a job due at
                    // once can start before its scheduling returns) and was dropped: it comes again now.
                    await chainOn({ turnId: job.turnId, chain: job.chain }, 0, outer).catch(() => undefined);
                }
            }
        }
        if (wokenWhileBusy.delete(job.turnId)) {
            await outer.schedule({ turnId: job.turnId, chain: job.chain, wake: true }, 0).catch(() => undefined);
        }
        // The turns this one woke and carried in the same call: the call returns when they have.
        await Promise.all(spawned);
    }
}

/**
 * A quick turn's ports in its call: a turn it wakes at once (the next of its session, a
 * waiter for the slot it freed) takes its first step right here, quick too, instead of in a
 * scheduler job, while the call is younger than CARRY_MS; later ones go to the scheduler.
 */
function carrying(ports: TickPorts, self: string, since: number, spawned: Array<Promise<void>>): TickPorts {
    const carries = () => Date.now() - since < CARRY_MS;
    return {
        ...ports,
        carries,
        schedule: (next, delayMs) => {
            if (delayMs <= 0 && !next.wake && next.turnId !== self && carries()) {
                // The tickets its waker just read spare its own read (and, mostly, its record's).
                spawned.push(
                    tick({ turnId: next.turnId, chain: next.chain, quick: true, since, open: next.open, sessionKey: next.sessionKey }, ports).catch(
                        () => undefined,
                    ),
                );
                return Promise.resolve(undefined);
            }
            return ports.schedule(next, delayMs);
        },
    };
}

async function step(rec: TurnRecord, job: TickJob, ports: TickPorts): Promise<void> {
    const next = { turnId: rec.id, chain: rec.chain };
    try {
        if (rec.phase === 'queued') {
            if (rec.retryAt && rec.retryAt > ports.now()) {
                if (!job.wake) {
                    await chainOn(next, rec.retryAt - ports.now(), ports);
                }
                return;
            }
            /** Stored claimed by this process a moment ago (freshClaim.ts): going needs no write, waiting takes it back. */
            let fresh = false;
            // A submission this process has in flight passed both checks when it started (and a run
            // at Hermes must be recorded, never left waiting): the tick that completes it skips them.
            if (!ports.live.submission(rec.id)) {
                // One read of every open turn serves both: the session's order and max_parallel_turns
                // (the waker's read when it just made one, after this turn's ticket was written).
                const open = job.open ?? (await openTickets(ports.store));
                job.open = undefined;
                await takeText(rec, job);
                fresh = takeFresh(rec);
                const now = ports.now();
                const ahead = turnsAhead(
                    rec,
                    open.filter((o) => o.sessionKey === rec.sessionKey),
                    now,
                );
                const claims = { own: fresh, others: waitsOnFreshClaim(rec, open, now) };
                if (ahead.length > 0) {
                    return wait(rec, ports, true, sessionBlockers(ahead, now), claims);
                }
                if (!claimSlot(rec, open, ports)) {
                    return wait(rec, ports, 'slot', slotBlockers(rec, open, ports), claims);
                }
                rec.alone = noteStart(rec.id, open);
            }
            move(rec, { kind: 'go' });
            // Scheduled first: if this process dies mid-step, the chain goes on (a retry replaces it).
            // A quick turn's watchdog is the sweep (its record says who sends it, and since when).
            if (!job.wake && !job.quick) {
                await chainOn(next, LIVE_TICK_MS, ports);
            }
            await submit(rec, ports, job, fresh);
            return;
        }
        if (!job.quick && heldElsewhere(rec.carried, ports.now())) {
            // Another instance's message event is carrying it (carryOn): that call ends it or hands it to its chain.
            return;
        }
        if (!job.wake) {
            // Scheduled before the work: if this process dies mid-step, the chain goes on.
            await chainOn(next, nextLookIn(rec, ports.live.get(rec.id) ? LIVE_TICK_MS : POLL_TICK_MS, ports), ports);
        }
        const seen = await observe(rec, ports);
        pollSucceeded(rec.id);
        if (seen.outcome) {
            return finish(rec, seen.outcome, ports, job.quick);
        }
        const changed = await showProgress(rec, seen, ports);
        // The process holding the turn's stream says so too (liveAt): other instances defer to it while it lives.
        const holder = Boolean(seen.live);
        if (changed || ports.now() - (rec.tickAt ?? 0) >= HEARTBEAT_MS || (holder && ports.now() - (rec.liveAt ?? 0) >= HEARTBEAT_MS)) {
            rec.tickAt = ports.now();
            rec.liveAt = holder ? rec.tickAt : rec.liveAt;
            await ports.store.save(rec);
        }
    } catch (error) {
        await onError(rec, error, ports);
    }
}

/**
 * The text the event was still building when it stored the turn (startTurn.ts), in hand by the
 * time the tickets are read. Without it (its build failed) the turn's text is built again where
 * it is sent (rebuildText.ts), as for a turn whose process died before its text was written.
 */
async function takeText(rec: TurnRecord, job: TickJob): Promise<void> {
    const text = await job.text?.catch(() => undefined);
    job.text = undefined;
    if (text) {
        rec.user = text.user;
        rec.contextFiles = rec.contextFiles ?? text.contextFiles;
    }
}

/**
 * The rest of a turn whose first step ran in its message event: each step when the turn's
 * stream wakes it, on the record in hand, until it ends or QUICK_MS pass. Anything that needs
 * the scheduler (a retry, a wake-up job, an approval, a slow Hermes) hands it to its chain.
 */
async function carryOn(rec: TurnRecord, ports: TickPorts, since: number): Promise<void> {
    const until = Math.min(Date.now() + QUICK_MS, since + CALL_MS);
    const job: TickJob = { turnId: rec.id, chain: rec.chain, wake: true, quick: true };
    /** When the running turn is next looked at without a wake-up (typing, status, heartbeat), as a tick would. */
    let lookAt = 0;
    /** When a running turn not answered by then has its run written (once: `saved`). */
    let writeAt = 0;
    let saved = false;
    try {
        while ((rec.phase as TurnRecord['phase']) !== 'done' && !chainWaiting(rec.id) && !wokenWhileBusy.has(rec.id) && !rec.approval) {
            if (rec.phase === 'running' && !lookAt) {
                lookAt = Date.now() + FIRST_LOOK_MS;
                writeAt = Date.now() + RUN_WRITE_MS;
            }
            const next = saved ? lookAt : writeAt;
            const woken = await quickWake(rec.id, Math.min(until, next || until) - Date.now());
            if (wokenWhileBusy.has(rec.id) || Date.now() >= until) {
                break;
            }
            // Not instant (its time came, or its stream asks for an approval, which is posted next): the
            // run is written now, so a process that dies from here on leaves it to be followed, not sent
            // to Hermes again (beats.ts: within seconds of the restart), and nothing is shown before it.
            const live = ports.live.get(rec.id);
            const notInstant = woken ? rec.phase === 'running' && Boolean(live?.approval) && !live?.terminal : writeAt > 0 && Date.now() >= writeAt;
            if (!saved && notInstant) {
                saved = true;
                rec.tickAt = ports.now();
                rec.liveAt = rec.tickAt;
                // Its end is this call's (no lease): other instances' ticks leave it alone meanwhile.
                rec.carried = { process: PROCESS_ID, until: rec.tickAt + (until - Date.now()) + CARRIED_SLACK_MS };
                await ports.store.save(rec);
                if (!woken && Date.now() < lookAt) {
                    continue;
                }
            }
            if (woken) {
                ports.live.woke(rec.id);
            } else {
                lookAt = Date.now() + LIVE_TICK_MS;
            }
            await step(rec, job, ports);
        }
        if ((rec.phase as TurnRecord['phase']) !== 'done') {
            await handOver(rec, ports);
        }
    } finally {
        quickEnded(rec.id);
    }
}

/**
 * A quick turn outlived its event: its record gets what the event's steps kept in hand (the
 * run, the claim), a stop asked for meanwhile is carried out, and its chain of ticks starts
 * (unless a step already scheduled it).
 */
async function handOver(rec: TurnRecord, ports: TickPorts): Promise<void> {
    ports.live.onWake(rec.id, wakeByJob(rec, ports));
    try {
        // From now on any instance's tick may end it, under the lease (turns/lease.ts).
        rec.carried = undefined;
        rec.tickAt = ports.now();
        rec.liveAt = rec.phase === 'running' ? rec.tickAt : rec.liveAt;
        await ports.store.save(rec);
        if (rec.runId && (await ports.store.stopRequest(rec.id))) {
            // A stop asked for while the run was being created (or while the event held the turn) found no run to stop.
            await hermesFor(rec, ports.hermes).stopRun(rec.runId);
        }
    } catch (error) {
        await onError(rec, error, ports);
    }
    if (!chainWaiting(rec.id)) {
        await chainOn({ turnId: rec.id, chain: rec.chain }, rec.phase === 'running' ? nextLookIn(rec, LIVE_TICK_MS, ports, 0) : POLL_TICK_MS, ports);
    }
}

/**
 * The turns of its session a waiter marks: the running one, and the one right before it (the
 * last to end before it may start; the ones before that see it when they start).
 */
function sessionBlockers(ahead: TurnRecord[], now: number): string[] {
    const last = ahead.reduce<TurnRecord | undefined>((latest, o) => (!latest || comesBefore(latest, o) ? o : latest), undefined);
    return ahead.filter((o) => (o === last || blocksSession(o, now)) && mayEndUnread(o)).map((o) => o.id);
}

/**
 * A turn behind another of its session, or over max_parallel_turns, costs nothing while it
 * waits: no ticks at all. The turn ahead (or any turn freeing a slot) wakes it when it ends
 * (finish.ts, slots.ts); a stop asked for meanwhile wakes it too, and is seen here.
 */
async function wait(
    rec: TurnRecord,
    ports: TickPorts,
    why: true | 'slot',
    blockers: string[],
    /** `own`: its record is this process's fresh claim; `others`: it counted another instance's (freshClaim.ts). */
    claims: { own: boolean; others: boolean },
): Promise<void> {
    // A stop asked for while it waited wakes it (stopTurn.ts) and is seen here. A turn stored a
    // moment ago in this call reads none (one read less per waiting turn under a backlog): a stop
    // can only have come after its head, and its wake-up either finds the turn busy here and
    // brings it back to this read (wokenWhileBusy), or reads the stop in another instance.
    const stoppedBy = claims.own ? undefined : await ports.store.stopRequest(rec.id);
    if (stoppedBy) {
        return finish(rec, { kind: 'stopped', by: stoppedBy }, ports);
    }
    if (why === true && rec.slot) {
        // Behind its own session it claims nothing: the slot goes to turns that can use it.
        rec.slot = undefined;
        releaseSlot(rec.id, ports.now());
    }
    if (rec.waiting !== why || claims.own) {
        // Its record says this process sends it (own): taken back (freshClaim.ts).
        move(rec, { kind: 'wait', why, own: claims.own });
        rec.tickAt = ports.now();
        await ports.store.save(rec);
        if (why === true) {
            ports.log.debug(`Turn ${describe(rec)} waits for the turn ahead in its session.`);
        }
    }
    // Marked on what it waits for, after its record says it waits: their end wakes it (turns/waiters.ts).
    const gone = blockers.length > 0 ? ((await ports.store.waitOn?.(rec.id, blockers)) ?? []) : [];
    if (claims.others && gone.length === 0) {
        // Another instance's fresh claim may be taken back instead of ending: a look again soon.
        await ports.schedule({ turnId: rec.id, chain: rec.chain }, FRESH_RELOOK_MS);
    } else if (gone.length > 0) {
        // One ended between the read and the mark: nobody would wake this turn, so it looks again
        // now (in a quick call, once the call is over, as any job that came meanwhile).
        if (quickTurns.has(rec.id)) {
            pokedWhileQuick.add(rec.id);
        } else {
            await ports.schedule({ turnId: rec.id, chain: rec.chain }, 0);
        }
    }
}
