import { heldElsewhere, PROCESS_ID } from './processId';
import { comesBefore, heldSlot, TurnRecord } from './turnRecord';
import { sendingClaim } from './owner';
import { startedHere } from './waiters';
import { processMemory } from './processMemory';

/**
 * A turn stored from its message event is stored already claimed (a `fresh` sending claim,
 * owner.ts): this process will send it on a slot (`slot`), unless the read of the tickets right after says
 * otherwise. A turn that may go is sent without writing its record again (one write less per
 * quick turn); one that must wait takes the claim back with the save that says it waits, which
 * it makes anyway (turns/tick.ts `wait`).
 *
 * How others read a fresh claim, until the turn's next save or the claim's lapse:
 * - this process knows its own exactly: undecided, it is a queued turn; gone ahead, a running one.
 * - another instance's holds a slot against turns that came after it (earlier ones do not count it:
 *   when it went, it had counted them), and is ahead of every other turn of its session, whatever
 *   their order. A turn that waits on one marks it as any turn it waits for (its end wakes it) and
 *   looks again after FRESH_RELOOK_MS, since a claim may be taken back instead: two instances'
 *   turns of one session that each see the other both wait, and the earlier goes on its next look.
 *   This process's own claims are never waited on as claims, so a burst here costs nothing more.
 * Its text is not written with it: the call that stored it holds the text, and the turn's next
 * save writes it (a quick turn has none); a process that dies first leaves it to be built again
 * (rebuildText.ts). Never in the head: a burst of new turns reads every head with every read.
 */
const freshHere = processMemory.set<string>('freshClaim.freshHere');
const MAX_FRESH = 2_000;

interface ClaimConfig {
    maxParallelTurns: number;
    turnTimeoutMinutes: number;
    hermesTimeoutSeconds: number;
}

/** Marks `rec`, about to be stored, as claimed by this process: its first step runs here at once. */
export function claimFresh(rec: TurnRecord, config: ClaimConfig, now: number): void {
    rec.owner = { ...sendingClaim(now, config.hermesTimeoutSeconds), fresh: true };
    rec.slot = config.maxParallelTurns > 0 ? heldSlot(now, config.turnTimeoutMinutes) : undefined;
    rec.tickAt = now;
    freshHere.add(rec.id);
    if (freshHere.size > MAX_FRESH) {
        freshHere.delete(freshHere.values().next().value as string);
    }
}

/**
 * The turn's step decides: true when `rec` is stored as this process's fresh claim (nothing
 * about it need be written to go ahead; a wait takes the claim back). Clears the mark either
 * way: the turn's next save writes an ordinary record.
 */
export function takeFresh(rec: TurnRecord): boolean {
    const own = ownClaim(rec) && freshHere.delete(rec.id);
    if (rec.owner?.fresh) {
        rec.owner = { as: rec.owner.as, process: rec.owner.process, until: rec.owner.until, at: rec.owner.at };
    }
    return own;
}

/** A fresh claim this process made. */
function ownClaim(o: Pick<TurnRecord, 'owner'>): boolean {
    return o.owner?.fresh === true && o.owner.process === PROCESS_ID;
}

/** A fresh claim of another process (another instance) that still lasts. */
export function freshElsewhere(o: Pick<TurnRecord, 'owner'>, now: number): boolean {
    return o.owner?.fresh === true && heldElsewhere(o.owner, now);
}

/** A fresh claim of this process whose turn has not decided yet: a queued turn for now. */
export function undecidedHere(o: Pick<TurnRecord, 'id' | 'owner'>): boolean {
    return ownClaim(o) && !startedHere(o.id);
}

/** How soon a turn waiting on another instance's fresh claim looks again (the claim may be taken back, not end). */
export const FRESH_RELOOK_MS = 1_000;

/** Whether `rec`, about to wait, counted another instance's fresh claim: of its session, or a slot's before it. */
export function waitsOnFreshClaim(rec: Pick<TurnRecord, 'id' | 'seq' | 'sessionKey'>, open: TurnRecord[], now: number): boolean {
    return open.some((o) => o.id !== rec.id && freshElsewhere(o, now) && (o.sessionKey === rec.sessionKey || comesBefore(o, rec)));
}

/**
 * Whether `o` blocks its whole session, whatever the order: a running turn, a fresh claim of
 * another instance (see above), and this process's own fresh claim once it went.
 */
export function blocksSession(o: TurnRecord, now: number): boolean {
    if (o.phase === 'running' || freshElsewhere(o, now)) {
        return true;
    }
    return ownClaim(o) && startedHere(o.id);
}

/**
 * The turns that must end before `rec` may start: any other turn of the session already
 * running (whatever its order), queued ones ordered before it, and fresh claims as above.
 */
export function turnsAhead(rec: Pick<TurnRecord, 'id' | 'seq'>, open: TurnRecord[], now: number): TurnRecord[] {
    return open.filter((o) => o.id !== rec.id && (comesBefore(o, rec) || blocksSession(o, now)));
}
