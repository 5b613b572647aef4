import { ISetting, SettingType } from '@rocket.chat/apps-engine/definition/settings';

/** Every admin setting id, named once. Other modules refer to settings only through this enum. */
export enum SettingId {
    HermesUrl = 'hermes_url',
    HermesApiKey = 'hermes_api_key',
    HermesTimeoutSeconds = 'hermes_timeout_seconds',
    AllowedUserIds = 'allowed_user_ids',
    EndpointSecret = 'endpoint_secret',
}

/**
 * The admin UI declarations. Labels and descriptions are i18n keys in i18n/en.json
 * (`<id>_label`, `<id>_description`), so the UI text lives in one place.
 */
export const SETTINGS: ReadonlyArray<ISetting> = [
    {
        id: SettingId.HermesUrl,
        type: SettingType.STRING,
        packageValue: '',
        required: true,
        public: false,
        i18nLabel: 'hermes_url_label',
        i18nDescription: 'hermes_url_description',
        i18nPlaceholder: 'hermes_url_placeholder',
    },
    {
        id: SettingId.HermesApiKey,
        type: SettingType.PASSWORD,
        packageValue: '',
        required: true,
        public: false,
        i18nLabel: 'hermes_api_key_label',
        i18nDescription: 'hermes_api_key_description',
    },
    {
        id: SettingId.HermesTimeoutSeconds,
        type: SettingType.NUMBER,
        packageValue: 120,
        required: true,
        public: false,
        i18nLabel: 'hermes_timeout_seconds_label',
        i18nDescription: 'hermes_timeout_seconds_description',
    },
    {
        id: SettingId.AllowedUserIds,
        type: SettingType.STRING,
        packageValue: '',
        required: false,
        public: false,
        i18nLabel: 'allowed_user_ids_label',
        i18nDescription: 'allowed_user_ids_description',
    },
    {
        id: SettingId.EndpointSecret,
        type: SettingType.PASSWORD,
        packageValue: '',
        required: false,
        public: false,
        i18nLabel: 'endpoint_secret_label',
        i18nDescription: 'endpoint_secret_description',
    },
];
