import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { CronJob, CronStore } from '../../cron/job';
import { firstOfEach } from './firstOfEach';

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const ALL = misc('hermes-cron-jobs');
const one = (id: string) => misc(`hermes-cron-job:${id}`);

function valid(row: Partial<CronJob>): row is CronJob {
    return typeof row.id === 'string' && typeof row.roomId === 'string' && typeof row.prompt === 'string' && Boolean(row.schedule);
}

/** Jobs in the app's persistence: one record each, all found with one read (the sweep's per-tick cost). */
export class EngineCron implements CronStore {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async all(): Promise<CronJob[]> {
        return firstOfEach(((await this.read.readByAssociation(ALL)) as Array<Partial<CronJob>>).filter(valid));
    }

    public async get(id: string): Promise<CronJob | undefined> {
        return ((await this.read.readByAssociation(one(id))) as Array<Partial<CronJob>>).filter(valid)[0];
    }

    public async save(job: CronJob): Promise<void> {
        // The same associations in the same order every time: updateByAssociations matches the exact array.
        await this.write.updateByAssociations([one(job.id), ALL], job, true);
    }

    public async remove(id: string): Promise<void> {
        await this.write.removeByAssociation(one(id));
    }
}
