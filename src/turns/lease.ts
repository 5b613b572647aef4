import { randomUUID } from 'crypto';
import { heldElsewhere, PROCESS_ID } from './processId';
import { TurnRecord } from './turnRecord';
import { claimAs } from './owner';
import { TurnStore } from './turnStore';

/** How long one finishing attempt holds the turn against other processes. */
const LEASE_MS = 30_000;

/**
 * How long a finisher waits after writing its lease before it reads the record back to see
 * whether the lease is still its own. Apps-Engine persistence has no conditional write: two
 * instances that both read the record before either wrote would each read back their own lease
 * if they did so at once, and both post (the two-instance rig showed it: a turn woken in one
 * instance's event and ticked by both answered twice, 4 times in 120 tries under load). After
 * this wait, of two such finishers only the later writer still reads its own (Fischer's mutual
 * exclusion), provided neither took longer than that from its read to its write taking effect:
 * a finisher whose preparation took over SLOW_GAP_MS reads again before it writes. (A write
 * that itself takes longer than the wait is the case this cannot rule out.)
 */
export const LEASE_SETTLE_MS = 200;
const SLOW_GAP_MS = LEASE_SETTLE_MS / 2;
/** The first read, and the one again after a slow preparation. */
const ATTEMPTS = 2;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Takes the finishing lease of `rec` (a turn finished outside its message event, where ticks of
 * other instances may finish it too): the record as read before the lease was written, or
 * undefined when another finisher holds it, the turn is done or gone. `prepare` runs once, after
 * the first read, before the lease is written: what the write must carry (the delivery).
 * `written` runs once the lease is written, before the wait: what need not wait for the outcome
 * of the lease (waking the turns waiting for the slot the write freed). `process`: this app
 * process (another in tests).
 */
export async function takeLease(
    rec: TurnRecord,
    store: Pick<TurnStore, 'get' | 'save'>,
    now: () => number,
    prepare: (fresh: TurnRecord) => Promise<void>,
    written?: () => void,
    process: string = PROCESS_ID,
): Promise<TurnRecord | undefined> {
    const token = randomUUID();
    let prepared = false;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const readAt = Date.now();
        const fresh = await store.get(rec.id);
        // Another finisher's lease that still lasts stops this one, even when this finisher's own
        // record shows it (the holder may be posting by now); this process's own, left by an earlier
        // attempt that failed, is taken again (two ticks of one turn never overlap in one process).
        if (!fresh || fresh.phase === 'done' || heldElsewhere(claimAs(fresh, 'finishing'), now(), process)) {
            return undefined;
        }
        if (!prepared) {
            prepared = true;
            await prepare(fresh);
            if (Date.now() - readAt > SLOW_GAP_MS) {
                // A rival may have written its lease since that read: read again before writing over it.
                continue;
            }
        }
        rec.owner = { as: 'finishing', token, until: now() + LEASE_MS, process };
        await store.save(rec);
        written?.();
        await sleep(LEASE_SETTLE_MS);
        return (await store.get(rec.id))?.owner?.token === token ? fresh : undefined;
    }
    return undefined;
}
