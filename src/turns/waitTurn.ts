/*
 * A queued turn that may not go yet: behind a turn of its session, or over max_parallel_turns.
 * It costs nothing while it waits; what it waits for wakes it.
 */
import { finish } from './finish';
import { FRESH_RELOOK_MS, blocksSession } from './freshClaim';
import { move } from './machine';
import { releaseSlot } from './slots';
import { ticksHere } from './tickMemory';
import { TickPorts } from './tickPorts';
import { comesBefore, describe, TurnRecord } from './turnRecord';
import { mayEndUnread, noteWaitedOn } from './waiters';

/**
 * The turns of its session a waiter marks: the running one, and the one right before it (the
 * last to end before it may start; the ones before that see it when they start).
 */
export function sessionBlockers(ahead: TurnRecord[], now: number): string[] {
    const last = ahead.reduce<TurnRecord | undefined>((latest, o) => (!latest || comesBefore(latest, o) ? o : latest), undefined);
    return ahead.filter((o) => (o === last || blocksSession(o, now)) && mayEndUnread(o)).map((o) => o.id);
}

/**
 * A turn behind another of its session, or over max_parallel_turns, costs nothing while it
 * waits: no ticks at all. The turn ahead (or any turn freeing a slot) wakes it when it ends
 * (finish.ts, slots.ts); a stop asked for meanwhile wakes it too, and is seen here.
 */
export async function wait(
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
    if (why === 'slot') {
        noteWaitedOn(blockers);
    }
    const gone = blockers.length > 0 ? ((await ports.store.waitOn?.(rec.id, blockers)) ?? []) : [];
    if (claims.others && gone.length === 0) {
        // Another instance's fresh claim may be taken back instead of ending: a look again soon.
        await ports.schedule({ turnId: rec.id, chain: rec.chain }, FRESH_RELOOK_MS);
    } else if (gone.length > 0) {
        // One ended between the read and the mark: nobody would wake this turn, so it looks again
        // now (in a quick call, once the call is over, as any job that came meanwhile).
        if (ticksHere.quick.has(rec.id)) {
            ticksHere.pokedWhileQuick.add(rec.id);
        } else {
            await ports.schedule({ turnId: rec.id, chain: rec.chain }, 0);
        }
    }
}
