import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { GroupedRead } from './groupedRead';
import { ApprovalDecision, SentRecord, TurnRecord } from '../../turns/turnRecord';
import { TurnStore } from '../../turns/turnStore';
import { firstOfEach } from './firstOfEach';

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const byId = (id: string) => misc(`hermes-turn:${id}`);
const bySession = (key: string) => misc(`hermes-turn-session:${key}`);
const ALL = misc('hermes-turns');
const stopOf = (id: string) => misc(`hermes-turn-stop:${id}`);
const ALL_STOPS = misc('hermes-turn-stops');
/** Orphaned stop records are looked for at most this often (one read). */
const ORPHAN_STOPS_EVERY_MS = 10 * 60_000;
let orphansCheckedAt = 0;
/** Slot claims of an earlier version were records of their own (now a field of the turn record): dropped once per process. */
const LEGACY_SLOTS = misc('hermes-slots');
let legacySlotsDropped = false;
const decisionsOf = (id: string) => misc(`hermes-turn-approval:${id}`);
const sentOf = (id: string) => misc(`hermes-turn-sent:${id}`);
const ALL_SENT = misc('hermes-turn-sents');
const decisionOf = (id: string, messageId: string) => misc(`hermes-turn-approval:${id}:${messageId}`);

/**
 * A turn record is two records: its head (everything the turn's state machine, the sweep, the
 * session order and max_parallel_turns look at) and its payload (the text sent to Hermes and
 * the outcome being posted: the bulk). Reads of many turns (every open turn, a session's
 * open turns, the tickets) return heads only, so they stay small however long the questions
 * are; a turn read by id returns both (one call: both carry the turn's association), and so
 * does its removal. The head also carries the message's receipt association (receipts.ts
 * `taken`): an open turn is its own receipt.
 *
 * Records of earlier versions stay in their shape when saved again: one record of the whole
 * turn, or a head, a payload and a separate ticket (`ticketOf`).
 */
const payloadOf = (id: string) => misc(`hermes-turn-payload:${id}`);
/**
 * The heads carry the tickets' association too: a head is a few hundred bytes (no text), so
 * the list every start and end of a turn reads stays small under a backlog, and a turn costs
 * one write fewer when it is stored and when it is sent than with a ticket of its own.
 */
const ticketOf = (id: string) => misc(`hermes-turn-ticket:${id}`);
const TICKETS = misc('hermes-turn-tickets');
const receiptOf = (id: string) => misc(`hermes-receipt:${id}`);
/** A turn waiting for another marks it (turns/waiters.ts): the mark carries the other's id association, so its removal returns it. */
const waiterOf = (blocker: string, waiter: string) => misc(`hermes-turn-waiter:${blocker}:${waiter}`);
const PAYLOAD_FIELDS = ['user', 'system', 'recap', 'delivery'] as const;
type Payload = Pick<TurnRecord, (typeof PAYLOAD_FIELDS)[number]>;
/** `split`: a head (its payload apart); `listed`: a head that is its own ticket (this layout). */
type Stored = TurnRecord & { split?: boolean; listed?: boolean; payloadOf?: string; ticketOf?: string; waiterFor?: string };

/**
 * What the ticket of a turn says: a turn being sent, or holding a slot, counts as running; a run
 * open at Hermes is named. A fresh claim (turns/freshClaim.ts) is queued, and says whose it is.
 */
function ticketFor(r: TurnRecord): Record<string, unknown> {
    const running = !r.fresh && (r.phase === 'running' || Boolean(r.submitting) || r.slot?.state === 'running');
    return {
        ticketOf: r.id,
        id: r.id,
        seq: r.seq,
        chain: r.chain,
        sessionKey: r.sessionKey,
        phase: running ? 'running' : r.phase,
        slot: r.slot,
        waiting: r.waiting,
        // Its run is open at Hermes (retryPolicy: a 429 while the app's own runs are there is back-pressure).
        runId: r.runId,
        // Whether its end may skip the tickets read: waiters mark only such turns (turns/waiters.ts).
        alone: r.alone,
        fresh: r.fresh,
        submitting: r.fresh ? r.submitting : undefined,
    };
}

/**
 * This process's reads of the tickets: the callers that ask while one is in flight share the
 * next, and its answer: one list, frozen (nobody changes a ticket; each caller filters its own
 * view). A copy each cost a burst of 1,000 turns 800 MB at once (`npm run load`).
 */
const ticketsRead = new GroupedRead<TurnRecord[]>();
/** The head each ticket of a tickets read was made from (fromTickets): kept as long as the ticket is. */
const headOfTicket = new WeakMap<TurnRecord, Stored>();

/** Tickets without a turn at the last sweep. */
let orphanSuspects = new Set<string>();
/** The ticket this process last wrote of each turn: an unchanged one is not written again. Bounded. */
const knownTickets = new Map<string, string>();

/** What this process last wrote or read of each turn's payload: an unchanged payload is not written again. Bounded. */
const knownPayloads = new Map<string, string>();
const MAX_KNOWN = 2_000;
/** Turns of earlier versions seen by this process, saved in their own shape: one record each, or a head with a separate ticket. */
const wholeRecords = new Set<string>();
const ticketedHeads = new Set<string>();

function remember(known: Map<string, string>, id: string, value: string): void {
    known.delete(id);
    known.set(id, value);
    if (known.size > MAX_KNOWN) {
        known.delete(known.keys().next().value as string);
    }
}

function splitRecord(record: TurnRecord): { head: Stored; payload?: Payload } {
    const head: Stored = { ...record, split: true, listed: true };
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

/**
 * A stored head (or whole record) as the turn store returns it: the layout's marks stripped,
 * and a turn of an earlier version noted, so that saving it keeps its shape.
 */
function asRead(r: Stored): Stored {
    if (!r.split) {
        wholeRecords.add(r.id);
        return r;
    }
    if (!r.listed) {
        ticketedHeads.add(r.id);
    }
    const head: Stored = { ...r };
    delete head.split;
    delete head.listed;
    return head;
}

/** Turn records in the app's persistence, found by id, by session, or all open ones. */
export class EngineTurns implements TurnStore {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async get(id: string): Promise<TurnRecord | undefined> {
        const found = (await this.read.readByAssociation(byId(id))) as Stored[];
        const head = found.find((r) => !r.payloadOf && !r.ticketOf && !r.waiterFor);
        if (!head) {
            return undefined;
        }
        const merged = asRead(head);
        if (!head.split) {
            return merged;
        }
        const payload = found.find((r) => r.payloadOf === id);
        for (const f of PAYLOAD_FIELDS) {
            (merged as unknown as Record<string, unknown>)[f] = payload?.[f];
        }
        remember(knownPayloads, id, JSON.stringify(PAYLOAD_FIELDS.map((f) => payload?.[f])));
        return merged;
    }

    public async save(record: TurnRecord, opts?: { textKept?: boolean }): Promise<void> {
        if (wholeRecords.has(record.id) || ticketedHeads.has(record.id)) {
            return this.saveEarlier(record);
        }
        await this.writeSplit(record, true, undefined, opts?.textKept);
    }

    /**
     * Head and payload go out together (one round trip), with `beside` (an earlier version's
     * ticket); a head whose payload a crash lost is told apart by its missing text
     * (turns/submit.ts). `listed`: the head carries the tickets' association (this layout).
     * `textKept`: the head alone; the payload goes with the turn's next save (it is not known here).
     */
    private async writeSplit(record: TurnRecord, listed: boolean, beside?: Promise<unknown>, textKept = false): Promise<void> {
        const { head, payload } = splitRecord(record);
        // The same associations in the same order every time: updateByAssociations matches the exact array.
        const associations = [byId(record.id), bySession(record.sessionKey), ALL, receiptOf(record.id)];
        if (listed) {
            associations.push(TICKETS);
        } else {
            delete head.listed;
        }
        const text = payload && JSON.stringify(PAYLOAD_FIELDS.map((f) => payload[f]));
        await Promise.all([
            this.write.updateByAssociations(associations, head, true),
            payload && !textKept && text !== knownPayloads.get(record.id)
                ? this.write.updateByAssociations([byId(record.id), payloadOf(record.id)], { ...payload, payloadOf: record.id }, true)
                : undefined,
            beside,
        ]);
        if (text && !textKept) {
            remember(knownPayloads, record.id, text);
        }
    }

    /** A turn an earlier version stored, saved in its shape: its ticket beside it, written when it changed. */
    private async saveEarlier(record: TurnRecord): Promise<void> {
        const ticket = ticketFor(record);
        const ticketText = JSON.stringify(ticket);
        const ticketWrite =
            ticketText !== knownTickets.get(record.id)
                ? this.write.updateByAssociations([byId(record.id), ticketOf(record.id), TICKETS], ticket, true)
                : undefined;
        if (wholeRecords.has(record.id)) {
            await Promise.all([this.write.updateByAssociations([byId(record.id), bySession(record.sessionKey), ALL], { ...record }, true), ticketWrite]);
        } else {
            await this.writeSplit(record, false, ticketWrite);
        }
        remember(knownTickets, record.id, ticketText);
    }

    /** Tickets without a turn, seen so in two sweeps in a row (a ticket can be written a moment before its head). */
    public async dropOrphanTickets(open: Set<string>): Promise<void> {
        const orphans = (await this.tickets()).map((t) => t.id).filter((id) => !open.has(id));
        for (const id of orphans.filter((o) => orphanSuspects.has(o))) {
            await this.write.removeByAssociation(ticketOf(id));
        }
        orphanSuspects = new Set(orphans);
    }

    /** Heads as tickets (what the session order and the slots look at), and the tickets of earlier versions' turns. */
    public async tickets(opts: { inFlight?: boolean } = {}): Promise<TurnRecord[]> {
        return ticketsRead[opts.inFlight ? 'recent' : 'get'](async () => {
            const found = firstOfEach((await this.read.readByAssociation(TICKETS)) as Stored[]);
            const ticketOfHead = (r: Stored): TurnRecord => {
                const ticket = Object.freeze(ticketFor(r)) as unknown as TurnRecord;
                headOfTicket.set(ticket, r);
                return ticket;
            };
            return Object.freeze(found.map((r) => (r.ticketOf ? Object.freeze(r) : ticketOfHead(r))).filter((t) => t.phase !== 'done')) as TurnRecord[];
        });
    }

    public fromTickets(id: string, open: TurnRecord[]): TurnRecord | undefined {
        const ticket = open.find((t) => t.id === id);
        const head = ticket && headOfTicket.get(ticket);
        const text = knownPayloads.get(id);
        // Only a queued turn's text never changes once written (a finishing one's outcome does).
        if (!head || head.phase !== 'queued' || text === undefined) {
            return undefined;
        }
        // A copy: the tick changes its record, and the read's heads are shared by every caller of it.
        const merged = JSON.parse(JSON.stringify(asRead(head))) as Record<string, unknown>;
        const values = JSON.parse(text) as unknown[];
        PAYLOAD_FIELDS.forEach((f, i) => {
            merged[f] = values[i] ?? undefined;
        });
        return merged as unknown as TurnRecord;
    }

    public async openInSession(sessionKey: string): Promise<TurnRecord[]> {
        return this.heads(await this.read.readByAssociation(bySession(sessionKey)));
    }

    public async open(): Promise<TurnRecord[]> {
        return this.heads(await this.read.readByAssociation(ALL));
    }

    /** Open turns as lists return them: the heads (or whole records of earlier versions), once each (a stale copy would be restarted over the live one). */
    private heads(found: unknown[]): TurnRecord[] {
        return firstOfEach(found as Stored[])
            .filter((r) => r.phase !== 'done')
            .map(asRead);
    }

    public async waitOn(waiterId: string, blockerIds: string[]): Promise<string[]> {
        // `ticketOf` too: a process of the previous version (a rolling update) reading the blocker by
        // id skips records that carry it, so it never takes a mark for the turn's head.
        const mark = (b: string) => ({ waiterFor: b, id: waiterId, ticketOf: `mark:${waiterId}` });
        await Promise.all(blockerIds.map((b) => this.write.updateByAssociations([byId(b), waiterOf(b, waiterId)], mark(b), true)));
        // Read after the marks are written: a blocker still open now is removed later, and its
        // removal returns the mark. By its receipt association (its head, or the usage row of a
        // finished turn): one small read per blocker, not the list of every open turn.
        const found = await Promise.all(blockerIds.map((b) => this.read.readByAssociation(receiptOf(b)) as Promise<Stored[]>));
        // A blocker waiting itself by now took its fresh claim back (turns/freshClaim.ts): as good as gone.
        // Its first head only: a stale copy beside it (no unique index, see firstOfEach) may still say it is not waiting.
        const isOpen = (b: string, records: Stored[]) => {
            const head = records.find((r) => r.id === b && typeof r.sessionKey === 'string');
            return head !== undefined && head.phase !== 'done' && !head.waiting;
        };
        const unseen = blockerIds.filter((b, i) => !isOpen(b, found[i]));
        // A turn stored whole by an earlier version has no receipt association: looked up by id.
        const byIds = await Promise.all(unseen.map((b) => this.read.readByAssociation(byId(b)) as Promise<Stored[]>));
        const gone = unseen.filter((b, i) => !isOpen(b, byIds[i]));
        // A mark written after its turn was removed would stay forever.
        await Promise.all(gone.map((b) => this.write.removeByAssociation(waiterOf(b, waiterId))));
        return gone;
    }

    public async remove(id: string, also = { stop: true, decisions: true }): Promise<{ waiters: number }> {
        // Head, payload and the marks of turns waiting for it together.
        const removed = (await this.write.removeByAssociation(byId(id))) as Stored[] | undefined;
        knownPayloads.delete(id);
        knownTickets.delete(id);
        wholeRecords.delete(id);
        ticketedHeads.delete(id);
        if (also.stop) {
            await this.write.removeByAssociation(stopOf(id));
        }
        if (also.decisions) {
            await this.write.removeByAssociation(decisionsOf(id));
        }
        return { waiters: (removed ?? []).filter((r) => r.waiterFor === id).length };
    }

    /**
     * A stop asked for just as its turn ended leaves a record no turn removes: drop stop
     * records whose turn is gone, and handed-over submissions nobody is waiting for (at most
     * every ten minutes, two reads, plus one per orphan).
     */
    public async removeOrphanStops(now = Date.now()): Promise<void> {
        if (now - orphansCheckedAt < ORPHAN_STOPS_EVERY_MS) {
            return;
        }
        orphansCheckedAt = now;
        if (!legacySlotsDropped) {
            legacySlotsDropped = true;
            await this.write.removeByAssociation(LEGACY_SLOTS);
        }
        const stops = (await this.read.readByAssociation(ALL_STOPS)) as Array<{ id?: string }>;
        for (const stop of stops) {
            if (stop.id && !(await this.get(stop.id))) {
                await this.write.removeByAssociation(stopOf(stop.id));
            }
        }
        // A handed-over submission whose sender died before anyone took it, or that was taken from memory after all.
        const sents = (await this.read.readByAssociation(ALL_SENT)) as Array<{ id?: string }>;
        for (const sent of sents) {
            if (sent.id && !(await this.get(sent.id))?.submitting) {
                await this.write.removeByAssociation(sentOf(sent.id));
            }
        }
    }

    public async recordSent(id: string, sent: SentRecord): Promise<void> {
        await this.write.updateByAssociations([sentOf(id), ALL_SENT], { ...sent, id }, true);
    }

    public async sent(id: string): Promise<SentRecord | undefined> {
        const [found] = (await this.read.readByAssociation(sentOf(id))) as SentRecord[];
        return found;
    }

    public async dropSent(id: string): Promise<void> {
        await this.write.removeByAssociation(sentOf(id));
    }

    public async decide(turnId: string, decision: ApprovalDecision): Promise<void> {
        await this.write.updateByAssociations([decisionOf(turnId, decision.messageId), decisionsOf(turnId)], { ...decision }, true);
    }

    public async decision(turnId: string, messageId: string): Promise<ApprovalDecision | undefined> {
        const [found] = (await this.read.readByAssociation(decisionOf(turnId, messageId))) as ApprovalDecision[];
        return found;
    }

    public async requestStop(id: string, by: string): Promise<void> {
        await this.write.updateByAssociations([stopOf(id), ALL_STOPS], { id, by }, true);
    }

    public async stopRequest(id: string): Promise<string | undefined> {
        const [stop] = (await this.read.readByAssociation(stopOf(id))) as Array<{ by?: string }>;
        return typeof stop?.by === 'string' ? stop.by : undefined;
    }
}
