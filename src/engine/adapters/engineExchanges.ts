import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { Exchange, ExchangePort } from '../../sessions/exchanges';
import { usageDay } from '../../usage/usage';
import { DayIndex } from './dayIndex';
import { exchangesOf, USAGE_KIND, UsageRow } from './engineUsage';

/** The mark an undo leaves beside the rows: kept with the day's usage, so it expires after them. */
interface UndoneMark {
    undone: string;
}

/**
 * A conversation's exchanges are the usage rows of its answered turns (engineUsage.ts writes
 * them with the conversation's association, in the write that ends the turn: nothing more per
 * turn). Listing them is one read; an undo adds a mark under the same association.
 */
export class EngineExchanges implements ExchangePort {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
        private readonly timeZone: string,
        private readonly now: () => number = Date.now,
    ) {}

    public async list(key: string): Promise<Exchange[]> {
        const records = (await this.read.readByAssociation(exchangesOf(key))) as Array<Partial<UsageRow> & Partial<UndoneMark>>;
        const undone = new Set(records.map((r) => r.undone).filter((id): id is string => typeof id === 'string'));
        const found: Exchange[] = [];
        for (const r of records) {
            const x = r.exchange;
            if (!x || x.key !== key || !r.messageId || undone.has(r.messageId) || !r.answers?.length || !r.sessionId || !r.userId) {
                continue;
            }
            found.push({
                key,
                receipt: r.messageId,
                question: x.question,
                askerId: r.userId,
                askerUsername: x.askerUsername,
                roomId: r.roomId as string,
                threadId: x.threadId,
                answers: r.answers,
                sessionId: r.sessionId,
                print: x.print,
                at: x.at,
            });
        }
        return found.sort((a, b) => b.at - a.at);
    }

    public async markUndone(key: string, receipt: string): Promise<void> {
        const day = usageDay(this.now(), this.timeZone);
        const index = new DayIndex(USAGE_KIND, this.read, this.write);
        await index.note(day);
        const mark: UndoneMark = { undone: receipt };
        await this.write.createWithAssociations(mark, [exchangesOf(key), index.bucket(day)]);
    }
}
