import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { freshRecord, SessionPort, SessionRecord } from './sessionRecord';

function association(key: string): RocketChatAssociationRecord {
    return new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, `hermes-session:${key}`);
}

/** Session records in the app's persistence, one per session key (so they survive restarts). */
export class EngineSessions implements SessionPort {
    constructor(private readonly read: IPersistenceRead, private readonly write: IPersistence) {}

    public async get(key: string): Promise<SessionRecord> {
        const [stored] = (await this.read.readByAssociation(association(key))) as Array<Partial<SessionRecord>>;
        if (!stored || typeof stored.sessionId !== 'string' || typeof stored.generation !== 'number') {
            return freshRecord(key);
        }
        return { key, generation: stored.generation, sessionId: stored.sessionId, turns: typeof stored.turns === 'number' ? stored.turns : 0 };
    }

    public async save(record: SessionRecord): Promise<void> {
        await this.write.updateByAssociation(association(record.key), { ...record }, true);
    }
}
