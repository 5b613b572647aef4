import { ApprovalDecision, SentRecord, TurnRecord } from './turnRecord';

/* The port the turn path keeps its records through (engine/adapters/engineTurns.ts on the engine's persistence). */

/** Where turn records live (the app's persistence in Rocket.Chat). */
export interface TurnStore {
    get(id: string): Promise<TurnRecord | undefined>;
    /**
     * `textKept`: the caller holds the turn's text and its next save writes it (turns/freshClaim.ts):
     * the store may leave the text out until then; a reader that finds none rebuilds it (rebuildText.ts).
     */
    save(record: TurnRecord, opts?: { textKept?: boolean }): Promise<void>;
    /** Unfinished turns of a session. */
    openInSession(sessionKey: string): Promise<TurnRecord[]>;
    /** Every unfinished turn (for the recovery sweep). */
    open(): Promise<TurnRecord[]>;
    /**
     * Every unfinished turn as a small entry (id, seq, chain, sessionKey, phase, slot, waiting, runId):
     * what the session's order and max_parallel_turns look at, read at each start and end of a
     * turn, so its size must not grow with the turns' text. Absent: `open()`. `inFlight`: the
     * caller wrote nothing the read must show (it only looks for waiters to wake), so a read
     * already on its way will do.
     */
    tickets?(opts?: { inFlight?: boolean }): Promise<TurnRecord[]>;
    /**
     * The turn as a tickets read (`open`, what `tickets` returned) showed its head, with the text
     * this process wrote or read of it: spares a woken turn the read of its record. Undefined when
     * this process does not hold its text, or `open` came from elsewhere: the turn is read then.
     */
    fromTickets?(id: string, open: TurnRecord[]): TurnRecord | undefined;
    /**
     * Drops a finished turn; with it its stop request and approval decisions, when the turn may
     * have them (a removal costs a call even when there is nothing to remove). A stop asked for
     * as the turn ended is left to the sweep's orphan pass. Its receipt stays.
     */
    remove(id: string, also?: { stop: boolean; decisions: boolean }): Promise<{ waiters: number } | void>;
    /**
     * Marks `waiterId` as waiting for each of `blockerIds` (turns/waiters.ts): the removal of a
     * marked turn returns its marks (`waiters`), so the end of a turn nobody waits for reads no
     * tickets. Reads the tickets after writing the marks and returns the blockers already gone
     * (their marks dropped), or waiting themselves by then (a fresh claim taken back): the waiter
     * looks again at once. Absent: every end reads the tickets.
     */
    waitOn?(waiterId: string, blockerIds: string[]): Promise<string[]>;
    /**
     * A stop is its own record, not a field of the turn: the turn's ticks rewrite the turn
     * record, and a stop written into it between their read and write would be lost.
     */
    requestStop(id: string, by: string): Promise<void>;
    stopRequest(id: string): Promise<string | undefined>;
    /**
     * What a submission came to, for the other instances: its sender writes it only when no tick
     * of its own took the result soon (submit.ts); whoever records the run drops it.
     */
    recordSent?(id: string, sent: SentRecord): Promise<void>;
    sent?(id: string): Promise<SentRecord | undefined>;
    dropSent?(id: string): Promise<void>;
    /** Approval decisions are their own records for the same reason. */
    decide(turnId: string, decision: ApprovalDecision): Promise<void>;
    decision(turnId: string, messageId: string): Promise<ApprovalDecision | undefined>;
}

/** Every open turn as a ticket (the store's small list, or its heads when it keeps none). */
export function openTickets(store: Pick<TurnStore, 'tickets' | 'open'>, opts?: { inFlight?: boolean }): Promise<TurnRecord[]> {
    return store.tickets?.(opts) ?? store.open();
}
