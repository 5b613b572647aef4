import { comesBefore, describe, heldSlot, TurnRecord } from './turnRecord';
import { TickJob } from './tickPorts';
import { mayEndUnread } from './waiters';
import { freshElsewhere, undecidedHere } from './freshClaim';
import { processMemory } from './processMemory';

/**
 * `max_parallel_turns`: how many turns are in flight at Hermes across the whole server (every
 * instance shares the app's persistence). A turn's claim is a field of its own record
 * (`slot`), so claiming costs no call of its own: the read of the open turns that the session
 * order needs anyway, and the record's save that sends the turn. A turn that may not start is
 * saved as waiting and stops ticking until a finishing turn wakes the oldest waiters. Turns
 * start in arrival order across rooms (the app's sequence), so a busy room cannot starve a
 * quiet one: its later turns queue behind the quiet room's earlier one.
 *
 * Between instances the bound is soft: two instances that read the open turns in the same
 * instant may both start a turn (persistence has no compare-and-set). The default (8) stays
 * below Hermes's own `max_concurrent_runs` (10), and a 429 from Hermes is retried (retryPolicy).
 */
export interface SlotEntry {
    id: string;
    seq: number;
    chain?: string;
    state: 'running' | 'waiting';
    /** A running entry past this is a leftover (its turn outlived turn_timeout_minutes only if lost): not counted. */
    until: number;
    /** Another instance's fresh claim (freshClaim.ts): it holds a slot against the turns after it only. */
    fresh?: boolean;
}

export interface SlotPorts {
    config: { maxParallelTurns: number; turnTimeoutMinutes: number };
    schedule: (job: TickJob, delayMs: number) => Promise<string | void>;
    log: { debug?(message: string): void };
    now: () => number;
}

/** A waiting entry lasts while its turn is open. */
const WHILE_OPEN = Number.MAX_SAFE_INTEGER;

/**
 * Claims this process made whose saves another read of the open turns may not show yet:
 * events start their turns' first steps concurrently, and two reads before either save would
 * both see a free slot. A claim is decided synchronously against the read plus these.
 */
const claimedHere = processMemory.map<string, { entry: SlotEntry; at: number }>('slots.claimedHere');
/**
 * A claim's record is saved within moments of the claim (before the turn is sent): after this
 * long the reads show it, and a claim whose turn ended in another process stops counting here.
 */
const CLAIM_FRESH_MS = 15_000;

/**
 * Turns of this process whose run has ended at Hermes while their record, until its removal,
 * still says they hold a slot (finish.ts frees it early): not counted here. Another instance's
 * read counts them until the removal, which only holds its turns back. Forgotten at the removal,
 * or after a while if this process never gets there.
 */
const releasedHere = processMemory.map<string, number>('slots.releasedHere');
const RELEASED_KEEP_MS = 60_000;

/** The slot entries the open turns hold, with this process's newer claims and releases over what the read showed. */
export function entriesOf(open: TurnRecord[], now: number): SlotEntry[] {
    const byId = new Map<string, SlotEntry>();
    for (const [id, at] of releasedHere) {
        if (now - at > RELEASED_KEEP_MS) {
            releasedHere.delete(id);
        }
    }
    for (const r of open) {
        if (undecidedHere(r) || releasedHere.has(r.id)) {
            // This process's own, before its read: a queued turn for now (its claim, once made, is
            // below); or one whose run has ended, its slot freed early.
            continue;
        }
        if (r.slot) {
            const entry: SlotEntry = { id: r.id, seq: r.seq, chain: r.chain, state: r.slot.state, until: r.slot.until };
            if (freshElsewhere(r, now)) {
                entry.fresh = true;
            }
            byId.set(r.id, entry);
        }
    }
    for (const [id, claim] of claimedHere) {
        if (now - claim.at > CLAIM_FRESH_MS) {
            claimedHere.delete(id);
        } else {
            byId.set(id, claim.entry);
        }
    }
    return [...byId.values()];
}

function live(entries: SlotEntry[], now: number, except?: string): SlotEntry[] {
    return entries.filter((e) => e.id !== except && e.until > now);
}

/** Whether `e` holds a slot against `rec`: running, or another instance's fresh claim made before it. */
function holds(e: SlotEntry, rec: Pick<TurnRecord, 'id' | 'seq'>): boolean {
    return e.state === 'running' && (!e.fresh || comesBefore(e, rec));
}

/** May `rec` start now: fewer running than the bound, counting the waiters that arrived before it. */
export function mayStart(rec: Pick<TurnRecord, 'id' | 'seq'>, entries: SlotEntry[], max: number, now: number): boolean {
    const others = live(entries, now, rec.id);
    const running = others.filter((e) => holds(e, rec)).length;
    const earlier = others.filter((e) => e.state === 'waiting' && comesBefore(e, rec)).length;
    return running + earlier < max;
}

/**
 * Takes a slot for `rec` (true) or marks it waiting (false), against `open` (every open turn,
 * just read). Sets `rec.slot`; the caller saves the record. Synchronous, so claims in this
 * process never interleave.
 */
export function claimSlot(rec: TurnRecord, open: TurnRecord[], ports: SlotPorts): boolean {
    const max = ports.config.maxParallelTurns;
    if (max <= 0) {
        rec.slot = undefined;
        return true;
    }
    const now = ports.now();
    if (mayStart(rec, entriesOf(open, now), max, now)) {
        rec.slot = heldSlot(now, ports.config.turnTimeoutMinutes);
        claimedHere.set(rec.id, { entry: { id: rec.id, seq: rec.seq, chain: rec.chain, ...rec.slot }, at: now });
        return true;
    }
    if (rec.slot?.state !== 'waiting') {
        ports.log.debug?.(`Turn ${describe(rec)} waits for a free slot (max_parallel_turns ${max}).`);
    }
    rec.slot = { state: 'waiting', until: WHILE_OPEN };
    claimedHere.delete(rec.id);
    return false;
}

/**
 * The turns a slot waiter marks (turns/waiters.ts): every running one, while it is among the
 * first `max` waiters. A later waiter marks none: the turns started after it see it when they
 * start, and read the tickets when they end. Bounded: at most max x max marks in all.
 */
export function slotBlockers(rec: Pick<TurnRecord, 'id' | 'seq'>, open: TurnRecord[], ports: SlotPorts): string[] {
    const now = ports.now();
    const others = live(entriesOf(open, now), now, rec.id);
    const ahead = others.filter((e) => e.state === 'waiting' && comesBefore(e, rec)).length;
    if (ahead >= ports.config.maxParallelTurns) {
        return [];
    }
    const byId = new Map(open.map((o) => [o.id, o]));
    return others.filter((e) => holds(e, rec) && mayEndUnread(byId.get(e.id) ?? { id: e.id })).map((e) => e.id);
}

/**
 * The turn ended (its record is gone with its claim): this process forgets its claim. `early`:
 * its run has ended but its record still holds the slot until its removal; this process counts
 * it free from now on.
 */
export function releaseSlot(id: string, now: number, early = false): void {
    claimedHere.delete(id);
    if (early) {
        releasedHere.set(id, now);
    } else {
        releasedHere.delete(id);
    }
}

/**
 * Wakes as many of the oldest waiters as there are free slots, from the open turns just read
 * (the finishing turn's own record excluded); the sweep calls it too, as a safety net. The woken
 * turn claims again: a slot is never handed over blind. `notOf`: a session whose turns are not
 * woken (its turn ahead has not ended: the read they claim on no longer shows it).
 */
export async function wakeWaiters(open: TurnRecord[], ports: SlotPorts, notOf?: string): Promise<number> {
    if (ports.config.maxParallelTurns <= 0) {
        return 0;
    }
    const now = ports.now();
    const current = live(entriesOf(open, now), now);
    const keys = new Map(open.map((o) => [o.id, o.sessionKey]));
    // Fresh claims of other instances are not counted: a woken turn claims again on its own read.
    const free = ports.config.maxParallelTurns - current.filter((e) => e.state === 'running' && !e.fresh).length;
    const waiters = current
        .filter((e) => e.state === 'waiting' && (notOf === undefined || keys.get(e.id) !== notOf))
        .sort((a, b) => (comesBefore(a, b) ? -1 : 1));
    const woken = waiters.slice(0, Math.max(0, free));
    for (const w of woken) {
        // In a carrying call the woken turn claims on this read, and reads its session only if it may go (tick.ts).
        await ports.schedule({ turnId: w.id, chain: w.chain, open, sessionKey: keys.get(w.id) }, 0);
    }
    return woken.length;
}
