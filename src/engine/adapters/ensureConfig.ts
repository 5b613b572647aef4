import { IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { LogPort } from '../../security/safeLog';
import { ConfigHolder } from '../../settings/configHolder';
import { HermesConfig } from '../../settings/config';
import { LastGoodConfig } from './lastGoodConfig';
import { readSettings } from './readSettings';
import { reportConfig } from '../../settings/reportConfig';

/**
 * The configuration for this call. A restarted app process starts with none in memory
 * (and the engine does not always call onEnable again), so the first call reads the settings.
 * When they are invalid and this process has no good configuration, the last good one
 * persisted by an earlier process is used (looked for once per process). Callers that have
 * a persistence accessor pass it: a configuration applied since the last call is persisted
 * then (settings events themselves cannot write).
 */
export async function ensureConfig(holder: ConfigHolder, read: IRead, log: LogPort, persistence?: IPersistence): Promise<HermesConfig | undefined> {
    if (!holder.isLoaded()) {
        reportConfig(holder.apply(await readSettings(read.getEnvironmentReader().getSettings())), log);
    }
    const store = new LastGoodConfig(read.getPersistenceReader(), persistence);
    if (holder.shouldTryStored()) {
        const stored = await store.load();
        if (stored && holder.adoptStored(stored)) {
            reportConfig({ kind: 'stored-last-good' }, log);
        }
    }
    const pending = holder.pendingSave();
    if (pending && persistence) {
        // Taken by this call before the write: the calls of a burst of events do not each write it again.
        holder.saved(pending);
        try {
            await store.save(pending);
        } catch (error) {
            holder.saveFailed(pending);
            throw error;
        }
    }
    return holder.get();
}
