/*
 * A quick turn inside its message event: its steps taken as its stream wakes it, until it ends
 * or QUICK_MS pass; then handed to its chain of scheduler ticks.
 */
import { chainOn, chainWaiting } from './chain';
import { PROCESS_ID } from './processId';
import { nextLookIn } from './progress';
import { quickEnded, quickWake } from './quick';
import { onError } from './retryPolicy';
import { wakeByJob } from './sendResult';
import { ticksHere } from './tickMemory';
import { TickJob, TickPorts } from './tickPorts';
import { CALL_MS, LIVE_TICK_MS, POLL_TICK_MS, QUICK_MS } from './tickTimes';
import { TurnRecord, hermesFor } from './turnRecord';
import { streamingClaim } from './owner';

/** One step of the turn (tick.ts), passed in: the carried turn takes the same steps as its chain's ticks. */
export type Step = (rec: TurnRecord, job: TickJob, ports: TickPorts) => Promise<void>;

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

/**
 * The rest of a turn whose first step ran in its message event: each step when the turn's
 * stream wakes it, on the record in hand, until it ends or QUICK_MS pass. Anything that needs
 * the scheduler (a retry, a wake-up job, an approval, a slow Hermes) hands it to its chain.
 */
export async function carryOn(rec: TurnRecord, ports: TickPorts, since: number, step: Step): Promise<void> {
    const until = Math.min(Date.now() + QUICK_MS, since + CALL_MS);
    const job: TickJob = { turnId: rec.id, chain: rec.chain, wake: true, quick: true };
    /** When the running turn is next looked at without a wake-up (typing, status, heartbeat), as a tick would. */
    let lookAt = 0;
    /** When a running turn not answered by then has its run written (once: `saved`). */
    let writeAt = 0;
    let saved = false;
    try {
        while ((rec.phase as TurnRecord['phase']) !== 'done' && !chainWaiting(rec.id) && !ticksHere.wokenWhileBusy.has(rec.id) && !rec.approval) {
            if (rec.phase === 'running' && !lookAt) {
                lookAt = Date.now() + FIRST_LOOK_MS;
                writeAt = Date.now() + RUN_WRITE_MS;
            }
            const next = saved ? lookAt : writeAt;
            const woken = await quickWake(rec.id, Math.min(until, next || until) - Date.now());
            if (ticksHere.wokenWhileBusy.has(rec.id) || Date.now() >= until) {
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
                // Its end is this call's (no lease): other instances' ticks leave it alone meanwhile.
                rec.owner = { as: 'carrying', process: PROCESS_ID, until: rec.tickAt + (until - Date.now()) + CARRIED_SLACK_MS, at: rec.tickAt };
                await ports.store.save(rec);
                if (!woken && Date.now() < lookAt) {
                    continue;
                }
            }
            if (woken) {
                ports.live.woke(rec.id);
            } else {
                // As a chain's tick: sooner when the status message (and a DM's 👀) falls due before.
                lookAt = Date.now() + nextLookIn(rec, LIVE_TICK_MS, ports);
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
        rec.tickAt = ports.now();
        // The call's claim ends here. This process reads the stream on (it sent the turn: submit.ts),
        // as a chain's turn does; a turn that went back to waiting for a retry holds nothing.
        const mine = rec.owner?.process === PROCESS_ID && (rec.owner.as === 'carrying' || rec.owner.as === 'streaming');
        if (mine) {
            rec.owner = rec.phase === 'running' ? streamingClaim(PROCESS_ID, rec.tickAt) : undefined;
        }
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
