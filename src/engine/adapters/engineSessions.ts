import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { parseFrontier } from '../../context/frontier';
import { Cut } from '../../sessions/exchanges';
import { DAY_MS, DayIndex, dayOf, expiryDone, expiryDue } from './dayIndex';
import { sessionIdFor } from '../../sessions/sessionRecord';
import { PLATFORM } from '../../sessions/sessionKey';
import { freshRecord, SessionPort, SessionRecord } from '../../sessions/sessionRecord';

/** A record that says nothing a fresh one would not is dropped after this long without a save. */
export const SESSION_KEEP_DAYS = 30;

const KIND = 'sessions';

function association(key: string): RocketChatAssociationRecord {
    return new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, `hermes-session:${key}`);
}

type Stored = Partial<SessionRecord>;

function valid(stored: Stored | undefined): stored is Stored & { sessionId: string; generation: number } {
    return Boolean(stored) && typeof stored?.sessionId === 'string' && typeof stored.generation === 'number';
}

/**
 * Session records in the app's persistence, one per session key (so they survive restarts).
 * Each record also sits in the bucket of the day it was written (a {@link DayIndex}), which is
 * how expiry finds old ones without reading them all. While a save moves a record to a new
 * day there are briefly two copies; `get` takes the newer. Records written by 0.1.0 have no
 * day: they stay, and a later save shadows them.
 */
export class EngineSessions implements SessionPort {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
        private readonly now: () => number = Date.now,
    ) {}

    public async get(key: string): Promise<SessionRecord> {
        const rows = ((await this.read.readByAssociation(association(key))) as Stored[]).filter(valid);
        const stored = rows.sort((a, b) => (b.storedAt ?? -1) - (a.storedAt ?? -1))[0];
        if (!stored) {
            return freshRecord(key);
        }
        const record: SessionRecord = {
            key,
            generation: stored.generation,
            sessionId: stored.sessionId,
            turns: typeof stored.turns === 'number' ? stored.turns : 0,
        };
        const frontier = parseFrontier(stored.frontier);
        if (frontier) {
            record.frontier = frontier;
        }
        if (Array.isArray(stored.askers)) {
            record.askers = stored.askers.filter((a): a is string => typeof a === 'string');
        }
        for (const field of ['autoTitle', 'pendingTitle', 'recap'] as const) {
            if (typeof stored[field] === 'string') {
                record[field] = stored[field];
            }
        }
        if (typeof stored.lastActiveAt === 'number') {
            record.lastActiveAt = stored.lastActiveAt;
        }
        const cut = parseCut(stored.cut);
        if (cut) {
            record.cut = cut;
        }
        return typeof stored.storedAt === 'number' ? { ...record, storedAt: stored.storedAt } : record;
    }

    public async save(record: SessionRecord): Promise<void> {
        const now = this.now();
        const index = new DayIndex(KIND, this.read, this.write);
        const day = dayOf(now);
        await index.note(day);
        // The same two associations in the same order every time: updateByAssociations matches the exact array.
        await this.write.updateByAssociations([association(record.key), index.bucket(day)], { ...record, storedAt: now }, true);
        // Written first, dropped second: a read in between finds two copies and takes the newer, never none.
        if (record.storedAt !== undefined && dayOf(record.storedAt) !== day) {
            await this.write.removeByAssociations([association(record.key), index.bucket(dayOf(record.storedAt))]);
        }
    }

    /** See {@link expireSessions}. */
    public async expire(now = this.now()): Promise<number> {
        return expireSessions(this.read, this.write, now);
    }
}

/**
 * Whether dropping a record changes nothing that matters. A missing record reads as
 * generation 0 with the id derived from the key, so only such a record may go:
 * - generation > 0 (after /new or /reset): dropping it would send the next turn to the old
 *   generation's transcript, which the person asked to leave. Kept.
 * - an id Hermes rotated to (compression): dropping it would resume the pre-rotation
 *   transcript. Kept.
 * - a 1:1 DM's main session: its `turns` decides whether the next turn is seeded with
 *   earlier DM messages; dropping it would seed an ongoing conversation again. Kept (one per
 *   person, so they do not pile up the way thread and per-person room records do).
 * What is dropped loses only `turns` and a thread's frontier: for rooms and DM threads that
 * changes nothing Hermes receives (a DM thread looks for the bot's reply in the thread
 * instead); a thread idle that long is handed over again from its root on its next turn, as
 * to a new session (context/frontier.ts) — a bounded repeat after a month, not a loss.
 * The kept ones are few: each needs a person to run /new, or Hermes to rotate.
 */
function isDerivable(record: Stored & { key: string }): boolean {
    // A record with undone exchanges is kept too: dropping it would send them to Hermes again.
    return record.generation === 0 && record.sessionId === sessionIdFor(record.key, 0) && !isDmMainKey(record.key) && !parseCut(record.cut);
}

/** The undone exchanges as stored (sessions/exchanges.ts), or undefined when they are not there or not in that shape. */
function parseCut(value: unknown): Cut | undefined {
    const cut = value as Partial<Cut> | undefined;
    if (!cut || typeof cut.sessionId !== 'string' || !Array.isArray(cut.ranges)) {
        return undefined;
    }
    const ranges = cut.ranges.filter((r): r is [number, number] => Array.isArray(r) && r.length === 2 && r.every((n) => Number.isSafeInteger(n)));
    return ranges.length > 0 ? { sessionId: cut.sessionId, ranges } : undefined;
}

/**
 * A day's rows, one per key: the newest, the one `get` takes. With no unique index two instances
 * saving a key at once on a day both insert, and removal takes both copies: the decision is the
 * newest's (a /new in the other copy must not go because this one is derivable).
 */
function newestPerKey(rows: Stored[]): Array<Stored & { key: string; sessionId: string; generation: number }> {
    const newest = new Map<string, Stored & { key: string; sessionId: string; generation: number }>();
    for (const row of rows) {
        if (typeof row.key !== 'string' || !valid(row)) {
            continue;
        }
        const seen = newest.get(row.key);
        if (!seen || (row.storedAt ?? -1) > (seen.storedAt ?? -1)) {
            newest.set(row.key, { ...row, key: row.key });
        }
    }
    return [...newest.values()];
}

function isDmMainKey(key: string): boolean {
    return new RegExp(`^agent:main:${PLATFORM}:dm:[^:]+$`).test(key);
}

/**
 * Drops the session records written more than {@link SESSION_KEEP_DAYS} ago that
 * {@link isDerivable} says are safe to drop; a record saved since has moved to a newer day
 * and is not touched. Each old day is read once and then taken off the index, so kept records
 * are not read again. The sweep job may call it every run: after the first run of a day in
 * a process it returns without a call until the date changes. Resolves with how many went.
 */
export async function expireSessions(read: IPersistenceRead, write: IPersistence, now = Date.now()): Promise<number> {
    if (!expiryDue(KIND, now)) {
        return 0;
    }
    const index = new DayIndex(KIND, read, write);
    const cutoff = dayOf(now - SESSION_KEEP_DAYS * DAY_MS);
    let dropped = 0;
    for (const day of await index.days()) {
        if (day >= cutoff) {
            continue;
        }
        for (const row of newestPerKey((await read.readByAssociation(index.bucket(day))) as Stored[])) {
            if (isDerivable(row)) {
                // Both associations: only this day's copy, never a newer one of the same key.
                await write.removeByAssociations([association(row.key), index.bucket(day)]);
                dropped++;
            }
        }
        await index.drop(day);
    }
    expiryDone(KIND, now);
    return dropped;
}
