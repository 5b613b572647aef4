import { ISetting, SettingType } from '@rocket.chat/apps-engine/definition/settings';

/** Every admin setting id, named once. Other modules refer to settings only through this enum. */
export enum SettingId {
    HermesUrl = 'hermes_url',
    HermesApiKey = 'hermes_api_key',
    HermesTimeoutSeconds = 'hermes_timeout_seconds',
    AllowedUserIds = 'allowed_user_ids',
    EndpointSecret = 'endpoint_secret',
    IgnoreSenders = 'ignore_senders',
    Timezone = 'timezone',
    HistoryMinMessages = 'history_min_messages',
    HistoryMaxMessages = 'history_max_messages',
    GroupSessionsPerUser = 'group_sessions_per_user',
    ThreadSessionsPerUser = 'thread_sessions_per_user',
    DmSeedMessages = 'dm_seed_messages',
    HermesTransport = 'hermes_transport',
    Progress = 'progress',
    AdminUserIds = 'admin_user_ids',
    CommandAllowlist = 'command_allowlist',
    AllowContextReferences = 'allow_context_references',
    MaxMessageAgeSeconds = 'max_message_age_seconds',
    AskerKey = 'asker_key',
    SharedMemoryWarning = 'shared_memory_warning',
    TurnTimeoutMinutes = 'turn_timeout_minutes',
}

/**
 * One declaration per setting: id, type, default. Labels and descriptions are the i18n keys
 * `<id>_label` and `<id>_description` in i18n/en.json, so the UI text lives in one place.
 */
function setting(id: SettingId, type: SettingType, packageValue: unknown, extra: Partial<ISetting> = {}): ISetting {
    return { id, type, packageValue, required: false, public: false, i18nLabel: `${id}_label`, i18nDescription: `${id}_description`, ...extra };
}

export const SETTINGS: ReadonlyArray<ISetting> = [
    setting(SettingId.HermesUrl, SettingType.STRING, '', { required: true, i18nPlaceholder: 'hermes_url_placeholder' }),
    setting(SettingId.HermesApiKey, SettingType.PASSWORD, '', { required: true }),
    setting(SettingId.HermesTimeoutSeconds, SettingType.NUMBER, 120),
    setting(SettingId.AllowedUserIds, SettingType.STRING, ''),
    setting(SettingId.EndpointSecret, SettingType.PASSWORD, ''),
    setting(SettingId.IgnoreSenders, SettingType.STRING, ''),
    setting(SettingId.Timezone, SettingType.STRING, 'UTC'),
    setting(SettingId.HistoryMinMessages, SettingType.NUMBER, 10),
    setting(SettingId.HistoryMaxMessages, SettingType.NUMBER, 50),
    setting(SettingId.GroupSessionsPerUser, SettingType.BOOLEAN, true),
    setting(SettingId.ThreadSessionsPerUser, SettingType.BOOLEAN, false),
    setting(SettingId.DmSeedMessages, SettingType.NUMBER, 0),
    setting(SettingId.HermesTransport, SettingType.SELECT, 'auto', {
        values: ['auto', 'runs', 'chat'].map((key) => ({ key, i18nLabel: `hermes_transport_${key}` })),
    }),
    setting(SettingId.Progress, SettingType.SELECT, 'tools', {
        values: ['off', 'status', 'tools'].map((key) => ({ key, i18nLabel: `progress_${key}` })),
    }),
    setting(SettingId.AdminUserIds, SettingType.STRING, ''),
    setting(SettingId.CommandAllowlist, SettingType.STRING, 'new, reset, status, help, stop'),
    setting(SettingId.AllowContextReferences, SettingType.BOOLEAN, false),
    setting(SettingId.MaxMessageAgeSeconds, SettingType.NUMBER, 120),
    setting(SettingId.AskerKey, SettingType.PASSWORD, ''),
    setting(SettingId.SharedMemoryWarning, SettingType.BOOLEAN, true),
    setting(SettingId.TurnTimeoutMinutes, SettingType.NUMBER, 30),
];
