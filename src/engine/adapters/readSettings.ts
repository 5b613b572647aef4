import { ISettingRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RawSettings } from '../../settings/config';
import { SETTINGS } from '../../settings/definitions';

/** Reads every declared setting's current value from the engine. */
export async function readSettings(settings: ISettingRead): Promise<RawSettings> {
    const entries = await Promise.all(SETTINGS.map(async (s) => [s.id, await settings.getValueById(s.id)] as const));
    return Object.fromEntries(entries) as RawSettings;
}
