import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { WriteRequest } from '../../mcp/writeRequest';
import { askerRing } from './askerTokens';

const byId = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, `hermes-write:${id}`);

/**
 * The MCP write tools' requests, one record each, written in place. They live minutes and sit
 * in the asker tokens' day buckets, so the daily sweep that empties those removes them too.
 */
export class WriteRequests {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async get(id: string): Promise<WriteRequest | undefined> {
        const [rec] = (await this.read.readByAssociation(byId(id))) as WriteRequest[];
        return rec;
    }

    public async save(rec: WriteRequest): Promise<void> {
        await this.write.updateByAssociations([byId(rec.id), askerRing(rec.createdAt)], rec, true);
    }
}
