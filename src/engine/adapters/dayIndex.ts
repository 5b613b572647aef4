import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { processMemory } from '../../turns/processMemory';

export const DAY_MS = 86_400_000;

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);

/** `YYYY-MM-DD` in UTC: sorts as text in date order. */
export function dayOf(at: number): string {
    return new Date(at).toISOString().slice(0, 10);
}

/**
 * What this app process already did, per kind of record: the day it last indexed (so a
 * bucket's day is written once a day, not on every record) and the day it last expired
 * (nothing new becomes old enough to drop until the date changes). Losing it on a restart
 * costs one extra write and one extra sweep, nothing else.
 */
const indexedDay = processMemory.map<string, string>('dayIndex.indexedDay');
const expiredDay = processMemory.map<string, string>('dayIndex.expiredDay');

/** Tests start every case from an empty process. */
export function forgetDayMemo(): void {
    indexedDay.clear();
    expiredDay.clear();
}

/** True once per kind and day per process: whether an expiry sweep still has to run today. */
export function expiryDue(kind: string, now: number): boolean {
    return expiredDay.get(kind) !== dayOf(now);
}

export function expiryDone(kind: string, now: number): void {
    expiredDay.set(kind, dayOf(now));
}

/**
 * The days that have a bucket of records of one kind. Records carry a day association and
 * are removed a day at a time; without this list a sweep could only guess which days to
 * look at, and an app that was off longer than the guess left those days behind forever.
 * One record per day, with the same two associations in the same order every time, because
 * Rocket.Chat's `updateByAssociations` matches the exact association array.
 */
export class DayIndex {
    private readonly all: RocketChatAssociationRecord;

    constructor(
        private readonly kind: string,
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {
        this.all = misc(`hermes-${kind}-days`);
    }

    /** The association of one day's bucket of records. */
    public bucket(day: string): RocketChatAssociationRecord {
        return misc(`hermes-${this.kind}-day:${day}`);
    }

    /** Lists `day`; a write only the first time in this process and day. Call it before writing into the bucket. */
    public async note(day: string): Promise<void> {
        if (indexedDay.get(this.kind) === day) {
            return;
        }
        await this.add(day);
        indexedDay.set(this.kind, day);
    }

    /** Lists `day` unconditionally (for days found some other way). */
    public async add(day: string): Promise<void> {
        await this.write.updateByAssociations([this.all, this.entry(day)], { day }, true);
    }

    public async days(): Promise<string[]> {
        const rows = (await this.read.readByAssociation(this.all)) as Array<{ day?: unknown }>;
        return [...new Set(rows.map((r) => r.day).filter((d): d is string => typeof d === 'string'))].sort();
    }

    /**
     * Removes the whole bucket of every listed day before `cutoff` and takes those days off the
     * list: for records that simply expire with their day. Resolves with how many records went.
     */
    public async dropBefore(cutoff: string): Promise<number> {
        let dropped = 0;
        for (const day of await this.days()) {
            if (day < cutoff) {
                const removed = await this.write.removeByAssociation(this.bucket(day));
                dropped += Array.isArray(removed) ? removed.length : 0;
                await this.drop(day);
            }
        }
        return dropped;
    }

    /** Takes a day off the list (its bucket was emptied or needs no more looking at). */
    public async drop(day: string): Promise<void> {
        await this.write.removeByAssociation(this.entry(day));
    }

    private entry(day: string): RocketChatAssociationRecord {
        return misc(`hermes-${this.kind}-days:${day}`);
    }
}
