import { chainEnded, chainOn, chainTickRan, chainWaiting } from './chain';
import { finish } from './finish';
import { observe } from './observe';
import { onError, pollSucceeded } from './retryPolicy';
import { showProgress } from './progress';
import { claimSlot } from './slots';
import { submit } from './submit';
import { TickJob, TickPorts } from './tickPorts';
import { describe, TurnRecord, turnsAhead } from './turnRecord';

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

/** Turns this app process is working on right now: two ticks of one turn never overlap here. */
const busy = new Set<string>();
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
        } else if (job.chain && !chainWaiting(job.turnId)) {
            // Keep the chain alive: another tick of this turn is still working here. Only when no
            // chain tick waits already: a stray job (an old chain's, one without a chain) must not
            // replace the live chain's next tick with itself.
            await chainOn(job, BUSY_RETRY_MS, ports);
        }
        return;
    }
    busy.add(job.turnId);
    try {
        // Any tick of the turn here re-arms this process's waker: a wake-up job may have run on
        // another instance, which cannot re-arm it.
        ports.live.woke(job.turnId);
        const rec = job.record ?? (await ports.store.get(job.turnId));
        // A tick of a chain the sweep replaced ends here: one chain per turn, always.
        if (!rec || rec.phase === 'done' || (rec.chain && job.chain !== rec.chain)) {
            return;
        }
        await step(rec, job, ports);
        if ((rec.phase as TurnRecord['phase']) === 'done') {
            await chainEnded(job.turnId, ports);
        }
    } finally {
        busy.delete(job.turnId);
        if (wokenWhileBusy.delete(job.turnId)) {
            await ports.schedule({ turnId: job.turnId, chain: job.chain, wake: true }, 0).catch(() => undefined);
        }
    }
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
            // A submission this process has in flight passed both checks when it started (and a run
            // at Hermes must be recorded, never left waiting): the tick that completes it skips them.
            if (!ports.live.submission(rec.id)) {
                const ahead = turnsAhead(rec, await ports.store.openInSession(rec.sessionKey));
                if (ahead.length > 0) {
                    return wait(rec, ports, true);
                }
                if (!(await claimSlot(rec, ports))) {
                    return wait(rec, ports, 'slot');
                }
            }
            rec.waiting = undefined;
            // Scheduled first: if this process dies mid-step, the chain goes on (a retry replaces it).
            if (!job.wake) {
                await chainOn(next, LIVE_TICK_MS, ports);
            }
            await submit(rec, ports, job);
            return;
        }
        if (!job.wake) {
            // Scheduled before the work: if this process dies mid-step, the chain goes on.
            await chainOn(next, ports.live.get(rec.id) ? LIVE_TICK_MS : POLL_TICK_MS, ports);
        }
        const seen = await observe(rec, ports);
        pollSucceeded(rec.id);
        if (seen.outcome) {
            return finish(rec, seen.outcome, ports);
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
 * A turn behind another of its session, or over max_parallel_turns, costs nothing while it
 * waits: no ticks at all. The turn ahead (or any turn freeing a slot) wakes it when it ends
 * (finish.ts, slots.ts); a stop asked for meanwhile wakes it too, and is seen here.
 */
async function wait(rec: TurnRecord, ports: TickPorts, why: true | 'slot'): Promise<void> {
    const stoppedBy = await ports.store.stopRequest(rec.id);
    if (stoppedBy) {
        return finish(rec, { kind: 'stopped', by: stoppedBy }, ports);
    }
    if (rec.waiting !== why) {
        rec.waiting = why;
        rec.tickAt = ports.now();
        await ports.store.save(rec);
        if (why === true) {
            ports.log.debug(`Turn ${describe(rec)} waits for the turn ahead in its session.`);
        }
    }
}
