import { streamingClaim } from './owner';
import { DeliveryState, TurnRecord } from './turnRecord';

/**
 * The turn's states and the only moves between them. Every step of the turn path that moves a
 * turn asks this file (`move`); nothing else writes `phase`, `waiting`, `retryAt`, the run's
 * start, the approval's opening and closing, or the outcome.
 *
 * A state is read from the record, never stored as such: records written by released versions
 * carry `phase` and the fields below, and are read as they are.
 *
 *   queued ──wait──▶ waiting ──go──▶ queued ──started──▶ running ⇄ awaiting-approval
 *     │ (retry)                                            │ approvalAsked / approvalClosed
 *     └──────────────outcomeFixed────────────────────────▶ delivering ──ended──▶ done
 *   (any state but done) ──abandoned──▶ done
 *   queued, waiting ──joined──▶ done (its words went into another turn: followUps.ts)
 *
 * A stopped or failed turn is not a state of its own: its outcome (a notice, or what stopped it)
 * is fixed like an answer's and delivered, so a restart finishes it the same way. Who may act on
 * a turn in a state is its owner claim (owner.ts), not the machine's part; `started` hands the sending claim to the stream.
 */
export type TurnState = 'queued' | 'waiting' | 'running' | 'awaiting-approval' | 'delivering' | 'done';

type Approval = NonNullable<TurnRecord['approval']>;

export type TurnEvent =
    /** Behind a turn of its session (`true`), or over max_parallel_turns (`slot`); `own`: the process's fresh claim is taken back. */
    | { kind: 'wait'; why: true | 'slot'; own: boolean }
    /** Nothing ahead and a slot claimed: it may be sent. */
    | { kind: 'go' }
    /** Hermes was busy or draining before it had the turn: sent again at `at`. */
    | { kind: 'retry'; at: number }
    /** Hermes has the turn: its run (absent on the chat transport), read by `holder`'s stream. */
    | { kind: 'started'; runId?: string; holder: string; now: number; deadlineAt: number }
    /** Hermes asks before running a command: the prompt posted for it. */
    | { kind: 'approvalAsked'; approval: Approval }
    /** Hermes moved on from the open approval (decided here, or timed out there). */
    | { kind: 'approvalClosed' }
    /** The outcome, fixed before its first message is posted (a retried delivery posts the same parts). */
    | { kind: 'outcomeFixed'; delivery: DeliveryState }
    /** Its outcome delivered and its records removed. */
    | { kind: 'ended' }
    /** Its finish failed for too long: ended without the rest of its outcome. */
    | { kind: 'abandoned' }
    /** A follow-up whose words went into another turn (steered into its run, or merged into it): ended without an outcome of its own. */
    | { kind: 'joined' };

export type TurnEventKind = TurnEvent['kind'];

const ALIVE: readonly TurnState[] = ['queued', 'waiting', 'running', 'awaiting-approval', 'delivering'];

/** Each move: the states it may leave, and where it leads. Every other (state, move) pair is illegal. */
const TRANSITIONS: Readonly<Record<TurnEventKind, { from: readonly TurnState[]; to: TurnState }>> = {
    wait: { from: ['queued', 'waiting'], to: 'waiting' },
    go: { from: ['queued', 'waiting'], to: 'queued' },
    retry: { from: ['queued', 'waiting'], to: 'queued' },
    started: { from: ['queued'], to: 'running' },
    // A run can ask again before the record saw the first one closed (its stream counts them).
    approvalAsked: { from: ['running', 'awaiting-approval'], to: 'awaiting-approval' },
    approvalClosed: { from: ['awaiting-approval'], to: 'running' },
    // A retried finish fixes it again from what another instance stored (the same parts).
    outcomeFixed: { from: ALIVE, to: 'delivering' },
    ended: { from: ['delivering'], to: 'done' },
    abandoned: { from: ALIVE, to: 'done' },
    joined: { from: ['queued', 'waiting'], to: 'done' },
};

type StateFields = Pick<TurnRecord, 'phase' | 'delivery' | 'approval' | 'waiting'>;

/** Where the turn stands, read from its record. */
export function stateOf(rec: StateFields): TurnState {
    if (rec.phase === 'done') {
        return 'done';
    }
    if (rec.delivery) {
        return 'delivering';
    }
    if (rec.phase === 'running') {
        return rec.approval && !rec.approval.closed ? 'awaiting-approval' : 'running';
    }
    return rec.waiting ? 'waiting' : 'queued';
}

export class IllegalTransition extends Error {
    constructor(
        public readonly state: TurnState,
        public readonly event: TurnEventKind,
        turnId: string,
    ) {
        super(`Turn ${turnId} cannot take "${event}" in state ${state}.`);
        this.name = 'IllegalTransition';
    }
}

/** The fields a move writes: nothing else of the record changes. */
function changes(rec: TurnRecord, event: TurnEvent): Partial<TurnRecord> {
    switch (event.kind) {
        case 'wait':
            return event.own ? { waiting: event.why, owner: undefined } : { waiting: event.why };
        case 'go':
            return { waiting: undefined };
        case 'retry':
            return { retryAt: event.at };
        case 'started':
            return {
                phase: 'running',
                runId: event.runId,
                startedAt: event.now,
                deadlineAt: event.deadlineAt,
                retryAt: undefined,
                owner: streamingClaim(event.holder, event.now),
                tickAt: event.now,
            };
        case 'approvalAsked':
            return { approval: event.approval };
        case 'approvalClosed':
            return { approval: { ...(rec.approval as Approval), closed: true } };
        case 'outcomeFixed':
            return { delivery: event.delivery };
        case 'ended':
        case 'abandoned':
        case 'joined':
            return { phase: 'done' };
    }
}

/** Throws IllegalTransition unless `event` may happen to the turn as it stands. */
function allow(rec: TurnRecord, event: TurnEvent): void {
    const state = stateOf(rec);
    if (!TRANSITIONS[event.kind].from.includes(state)) {
        throw new IllegalTransition(state, event.kind, rec.id);
    }
}

/** The record after `event`, as a new object; an illegal move throws IllegalTransition. */
export function transition(rec: TurnRecord, event: TurnEvent): TurnRecord {
    allow(rec, event);
    return { ...rec, ...changes(rec, event) };
}

/** `transition`, written into the record in hand (the turn path shares one record object per step): only the fields the move writes. */
export function move(rec: TurnRecord, event: TurnEvent): void {
    allow(rec, event);
    Object.assign(rec, changes(rec, event));
}
