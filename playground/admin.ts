/**
 * The Admin view's data: the settings the installed app declares (as the engine stores them,
 * so the form follows the app's own table) with the labels of its i18n/en.json, and the app's
 * log as an admin reads it. Secrets never reach the page: a password setting says only whether
 * it is set, and an empty field on save keeps it.
 */
import type { Rig } from '../rig';

export async function adminView(rig: Rig, i18n: Record<string, string>) {
    const stored = await rig.server.manager.getStorage().retrieveOne(rig.appId);
    const settings = Object.values(stored?.settings ?? {}).map((s) => {
        const value = s.value ?? s.packageValue;
        return {
            id: s.id,
            type: String(s.type),
            label: i18n[s.i18nLabel] ?? s.i18nLabel,
            description: s.i18nDescription ? (i18n[s.i18nDescription] ?? s.i18nDescription) : '',
            placeholder: s.i18nPlaceholder ? (i18n[s.i18nPlaceholder] ?? s.i18nPlaceholder) : '',
            required: s.required,
            multiline: Boolean(s.multiline),
            values: (s.values ?? []).map((v) => ({ key: v.key, label: i18n[v.i18nLabel] ?? v.i18nLabel })),
            value: String(s.type) === 'password' ? '' : value,
            isSet: value !== '' && value !== undefined && value !== null,
            packageValue: String(s.type) === 'password' ? '' : s.packageValue,
        };
    });
    return { settings, log: rig.logText({ appLinesOnly: true }) };
}

/** Applies the changed settings one by one, as the admin form's save does; an empty password keeps the stored one. */
export async function saveSettings(rig: Rig, values: Record<string, unknown>) {
    const stored = await rig.server.manager.getStorage().retrieveOne(rig.appId);
    const changed: string[] = [];
    for (const [id, value] of Object.entries(values)) {
        const current = stored?.settings[id];
        if (!current || (String(current.type) === 'password' && value === '')) {
            continue;
        }
        if (JSON.stringify(current.value ?? current.packageValue) !== JSON.stringify(value)) {
            await rig.setting(id, value);
            changed.push(id);
        }
    }
    return { ok: true, changed };
}
