import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { add, ExchangeFacts, FinishedTurn, Totals, Usage, UsagePort, ZERO } from '../../usage/usage';
import { DAY_MS, DayIndex, dayOf, expiryDone, expiryDue } from './dayIndex';

/** Daily totals are kept this long (a month's usage, and a few days more). */
const USAGE_KEEP_DAYS = 35;

export const USAGE_KIND = 'usage';
const KIND = USAGE_KIND;
const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const byUser = (day: string, userId: string) => misc(`hermes-usage-user:${day}:${userId}`);
const byRoom = (day: string, roomId: string) => misc(`hermes-usage-room:${day}:${roomId}`);

type Cell = Totals & { day: string; userId: string; roomId: string };

/** A finished turn's row: its counts, its receipt, and for an answer, its messages, session and run (and what retry and undo find it by). */
export type UsageRow = Cell & { messageId: string; answers?: string[]; sessionId?: string; runId?: string; exchange?: ExchangeFacts };

/** How an answer's message finds its turn's row. */
export const answerOf = (answerId: string) => misc(`hermes-answer:${answerId}`);

/** How a conversation finds its answered turns' rows, and the marks of the ones undone (engineExchanges.ts). */
export const exchangesOf = (key: string) => misc(`hermes-exchange:${key}`);

function sum(rows: unknown[]): Totals {
    return (rows as Array<Partial<Cell>>).reduce<Totals>(
        (t, r) => add(t, { turns: Number(r.turns) || 0, in: Number(r.in) || 0, out: Number(r.out) || 0 }),
        ZERO,
    );
}

/**
 * Usage in the app's persistence: one record per finished turn, found by person
 * (`hermes-usage-user`), by room (`hermes-usage-room`) or by day (the DayIndex bucket, which
 * is also how expiry drops old days). Rows are only ever added, so no race loses a count.
 */
export class EngineUsage implements UsagePort {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async record(day: string, userId: string, roomId: string, usage: Usage | undefined, turn: FinishedTurn): Promise<void> {
        const index = new DayIndex(KIND, this.read, this.write);
        await index.note(day);
        // One row per finished turn, written without a read (the totals are sums of rows). It
        // carries the message's receipt (receipts.ts `taken`), kept as long as the day's usage.
        const row: UsageRow = {
            day,
            userId,
            roomId,
            messageId: turn.receipt,
            ...(turn.answered ? { turns: 1, in: usage?.in ?? 0, out: usage?.out ?? 0 } : ZERO),
            ...(turn.answers?.length ? { answers: turn.answers, sessionId: turn.sessionId, runId: turn.runId } : {}),
            ...(turn.exchange && turn.answers?.length ? { exchange: turn.exchange } : {}),
        };
        // An answer's messages find their turn's row (a vote on one, feedback/): one association each, in the same write.
        const answers = (turn.answers ?? []).map(answerOf);
        await this.write.createWithAssociations(row, [
            misc(`hermes-receipt:${turn.receipt}`),
            byUser(day, userId),
            byRoom(day, roomId),
            index.bucket(day),
            ...answers,
            ...(row.exchange ? [exchangesOf(row.exchange.key)] : []),
        ]);
    }

    public async today(day: string, userId: string, roomId: string, need: { user: boolean; room: boolean }): Promise<{ user?: Totals; room?: Totals }> {
        if (need.user && need.room) {
            // Both budgets: the whole day in one read.
            const rows = (await this.read.readByAssociation(new DayIndex(KIND, this.read, this.write).bucket(day))) as Cell[];
            return { user: sum(rows.filter((r) => r.userId === userId)), room: sum(rows.filter((r) => r.roomId === roomId)) };
        }
        if (need.user) {
            return { user: sum(await this.read.readByAssociation(byUser(day, userId))) };
        }
        return need.room ? { room: sum(await this.read.readByAssociation(byRoom(day, roomId))) } : {};
    }

    public async over(days: string[], who: { userId?: string; roomId?: string }): Promise<Totals> {
        const index = new DayIndex(KIND, this.read, this.write);
        const reads = days.map((day) =>
            this.read.readByAssociation(who.userId ? byUser(day, who.userId) : who.roomId ? byRoom(day, who.roomId) : index.bucket(day)),
        );
        return (await Promise.all(reads)).map(sum).reduce(add, ZERO);
    }
}

/** Drops days older than {@link USAGE_KEEP_DAYS}: each old day's bucket removed in one call. */
export async function expireUsage(read: IPersistenceRead, write: IPersistence, now = Date.now()): Promise<void> {
    if (!expiryDue(KIND, now)) {
        return;
    }
    await new DayIndex(KIND, read, write).dropBefore(dayOf(now - USAGE_KEEP_DAYS * DAY_MS));
    expiryDone(KIND, now);
}
