import { beingSent } from '../../turns/owner';
import {
    ALL,
    ALL_SENT,
    ALL_STOPS,
    PAYLOAD_FIELDS,
    Stored,
    TICKETS,
    byId,
    bySession,
    decisionOf,
    decisionsOf,
    payloadOf,
    receiptOf,
    sentOf,
    splitRecord,
    stopOf,
    ticketFor,
    waiterOf,
} from './turnLayout';
import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { GroupedRead } from './groupedRead';
import { ApprovalDecision, SentRecord, TurnRecord } from '../../turns/turnRecord';
import { TurnStore } from '../../turns/turnStore';
import { firstOfEach } from './firstOfEach';
import { processMemory } from '../../turns/processMemory';

/** Orphaned stop records are looked for at most this often (one read). */
const ORPHAN_STOPS_EVERY_MS = 10 * 60_000;
let orphansCheckedAt = 0;

/**
 * This process's reads of the tickets: the callers that ask while one is in flight share the
 * next, and its answer: one list, frozen (nobody changes a ticket; each caller filters its own
 * view). A copy each cost a burst of 1,000 turns 800 MB at once (`npm run load`).
 */
const ticketsRead = new GroupedRead<TurnRecord[]>();
/** The head each ticket of a tickets read was made from (fromTickets): kept as long as the ticket is. */
const headOfTicket = new WeakMap<TurnRecord, Stored>();

/** What this process last wrote or read of each turn's payload: an unchanged payload is not written again. Bounded. */
const knownPayloads = processMemory.map<string, string>('engineTurns.knownPayloads');
const MAX_KNOWN = 2_000;

function remember(known: Map<string, string>, id: string, value: string): void {
    known.delete(id);
    known.set(id, value);
    if (known.size > MAX_KNOWN) {
        known.delete(known.keys().next().value as string);
    }
}

/** Turn records in the app's persistence, found by id, by session, or all open ones. */
export class EngineTurns implements TurnStore {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async get(id: string): Promise<TurnRecord | undefined> {
        const found = (await this.read.readByAssociation(byId(id))) as Stored[];
        const head = found.find((r) => !r.payloadOf && !r.waiterFor);
        if (!head) {
            return undefined;
        }
        const merged: Stored = { ...head };
        const payload = found.find((r) => r.payloadOf === id);
        for (const f of PAYLOAD_FIELDS) {
            (merged as unknown as Record<string, unknown>)[f] = payload?.[f];
        }
        remember(knownPayloads, id, JSON.stringify(PAYLOAD_FIELDS.map((f) => payload?.[f])));
        return merged;
    }

    /**
     * Head and payload go out together (one round trip); a head whose payload a crash lost is
     * told apart by its missing text (turns/rebuildText.ts). `textKept`: the head alone; the
     * payload goes with the turn's next save (it is not known here).
     */
    public async save(record: TurnRecord, opts?: { textKept?: boolean }): Promise<void> {
        const textKept = opts?.textKept ?? false;
        const { head, payload } = splitRecord(record);
        // The same associations in the same order every time: updateByAssociations matches the exact array.
        const associations = [byId(record.id), bySession(record.sessionKey), ALL, receiptOf(record.id), TICKETS];
        const text = payload && JSON.stringify(PAYLOAD_FIELDS.map((f) => payload[f]));
        await Promise.all([
            this.write.updateByAssociations(associations, head, true),
            payload && !textKept && text !== knownPayloads.get(record.id)
                ? this.write.updateByAssociations([byId(record.id), payloadOf(record.id)], { ...payload, payloadOf: record.id }, true)
                : undefined,
        ]);
        if (text && !textKept) {
            remember(knownPayloads, record.id, text);
        }
    }

    /** Heads as tickets: what the session order and the slots look at. */
    public async tickets(opts: { inFlight?: boolean } = {}): Promise<TurnRecord[]> {
        return ticketsRead[opts.inFlight ? 'recent' : 'get'](async () => {
            const found = firstOfEach((await this.read.readByAssociation(TICKETS)) as Stored[]);
            const ticketOfHead = (r: Stored): TurnRecord => {
                const ticket = Object.freeze(ticketFor(r)) as unknown as TurnRecord;
                headOfTicket.set(ticket, r);
                return ticket;
            };
            return Object.freeze(found.map(ticketOfHead).filter((t) => t.phase !== 'done')) as TurnRecord[];
        });
    }

    public fromTickets(id: string, open: TurnRecord[]): TurnRecord | undefined {
        const ticket = open.find((t) => t.id === id);
        const head = ticket && headOfTicket.get(ticket);
        const text = knownPayloads.get(id);
        // Only a queued turn's text never changes once written (a finishing one's outcome does), unless
        // it took in follow-ups (turns/followUps.ts): another process's copy may predate that, so it is read.
        if (!head || head.phase !== 'queued' || head.merged || text === undefined) {
            return undefined;
        }
        // A copy: the tick changes its record, and the read's heads are shared by every caller of it.
        const merged = JSON.parse(JSON.stringify(head)) as Record<string, unknown>;
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

    /** Open turns as lists return them: the heads, once each (a stale copy would be restarted over the live one). */
    private heads(found: unknown[]): TurnRecord[] {
        return firstOfEach(found as Stored[])
            .filter((r) => r.phase !== 'done')
            .map((r) => ({ ...r }));
    }

    public async waitOn(waiterId: string, blockerIds: string[]): Promise<string[]> {
        const mark = (b: string) => ({ waiterFor: b, id: waiterId });
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
        const gone = blockerIds.filter((b, i) => !isOpen(b, found[i]));
        // A mark written after its turn was removed would stay forever.
        await Promise.all(gone.map((b) => this.write.removeByAssociation(waiterOf(b, waiterId))));
        return gone;
    }

    public async remove(id: string, also = { stop: true, decisions: true }): Promise<{ waiters: number }> {
        // Head, payload and the marks of turns waiting for it together.
        const removed = (await this.write.removeByAssociation(byId(id))) as Stored[] | undefined;
        knownPayloads.delete(id);
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
        const stops = (await this.read.readByAssociation(ALL_STOPS)) as Array<{ id?: string }>;
        for (const stop of stops) {
            if (stop.id && !(await this.get(stop.id))) {
                await this.write.removeByAssociation(stopOf(stop.id));
            }
        }
        // A handed-over submission whose sender died before anyone took it, or that was taken from memory after all.
        const sents = (await this.read.readByAssociation(ALL_SENT)) as Array<{ id?: string }>;
        for (const sent of sents) {
            if (sent.id && !beingSent((await this.get(sent.id)) ?? {})) {
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
