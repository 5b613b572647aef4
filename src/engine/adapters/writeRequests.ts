import { createHash } from 'crypto';
import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { WriteRequest } from '../../mcp/writeRequest';
import { askerRing } from './askerTokens';

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const byId = (id: string) => misc(`hermes-write:${id}`);
const byToken = (digest: string) => misc(`hermes-write-token:${digest}`);

/** What a request is filed under instead of its asker token: enough to count a token's requests, never usable as one. */
export function tokenDigest(token: string): string {
    return createHash('sha256').update(token).digest('hex').slice(0, 32);
}

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

    /** The requests proposed with the token whose digest this is. */
    public async ofToken(digest: string): Promise<WriteRequest[]> {
        return (await this.read.readByAssociation(byToken(digest))) as WriteRequest[];
    }

    public async save(rec: WriteRequest): Promise<void> {
        const filed = rec.tokenDigest ? [byId(rec.id), askerRing(rec.createdAt), byToken(rec.tokenDigest)] : [byId(rec.id), askerRing(rec.createdAt)];
        await this.write.updateByAssociations(filed, rec, true);
    }
}
