import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { LogPort } from '../security/safeLog';
import { ConfigHolder } from './configHolder';
import { HermesConfig } from './config';
import { readSettings } from './readSettings';
import { reportConfig } from './reportConfig';

/**
 * The configuration for this call. A restarted app process starts with none in memory
 * (and the engine does not always call onEnable again), so the first call reads the settings.
 */
export async function ensureConfig(holder: ConfigHolder, read: IRead, log: LogPort): Promise<HermesConfig | undefined> {
    if (!holder.isLoaded()) {
        reportConfig(holder.apply(await readSettings(read.getEnvironmentReader().getSettings())), log);
    }
    return holder.get();
}
