import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { SlotEntry, SlotPort } from '../../turns/slots';

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const slotOf = (id: string) => misc(`hermes-slot:${id}`);
const ALL = misc('hermes-slots');

/** The server-wide slot entries of `max_parallel_turns` (turns/slots.ts): one small record per open turn. */
export class EngineSlots implements SlotPort {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
    ) {}

    public async list(): Promise<SlotEntry[]> {
        return (await this.read.readByAssociation(ALL)) as SlotEntry[];
    }

    public async put(entry: SlotEntry): Promise<void> {
        await this.write.updateByAssociations([slotOf(entry.id), ALL], { ...entry }, true);
    }

    public async drop(id: string): Promise<void> {
        await this.write.removeByAssociation(slotOf(id));
    }
}
