import { carryOn } from './carryOn';
import { ticksHere } from './tickMemory';
import { BUSY_RETRY_MS, CARRY_MS, HEARTBEAT_MS, LIVE_TICK_MS, POLL_TICK_MS } from './tickTimes';
import { sessionBlockers, wait } from './waitTurn';
import { heldElsewhere, PROCESS_ID } from './processId';
import { claimAs, streamingClaim } from './owner';
import { move } from './machine';
import { chainEnded, chainOn, chainTickRan, chainWaiting } from './chain';
import { quickSignal } from './quick';
import { finish } from './finish';
import { observe } from './observe';
import { onError, pollSucceeded } from './retryPolicy';
import { nextLookIn, showProgress } from './progress';
import { claimSlot, slotBlockers } from './slots';
import { noteStart } from './waiters';
import { submit } from './submit';
import { ack } from './ack';
import { beforeWait, mergeFollowUps } from './followUps';
import { takeOverFromGone } from './takeOverGone';
import { TickJob, TickPorts } from './tickPorts';
import { TurnRecord } from './turnRecord';
import { openTickets } from './turnStore';
import { takeFresh, turnsAhead, waitsOnFreshClaim } from './freshClaim';

/**
 * One step of a turn's life: queue → submit → watch → deliver. Returns in milliseconds:
 * every wait is a later tick. State is persisted where it matters, so the next tick (in this
 * process, or in another after a restart) carries on.
 */
export async function tick(job: TickJob, ports: TickPorts): Promise<void> {
    if (!job.wake) {
        chainTickRan(job);
    }
    if (ticksHere.busy.has(job.turnId)) {
        if (job.wake) {
            ticksHere.wokenWhileBusy.add(job.turnId);
            // A turn in its event's loop hands over to its chain now; the wake-up follows when it has.
            quickSignal(job.turnId);
        } else if (ticksHere.quick.has(job.turnId)) {
            // A quick call is working on it (a waiter woken twice, say): if that call carries the
            // turn, it ends it or hands it to a chain; if the turn only waited, it looks again.
            ticksHere.pokedWhileQuick.add(job.turnId);
            return;
        } else if (job.chain && !chainWaiting(job.turnId)) {
            // Keep the chain alive: another tick of this turn is still working here. Only when no
            // chain tick waits already: a stray job (an old chain's, one without a chain) must not
            // replace the live chain's next tick with itself.
            await chainOn(job, BUSY_RETRY_MS, ports);
        }
        return;
    }
    ticksHere.busy.add(job.turnId);
    ports.beat?.();
    const spawned: Array<Promise<void>> = [];
    const outer = ports;
    let carried = false;
    /** Whether the call carried its turn and handed it to its chain (carryOn). */
    let handedOver = false;
    /** When the call carrying a quick turn began (its first event, or this job). */
    const since = job.since ?? Date.now();
    if (job.quick) {
        ticksHere.quick.add(job.turnId);
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
            await carryOn(rec, ports, since, step);
            handedOver = (rec.phase as TurnRecord['phase']) !== 'done';
        }
        if ((rec.phase as TurnRecord['phase']) === 'done') {
            await chainEnded(job.turnId, ports);
        }
    } finally {
        ticksHere.busy.delete(job.turnId);
        if (job.quick) {
            ticksHere.quick.delete(job.turnId);
            if (ticksHere.pokedWhileQuick.delete(job.turnId)) {
                if (!carried) {
                    await outer.schedule({ turnId: job.turnId, chain: job.chain }, 0).catch(() => undefined);
                } else if (handedOver && !chainWaiting(job.turnId)) {
                    // The hand-over's own tick came while this call still had the turn (a job due at
                    // once can start before its scheduling returns) and was dropped: it comes again now.
                    await chainOn({ turnId: job.turnId, chain: job.chain }, 0, outer).catch(() => undefined);
                }
            }
        }
        if (ticksHere.wokenWhileBusy.delete(job.turnId)) {
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
                    if (await beforeWait(rec, ahead, ports)) {
                        return;
                    }
                    return queued(rec, job, ports, wait(rec, ports, true, sessionBlockers(ahead, now), claims));
                }
                if (!claimSlot(rec, open, ports)) {
                    return queued(rec, job, ports, wait(rec, ports, 'slot', slotBlockers(rec, open, ports), claims));
                }
                rec.alone = noteStart(rec.id, open);
                await mergeFollowUps(rec, open, ports);
            }
            move(rec, { kind: 'go' });
            // Scheduled first: if this process dies mid-step, the chain goes on (a retry replaces it).
            // A quick turn's watchdog is the sweep (its record says who sends it, and since when).
            if (!job.wake && !job.quick) {
                await chainOn(next, LIVE_TICK_MS, ports);
            }
            await submit(rec, ports, job, fresh);
            // Once the request is on its way (submit starts it and returns): the reaction is for people, the run is what they wait for.
            await ack(rec, 'taken', ports, { first: Boolean(job.record) });
            return;
        }
        if (!job.quick && heldElsewhere(claimAs(rec, 'carrying'), ports.now())) {
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
        // The process holding the turn's stream renews its claim: other instances defer to it while it lives.
        const stream = seen.live ? claimAs(rec, 'streaming') : undefined;
        const holder = stream?.process === PROCESS_ID;
        if (changed || ports.now() - (rec.tickAt ?? 0) >= HEARTBEAT_MS || (holder && ports.now() - (stream?.at ?? 0) >= HEARTBEAT_MS)) {
            rec.tickAt = ports.now();
            if (holder) {
                rec.owner = streamingClaim(PROCESS_ID, rec.tickAt);
            }
            await ports.store.save(rec);
        }
    } catch (error) {
        await onError(rec, error, ports);
    }
}

/** A turn that waits (for its conversation or a slot) shows ⏳ on its question while its wait is written. */
async function queued(rec: TurnRecord, job: TickJob, ports: TickPorts, waiting: Promise<void>): Promise<void> {
    await Promise.all([waiting, ack(rec, 'queued', ports, { first: Boolean(job.record) })]);
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
