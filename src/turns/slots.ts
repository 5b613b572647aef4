import { comesBefore, describe, TurnRecord } from './turnRecord';
import { TickJob } from './tickPorts';

/**
 * `max_parallel_turns`: how many turns are in flight at Hermes across the whole server (every
 * instance shares the app's persistence). Each turn that may start writes a `running` entry;
 * one that may not writes a `waiting` entry and stops ticking until a finishing turn wakes the
 * oldest waiters. Turns start in arrival order across rooms (the app's sequence), so a busy
 * room cannot starve a quiet one: its later turns queue behind the quiet room's earlier one.
 *
 * Between instances the bound is soft: two instances that read the entries in the same
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
}

export interface SlotPort {
    list(): Promise<SlotEntry[]>;
    put(entry: SlotEntry): Promise<void>;
    drop(id: string): Promise<void>;
}

export interface SlotPorts {
    slots?: SlotPort;
    config: { maxParallelTurns: number; turnTimeoutMinutes: number };
    schedule: (job: TickJob, delayMs: number) => Promise<string | void>;
    log: { debug?(message: string): void };
    now: () => number;
}

/** A waiting entry lasts while its turn is open: the sweep drops the entries of turns that are gone. */
const WHILE_OPEN = Number.MAX_SAFE_INTEGER;

function live(entries: SlotEntry[], now: number, except?: string): SlotEntry[] {
    return entries.filter((e) => e.id !== except && e.until > now);
}

/** May `rec` start now: fewer running than the bound, counting the waiters that arrived before it. */
export function mayStart(rec: Pick<TurnRecord, 'id' | 'seq'>, entries: SlotEntry[], max: number, now: number): boolean {
    const others = live(entries, now, rec.id);
    const running = others.filter((e) => e.state === 'running').length;
    const earlier = others.filter((e) => e.state === 'waiting' && comesBefore(e, rec)).length;
    return running + earlier < max;
}

/**
 * Claims in this process one at a time: events start their turns' first steps concurrently,
 * and two reads before either write would both see a free slot.
 */
let claiming: Promise<unknown> = Promise.resolve();

/**
 * Takes a slot for `rec` (resolves true) or records it as waiting (false). Two bridge calls
 * (one read, one write); none when the bound is off or the port is absent.
 */
export function claimSlot(rec: TurnRecord, ports: SlotPorts): Promise<boolean> {
    if (!ports.slots || ports.config.maxParallelTurns <= 0) {
        return Promise.resolve(true);
    }
    const claim = claiming.then(() => claimNow(rec, ports.slots as SlotPort, ports));
    claiming = claim.catch(() => undefined);
    return claim;
}

async function claimNow(rec: TurnRecord, slots: SlotPort, ports: SlotPorts): Promise<boolean> {
    const max = ports.config.maxParallelTurns;
    const now = ports.now();
    const entries = await slots.list();
    if (mayStart(rec, entries, max, now)) {
        await slots.put({ id: rec.id, seq: rec.seq, chain: rec.chain, state: 'running', until: now + ports.config.turnTimeoutMinutes * 60_000 + 60_000 });
        return true;
    }
    if (rec.waiting !== 'slot') {
        await slots.put({ id: rec.id, seq: rec.seq, chain: rec.chain, state: 'waiting', until: WHILE_OPEN });
        ports.log.debug?.(`Turn ${describe(rec)} waits for a free slot (max_parallel_turns ${max}).`);
    }
    return false;
}

/**
 * A turn ended: its slot is free. Wakes the oldest waiters that now fit (two bridge calls, plus
 * one schedule per woken turn). The woken turn claims again: a slot is never handed over blind.
 */
export async function releaseSlot(id: string, ports: SlotPorts): Promise<void> {
    if (!ports.slots || ports.config.maxParallelTurns <= 0) {
        return;
    }
    await ports.slots.drop(id);
    await wakeWaiters(await ports.slots.list(), ports);
}

/** Wakes as many of the oldest waiters as there are free slots (the sweep calls it too, as a safety net). */
export async function wakeWaiters(entries: SlotEntry[], ports: SlotPorts): Promise<number> {
    const now = ports.now();
    const current = live(entries, now);
    const free = ports.config.maxParallelTurns - current.filter((e) => e.state === 'running').length;
    const waiters = current.filter((e) => e.state === 'waiting').sort((a, b) => (comesBefore(a, b) ? -1 : 1));
    const woken = waiters.slice(0, Math.max(0, free));
    for (const w of woken) {
        await ports.schedule({ turnId: w.id, chain: w.chain }, 0);
    }
    return woken.length;
}
