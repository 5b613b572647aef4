import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { KeptSummary, SummaryStore } from '../../actions/postSummary';
import { DAY_MS, DayIndex, dayOf, expiryDone, expiryDue } from './dayIndex';

/** A private summary's button works this long. */
const KEEP_DAYS = 2;
const KIND = 'summaries';
const one = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, `hermes-summary:${id}`);

/** Private summaries waiting for their "Post to thread" click, in day buckets that expiry drops whole. */
export class EngineSummaries implements SummaryStore {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async keep(summary: KeptSummary): Promise<void> {
        const index = new DayIndex(KIND, this.read, this.write);
        await index.note(dayOf(summary.at));
        await this.write.updateByAssociations([one(summary.id), index.bucket(dayOf(summary.at))], summary, true);
    }

    public async take(id: string): Promise<KeptSummary | undefined> {
        const rows = (await this.write.removeByAssociation(one(id))) as Array<Partial<KeptSummary>> | undefined;
        const row = (rows ?? []).find((r) => typeof r.text === 'string' && typeof r.ownerId === 'string');
        return row as KeptSummary | undefined;
    }
}

export async function expireSummaries(read: IPersistenceRead, write: IPersistence, now = Date.now()): Promise<void> {
    if (!expiryDue(KIND, now)) {
        return;
    }
    await new DayIndex(KIND, read, write).dropBefore(dayOf(now - KEEP_DAYS * DAY_MS));
    expiryDone(KIND, now);
}
