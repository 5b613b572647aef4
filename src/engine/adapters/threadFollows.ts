import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { FollowPort } from '../../follow/threadFollow';
import { DAY_MS, DayIndex, dayOf, expiryDone, expiryDue } from './dayIndex';

/** A thread nobody asked the bot about for this long is no longer followed (and its record goes). */
export const FOLLOW_KEEP_DAYS = 30;
/** The askers a followed thread remembers at most (the oldest drop out). */
const MAX_ASKERS = 200;

const KIND = 'follows';
const follow = (threadId: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, `hermes-follow:${threadId}`);

interface Stored {
    threadId: string;
    askers: string[];
    at: number;
}

/**
 * Followed threads in the app's persistence, one record per thread, kept in the bucket of the
 * day it was last written (a {@link DayIndex}) so expiry finds old ones without reading all.
 * Written only when an answer adds a new asker; a message in a followed thread reads one record.
 */
export class ThreadFollows implements FollowPort {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
        private readonly now: () => number = Date.now,
    ) {}

    public async askers(threadId: string): Promise<string[] | undefined> {
        return (await this.stored(threadId))?.askers;
    }

    public async add(threadId: string, askerId: string): Promise<void> {
        const stored = await this.stored(threadId);
        if (stored?.askers.includes(askerId)) {
            return;
        }
        const now = this.now();
        const index = new DayIndex(KIND, this.read, this.write);
        await index.note(dayOf(now));
        const askers = [...(stored?.askers ?? []), askerId].slice(-MAX_ASKERS);
        await this.write.updateByAssociations([follow(threadId), index.bucket(dayOf(now))], { threadId, askers, at: now }, true);
        for (const day of stored?.days ?? []) {
            if (day !== dayOf(now)) {
                await this.write.removeByAssociations([follow(threadId), index.bucket(day)]);
            }
        }
    }

    public async remove(threadId: string): Promise<boolean> {
        const removed = await this.write.removeByAssociation(follow(threadId));
        return Array.isArray(removed) && removed.length > 0;
    }

    /**
     * The thread's askers: those of every record still in the keep window, oldest record first.
     * Usually one record; a save moving it to a new day leaves two for a moment; and with no
     * unique index, two instances adding askers at once on a day without a record both insert,
     * each holding its own asker, and the next write goes to the first only: so the union.
     * `days`: the days of those records, whose copies a save to another day removes.
     */
    private async stored(threadId: string): Promise<(Stored & { days: string[] }) | undefined> {
        const rows = (await this.read.readByAssociation(follow(threadId))) as Array<Partial<Stored>>;
        const kept = rows
            .filter((r): r is Stored => Array.isArray(r.askers) && typeof r.at === 'number' && this.now() - r.at < FOLLOW_KEEP_DAYS * DAY_MS)
            .sort((a, b) => a.at - b.at);
        if (kept.length === 0) {
            return undefined;
        }
        const askers = [...new Set(kept.flatMap((r) => r.askers))];
        return { threadId, askers, at: kept[kept.length - 1].at, days: [...new Set(kept.map((r) => dayOf(r.at)))] };
    }
}

/** Drops follow records not written for {@link FOLLOW_KEEP_DAYS}: each old day read once, then taken off the index. */
export async function expireFollows(read: IPersistenceRead, write: IPersistence, now = Date.now()): Promise<number> {
    if (!expiryDue(KIND, now)) {
        return 0;
    }
    const dropped = await new DayIndex(KIND, read, write).dropBefore(dayOf(now - FOLLOW_KEEP_DAYS * DAY_MS));
    expiryDone(KIND, now);
    return dropped;
}
