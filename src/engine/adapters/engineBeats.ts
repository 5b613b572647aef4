import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { BeatStore } from '../../turns/beats';

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const beatOf = (process: string) => misc(`hermes-beat:${process}`);
const ALL_BEATS = misc('hermes-beats');

/** Each app process's beat (turns/beats.ts): one small record per process, all read by the sweep in one call. */
export class EngineBeats implements BeatStore {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async writeBeat(process: string, at: number): Promise<void> {
        await this.write.updateByAssociations([beatOf(process), ALL_BEATS], { process, at }, true);
    }

    /** The newest beat per process: a record stored twice (no unique index) counts by its newest. */
    public async readBeats(): Promise<Map<string, number>> {
        const beats = new Map<string, number>();
        for (const b of (await this.read.readByAssociation(ALL_BEATS)) as Array<{ process?: unknown; at?: unknown }>) {
            if (typeof b.process === 'string' && typeof b.at === 'number') {
                beats.set(b.process, Math.max(beats.get(b.process) ?? 0, b.at));
            }
        }
        return beats;
    }

    public async dropBeats(processes: string[]): Promise<void> {
        await Promise.all(processes.map((p) => this.write.removeByAssociation(beatOf(p))));
    }
}
