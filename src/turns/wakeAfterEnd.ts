/* A turn that ends (or frees its slot early) wakes the turns waiting for it: they cost no ticks while they wait. */

import { releaseSlot, wakeWaiters } from './slots';
import { TickPorts } from './tickPorts';
import { comesBefore, describe, TurnRecord } from './turnRecord';
import { openTickets } from './turnStore';
import { startedAlone } from './waiters';

/**
 * Turns waiting without ticks: the next of this session, and the oldest waiters for the slot
 * this turn freed. One read of the open turns serves both.
 */
export async function wakeNext(rec: TurnRecord, ports: TickPorts): Promise<void> {
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
export function freeSlotEarly(rec: TurnRecord, ports: TickPorts): Promise<void> | undefined {
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
export function wakeForFreedSlot(rec: TurnRecord, ports: TickPorts): Promise<void> {
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
