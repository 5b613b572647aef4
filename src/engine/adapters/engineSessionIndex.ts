import { createHash } from 'crypto';
import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { OwnedSession, SessionIndexPort } from '../../sessions/sessionIndex';

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
/** Keys are long and contain colons: a digest names a scope in an association. */
const scopeId = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 32);
const owner = (userId: string) => misc(`hermes-owner:${userId}`);
const scope = (key: string) => misc(`hermes-scope:${scopeId(key)}`);
const ofSession = (sessionId: string) => misc(`hermes-owned-session:${sessionId}`);
const entry = (userId: string, sessionId: string, key: string) => misc(`hermes-owned:${userId}:${sessionId}:${scopeId(key)}`);

function valid(row: Partial<OwnedSession>): row is OwnedSession {
    return typeof row.sessionId === 'string' && typeof row.key === 'string' && typeof row.roomId === 'string' && typeof row.startedAt === 'number';
}

/**
 * The session index in the app's persistence: one record per owner, session and scope, found
 * by owner (`/hermes sessions all`), by scope (`/hermes sessions`) or by session (where
 * `/hermes resume` looks for the conversations a session is current in). Written when a
 * person's first turn in a session is answered (once per person and session), never per turn.
 */
export class EngineSessionIndex implements SessionIndexPort {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async owned(userId: string): Promise<OwnedSession[]> {
        return ((await this.read.readByAssociation(owner(userId))) as Array<Partial<OwnedSession>>).filter(valid);
    }

    public async inScope(key: string): Promise<OwnedSession[]> {
        return ((await this.read.readByAssociation(scope(key))) as Array<Partial<OwnedSession>>).filter(valid).filter((e) => e.key === key);
    }

    public async ofSession(sessionId: string): Promise<OwnedSession[]> {
        return ((await this.read.readByAssociation(ofSession(sessionId))) as Array<Partial<OwnedSession>>)
            .filter(valid)
            .filter((e) => e.sessionId === sessionId);
    }

    public async add(userId: string, session: OwnedSession): Promise<void> {
        // The same four associations in the same order every time: updateByAssociations matches the
        // exact array.
        await this.write.updateByAssociations(
            [entry(userId, session.sessionId, session.key), owner(userId), scope(session.key), ofSession(session.sessionId)],
            { ...session, userId },
            true,
        );
    }
}
