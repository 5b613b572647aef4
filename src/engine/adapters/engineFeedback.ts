import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { AnsweredTurn, FeedbackPort, Vote } from '../../feedback/feedback';
import { DAY_MS, DayIndex, dayOf, expiryDone, expiryDue } from './dayIndex';
import { answerOf, UsageRow } from './engineUsage';

/** Votes are kept as long as the usage they go with. */
const FEEDBACK_KEEP_DAYS = 35;

const KIND = 'feedback';
const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const voteKey = (answerId: string, userId: string) => misc(`hermes-vote:${answerId}:${userId}`);
const byRoom = (roomId: string) => misc(`hermes-votes-room:${roomId}`);

/**
 * Votes in the app's persistence: one record per person and answer message (found by that pair),
 * in its room's list and its day's bucket (the counts of every room, and expiry). A change is a
 * removal and a new record: two instances changing one vote at once may leave two, so the
 * counts keep a person's newest vote per answer.
 */
export class EngineFeedback implements FeedbackPort {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async answered(answerId: string): Promise<AnsweredTurn | undefined> {
        const [row] = (await this.read.readByAssociation(answerOf(answerId))) as UsageRow[];
        return row?.messageId ? { turnId: row.messageId, roomId: row.roomId, sessionId: row.sessionId, runId: row.runId } : undefined;
    }

    public async current(answerId: string, userId: string): Promise<Vote | undefined> {
        return newest((await this.read.readByAssociation(voteKey(answerId, userId))) as Vote[])[0];
    }

    public async put(vote: Vote): Promise<void> {
        const day = dayOf(vote.at);
        const index = new DayIndex(KIND, this.read, this.write);
        await Promise.all([index.note(day), this.clear(vote.answerId, vote.userId)]);
        await this.write.createWithAssociations(vote, [voteKey(vote.answerId, vote.userId), byRoom(vote.roomId), index.bucket(day)]);
    }

    public async clear(answerId: string, userId: string): Promise<void> {
        await this.write.removeByAssociation(voteKey(answerId, userId));
    }

    public async counts(since: number, where: { roomId?: string }): Promise<{ up: number; down: number }> {
        const index = new DayIndex(KIND, this.read, this.write);
        const days = Array.from({ length: Math.ceil((Date.now() - since) / DAY_MS) + 1 }, (_, i) => dayOf(since + i * DAY_MS));
        const rows = where.roomId
            ? ((await this.read.readByAssociation(byRoom(where.roomId))) as Vote[])
            : ((await Promise.all(days.map((d) => this.read.readByAssociation(index.bucket(d))))).flat() as Vote[]);
        const votes = newest(rows.filter((v) => typeof v.at === 'number' && v.at >= since));
        return { up: votes.filter((v) => v.vote === 'up').length, down: votes.filter((v) => v.vote === 'down').length };
    }
}

/** One vote per person and answer: the newest. */
function newest(votes: Vote[]): Vote[] {
    const by = new Map<string, Vote>();
    for (const v of votes) {
        const key = `${v.answerId}\n${v.userId}`;
        const seen = by.get(key);
        if (!seen || v.at > seen.at) {
            by.set(key, v);
        }
    }
    return [...by.values()];
}

/** Drops votes older than {@link FEEDBACK_KEEP_DAYS}, a day's bucket at a time. */
export async function expireFeedback(read: IPersistenceRead, write: IPersistence, now = Date.now()): Promise<void> {
    if (!expiryDue(KIND, now)) {
        return;
    }
    await new DayIndex(KIND, read, write).dropBefore(dayOf(now - FEEDBACK_KEEP_DAYS * DAY_MS));
    expiryDone(KIND, now);
}
