import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';

/** How long a message's receipt is kept: replays and restarts later than this are refused by age anyway. */
export const RECEIPT_DAYS = 2;

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const receipt = (messageId: string) => misc(`hermes-receipt:${messageId}`);
const day = (at: number) => misc(`hermes-receipts-day:${new Date(at).toISOString().slice(0, 10)}`);

/**
 * A persisted "this message was taken as a turn". Checked before a turn starts, so a replayed
 * event, a second server instance or a restarted app process never answers a message twice.
 */
export class Receipts {
    constructor(private readonly read: IPersistenceRead, private readonly write: IPersistence) {}

    /** True if this call took the message; false if it was already taken. */
    public async claim(messageId: string, now = Date.now()): Promise<boolean> {
        const existing = await this.read.readByAssociation(receipt(messageId));
        if (existing.length > 0) {
            return false;
        }
        await this.write.createWithAssociations({ messageId, at: now }, [receipt(messageId), day(now)]);
        return true;
    }

    /** Drops receipts from days older than the keep window (a day's bucket at a time). */
    public async expire(now = Date.now()): Promise<void> {
        for (let back = RECEIPT_DAYS + 1; back <= RECEIPT_DAYS + 7; back++) {
            await this.write.removeByAssociation(day(now - back * 86_400_000));
        }
    }
}
