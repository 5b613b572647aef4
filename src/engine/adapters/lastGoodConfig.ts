import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { ConfigSchema, DEFAULT_OPTIONS, HermesConfig } from '../../settings/config';

const RECORD = new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, 'hermes-config-last-good');

/** The fields a stored configuration may carry; anything else (a field a later version dropped) is left out. */
const FIELDS = new Set<string>(['hermesUrl', 'hermesApiKey', ...Object.keys(DEFAULT_OPTIONS)]);

/**
 * The last configuration that parsed, kept in the app's persistence so a restarted process
 * whose settings are now invalid keeps acting on it instead of answering everyone, outsiders
 * included, with "not configured".
 *
 * The record holds the Hermes API key, the endpoint secret and the asker key in clear: it
 * lives in the app's persistence inside Rocket.Chat's own database, next to the settings
 * that hold the same values, and leaves it only through the app. Nothing here logs it.
 */
export class LastGoodConfig {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write?: IPersistence,
    ) {}

    public async save(config: HermesConfig): Promise<void> {
        if (!this.write) {
            return;
        }
        // One association, always the same: updateByAssociation matches it exactly and replaces the record.
        await this.write.updateByAssociation(RECORD, { config, savedAt: Date.now() }, true);
    }

    /** The stored configuration, checked again by the schema (a later version may have added fields: they take defaults). */
    public async load(): Promise<HermesConfig | undefined> {
        const [stored] = (await this.read.readByAssociation(RECORD)) as Array<{ config?: unknown }>;
        if (!stored || typeof stored.config !== 'object' || stored.config === null) {
            return undefined;
        }
        const known = Object.fromEntries(Object.entries(stored.config).filter(([k]) => FIELDS.has(k)));
        const parsed = ConfigSchema.safeParse({ ...DEFAULT_OPTIONS, ...known });
        return parsed.success ? (parsed.data as HermesConfig) : undefined;
    }
}
