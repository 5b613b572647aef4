import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { ApprovalDecision, SentRecord, TurnRecord, TurnStore } from '../../turns/turnRecord';

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const byId = (id: string) => misc(`hermes-turn:${id}`);
const bySession = (key: string) => misc(`hermes-turn-session:${key}`);
const ALL = misc('hermes-turns');
const stopOf = (id: string) => misc(`hermes-turn-stop:${id}`);
const ALL_STOPS = misc('hermes-turn-stops');
/** Orphaned stop records are looked for at most this often (one read). */
const ORPHAN_STOPS_EVERY_MS = 10 * 60_000;
let orphansCheckedAt = 0;
const decisionsOf = (id: string) => misc(`hermes-turn-approval:${id}`);
const sentOf = (id: string) => misc(`hermes-turn-sent:${id}`);
const ALL_SENT = misc('hermes-turn-sents');
const decisionOf = (id: string, messageId: string) => misc(`hermes-turn-approval:${id}:${messageId}`);

/** Turn records in the app's persistence, found by id, by session, or all open ones. */
export class EngineTurns implements TurnStore {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async get(id: string): Promise<TurnRecord | undefined> {
        const [record] = (await this.read.readByAssociation(byId(id))) as TurnRecord[];
        return record;
    }

    public async save(record: TurnRecord): Promise<void> {
        await this.write.updateByAssociations([byId(record.id), bySession(record.sessionKey), ALL], { ...record }, true);
    }

    public async openInSession(sessionKey: string): Promise<TurnRecord[]> {
        return ((await this.read.readByAssociation(bySession(sessionKey))) as TurnRecord[]).filter((r) => r.phase !== 'done');
    }

    public async open(): Promise<TurnRecord[]> {
        return ((await this.read.readByAssociation(ALL)) as TurnRecord[]).filter((r) => r.phase !== 'done');
    }

    public async remove(id: string, also = { stop: true, decisions: true }): Promise<void> {
        await this.write.removeByAssociation(byId(id));
        if (also.stop) {
            await this.write.removeByAssociation(stopOf(id));
        }
        if (also.decisions) {
            await this.write.removeByAssociation(decisionsOf(id));
        }
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
