/* How a turn is laid out in the app's persistence: its records, their associations, and its ticket. */

import { beingSent } from '../../turns/owner';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { TurnRecord } from '../../turns/turnRecord';

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
export const byId = (id: string) => misc(`hermes-turn:${id}`);
export const bySession = (key: string) => misc(`hermes-turn-session:${key}`);
export const ALL = misc('hermes-turns');
export const stopOf = (id: string) => misc(`hermes-turn-stop:${id}`);
export const ALL_STOPS = misc('hermes-turn-stops');
export const decisionsOf = (id: string) => misc(`hermes-turn-approval:${id}`);
export const sentOf = (id: string) => misc(`hermes-turn-sent:${id}`);
export const ALL_SENT = misc('hermes-turn-sents');
export const decisionOf = (id: string, messageId: string) => misc(`hermes-turn-approval:${id}:${messageId}`);

/**
 * A turn record is two records: its head (everything the turn's state machine, the sweep, the
 * session order and max_parallel_turns look at) and its payload (the text sent to Hermes and
 * the outcome being posted: the bulk). Reads of many turns (every open turn, a session's
 * open turns, the tickets) return heads only, so they stay small however long the questions
 * are; a turn read by id returns both (one call: both carry the turn's association), and so
 * does its removal. The head also carries the message's receipt association (receipts.ts
 * `taken`): an open turn is its own receipt.
 */
export const payloadOf = (id: string) => misc(`hermes-turn-payload:${id}`);
/**
 * The heads carry the tickets' association too: a head is a few hundred bytes (no text), so
 * the list every start and end of a turn reads stays small under a backlog, and a turn costs
 * one write fewer when it is stored and when it is sent than with a ticket of its own.
 */
export const TICKETS = misc('hermes-turn-tickets');
export const receiptOf = (id: string) => misc(`hermes-receipt:${id}`);
/** A turn waiting for another marks it (turns/waiters.ts): the mark carries the other's id association, so its removal returns it. */
export const waiterOf = (blocker: string, waiter: string) => misc(`hermes-turn-waiter:${blocker}:${waiter}`);
export const PAYLOAD_FIELDS = ['user', 'system', 'recap', 'delivery'] as const;
export type Payload = Pick<TurnRecord, (typeof PAYLOAD_FIELDS)[number]>;
/** What a turn's id association finds: its head, its payload (`payloadOf`), or the marks of turns waiting for it (`waiterFor`). */
export type Stored = TurnRecord & { payloadOf?: string; waiterFor?: string };

/**
 * What the ticket of a turn says: a turn being sent, or holding a slot, counts as running; a run
 * open at Hermes is named. A fresh claim (turns/freshClaim.ts) is queued, and says whose it is.
 */
export function ticketFor(r: TurnRecord): Record<string, unknown> {
    const running = !r.owner?.fresh && (r.phase === 'running' || beingSent(r) || r.slot?.state === 'running');
    return {
        ticketOf: r.id,
        id: r.id,
        seq: r.seq,
        chain: r.chain,
        sessionKey: r.sessionKey,
        // Whose it is: a follow-up joins only the same person's turn (turns/followUps.ts).
        askerId: r.askerId,
        followUp: r.followUp,
        phase: running ? 'running' : r.phase,
        slot: r.slot,
        waiting: r.waiting,
        // Its run is open at Hermes (retryPolicy: a 429 while the app's own runs are there is back-pressure).
        runId: r.runId,
        // Whether its end may skip the tickets read: waiters mark only such turns (turns/waiters.ts).
        alone: r.alone,
        owner: r.owner?.fresh ? r.owner : undefined,
    };
}

export function splitRecord(record: TurnRecord): { head: Stored; payload?: Payload } {
    const head: Stored = { ...record };
    const payload: Record<string, unknown> = {};
    let whole = false;
    for (const f of PAYLOAD_FIELDS) {
        payload[f] = record[f];
        whole = whole || record[f] !== undefined;
        delete head[f];
    }
    // A head read from a list carries no payload: saving it leaves the payload as it is.
    return { head, payload: whole ? (payload as Payload) : undefined };
}
