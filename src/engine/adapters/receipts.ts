import { randomUUID } from 'crypto';
import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { DAY_MS, DayIndex, dayOf, expiryDone, expiryDue } from './dayIndex';

/** How long a message's receipt is kept: replays and restarts later than this are refused by age anyway. */
const RECEIPT_DAYS = 2;

const KIND = 'receipts';
const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const receipt = (messageId: string) => misc(`hermes-receipt:${messageId}`);

/**
 * A persisted "this message was taken as a turn". Checked before a turn starts, so a replayed
 * event, a second server instance or a restarted app process never answers a message twice.
 * Receipts are written in day buckets (`hermes-receipts-day:<day>`), and the days are listed
 * in a {@link DayIndex}, so expiry finds every old bucket however long the app was off.
 */
export class Receipts {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    /**
     * True if this call took the id; false if it was already taken. Persistence has no
     * conditional write, and two instances' reads can both come before either's write (separate
     * round trips to MongoDB): each writes its receipt with a token of its own and reads them
     * back, and the first stored wins. The server reads records in natural order, which is the
     * order they were inserted in (WiredTiger's record ids grow), so both see the same first.
     */
    public async claim(messageId: string, now = Date.now()): Promise<boolean> {
        const existing = await this.read.readByAssociation(receipt(messageId));
        if (existing.length > 0) {
            return false;
        }
        return this.claimFirst(messageId, now);
    }

    /**
     * `claim` without the read before the write: for an id only racing callers use at once (a
     * turn's send, turns/submit.ts), where a taken id is the rare case. One write and one read.
     */
    public async claimFirst(id: string, now = Date.now()): Promise<boolean> {
        const index = new DayIndex(KIND, this.read, this.write);
        // Listed before the bucket gets its record: a listed empty day costs nothing, an unlisted bucket would stay forever.
        await index.note(dayOf(now));
        const by = randomUUID();
        await this.write.createWithAssociations({ messageId: id, at: now, by }, [receipt(id), index.bucket(dayOf(now))]);
        const [first] = (await this.read.readByAssociation(receipt(id))) as Array<{ by?: unknown }>;
        return first?.by === by;
    }

    /** When the id was claimed (ms), if it was: the earliest of its receipts (two instances may both have written one). */
    public async claimedAt(messageId: string): Promise<number | undefined> {
        const times = ((await this.read.readByAssociation(receipt(messageId))) as Array<{ at?: unknown }>)
            .map((r) => r.at)
            .filter((at): at is number => typeof at === 'number');
        return times.length > 0 ? Math.min(...times) : undefined;
    }

    /** Whether the message was already taken (by this or any process, before or after a restart). */
    public async taken(messageId: string): Promise<boolean> {
        return (await this.read.readByAssociation(receipt(messageId))).length > 0;
    }

    /**
     * Records that the message was taken. Written after the turn record (or after a command's
     * answer), so a crash in between leaves a turn to finish, never a claimed message with none.
     */
    public async record(messageId: string, now = Date.now()): Promise<void> {
        const index = new DayIndex(KIND, this.read, this.write);
        await index.note(dayOf(now));
        await this.write.createWithAssociations({ messageId, at: now }, [receipt(messageId), index.bucket(dayOf(now))]);
    }

    /** Drops receipts from days older than the keep window (see {@link expireReceipts}). */
    public async expire(now = Date.now()): Promise<void> {
        await expireReceipts(this.read, this.write, now);
    }
}

/**
 * Removes every receipt bucket older than {@link RECEIPT_DAYS} (today and the two days before
 * are kept), whatever the gap since the last sweep. The sweep job may call it every run: after
 * the first run of a day in a process it returns without a call until the date changes.
 */
export async function expireReceipts(read: IPersistenceRead, write: IPersistence, now = Date.now()): Promise<void> {
    if (!expiryDue(KIND, now)) {
        return;
    }
    const index = new DayIndex(KIND, read, write);
    const cutoff = dayOf(now - RECEIPT_DAYS * DAY_MS);
    for (const day of await index.days()) {
        if (day < cutoff) {
            await write.removeByAssociation(index.bucket(day));
            await index.drop(day);
        }
    }
    expiryDone(KIND, now);
}
