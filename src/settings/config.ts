import { z } from 'zod';
import { SettingId } from './definitions';

/** A comma/space/newline separated list, trimmed, empties dropped, duplicates removed. */
export function splitList(raw: unknown): string[] {
    if (typeof raw !== 'string') {
        return [];
    }
    return [...new Set(raw.split(/[\s,]+/).map((s) => s.trim()).filter((s) => s.length > 0))];
}

// Rocket.Chat user ids are 17-char Meteor ids (or longer random ids for some imports): letters and digits only.
// A value with '@' or spaces is a username or an email pasted by mistake: refuse it instead of matching nobody.
const userId = z.string().regex(/^[A-Za-z0-9]{8,64}$/, 'must be a Rocket.Chat user ID (letters and digits), not a username');

function tryUrl(value: string): URL | undefined {
    try {
        return new URL(value);
    } catch {
        return undefined;
    }
}

const hermesUrl = z
    .string()
    .trim()
    .superRefine((value, ctx) => {
        const problem = (message: string) => ctx.addIssue({ code: z.ZodIssueCode.custom, message });
        if (value.length === 0) {
            return problem('is empty: set the base URL of the Hermes api_server, for example http://127.0.0.1:8642');
        }
        const url = tryUrl(value);
        if (!url) {
            return problem('is not a URL');
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') {
            return problem('must be http:// or https://');
        }
        if (url.username || url.password) {
            return problem('must not carry credentials; use the API key setting');
        }
        if (url.search || url.hash) {
            return problem('must be a base URL without ?query or #fragment');
        }
    })
    .transform((u) => u.replace(/\/+$/, ''));

const timezone = z
    .string()
    .trim()
    .transform((tz) => (tz === '' ? 'UTC' : tz))
    .refine((tz) => {
        try {
            new Intl.DateTimeFormat('en-US', { timeZone: tz });
            return true;
        } catch {
            return false;
        }
    }, 'is not an IANA time zone name (for example Europe/Berlin or UTC)');

const count = (min: number, max: number) =>
    z.coerce.number().int('must be a whole number').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

/** The typed configuration every other module receives. Parsed once per settings change. */
export const ConfigSchema = z
    .object({
        hermesUrl,
        // Hermes refuses to start with a key under 16 characters, so a shorter one is a paste error.
        hermesApiKey: z.string().min(16, 'is missing or shorter than the 16 characters Hermes requires'),
        hermesTimeoutSeconds: z.coerce.number().int('must be a whole number').min(5, 'must be at least 5').max(3600, 'must be at most 3600'),
        allowedUserIds: z.array(userId),
        // HS256 is only as strong as its key: refuse short secrets rather than accept forgeable tokens.
        endpointSecret: z.union([z.literal(''), z.string().min(32, 'must be empty (endpoints off) or at least 32 characters')]),
        /** Other bots by username or id, compared case-insensitively for usernames. */
        ignoreSenders: z.array(z.string().min(1)),
        timezone,
        historyMinMessages: count(0, 100),
        historyMaxMessages: count(1, 200),
        groupSessionsPerUser: z.boolean(),
        threadSessionsPerUser: z.boolean(),
        dmSeedMessages: count(0, 100),
        /** auto: runs when Hermes offers them (approvals, stop, progress), else chat completions. */
        hermesTransport: z.enum(['auto', 'runs', 'chat']),
        progress: z.enum(['off', 'status', 'tools']),
        /** May decide any approval, and alone may grant "always" (only in their own 1:1 DM). */
        adminUserIds: z.array(userId),
        /** Commands ordinary users may run; the rest only admin_user_ids. */
        commandAllowlist: z.array(z.enum(['new', 'reset', 'status', 'help', 'stop'])),
        allowContextReferences: z.boolean(),
        maxMessageAgeSeconds: count(10, 86_400),
        /** HMAC key of the asker token; empty: no token line. */
        askerKey: z.union([z.literal(''), z.string().min(32, 'must be empty (no asker token) or at least 32 characters')]),
        sharedMemoryWarning: z.boolean(),
        /** A turn that has not ended this long after reaching Hermes is stopped and the asker told. */
        turnTimeoutMinutes: count(1, 1440),
    })
    .strict()
    .refine((c) => c.historyMinMessages <= c.historyMaxMessages, {
        message: 'must not exceed history_max_messages',
        path: ['historyMinMessages'],
    });

export type HermesConfig = z.infer<typeof ConfigSchema>;

/** Defaults of every setting, for tests and tools that build a config by hand. */
export const DEFAULT_OPTIONS: Omit<HermesConfig, 'hermesUrl' | 'hermesApiKey'> = {
    hermesTimeoutSeconds: 120,
    allowedUserIds: [],
    endpointSecret: '',
    ignoreSenders: [],
    timezone: 'UTC',
    historyMinMessages: 10,
    historyMaxMessages: 50,
    groupSessionsPerUser: true,
    threadSessionsPerUser: false,
    dmSeedMessages: 0,
    hermesTransport: 'auto',
    progress: 'tools',
    adminUserIds: [],
    commandAllowlist: ['new', 'reset', 'status', 'help', 'stop'],
    allowContextReferences: false,
    maxMessageAgeSeconds: 120,
    askerKey: '',
    sharedMemoryWarning: true,
    turnTimeoutMinutes: 30,
};

export type RawSettings = Partial<Record<SettingId, unknown>>;

export type ConfigResult = { ok: true; config: HermesConfig } | { ok: false; problems: string[] };

const FIELD_TO_SETTING: Record<keyof HermesConfig, SettingId> = {
    hermesUrl: SettingId.HermesUrl,
    hermesApiKey: SettingId.HermesApiKey,
    hermesTimeoutSeconds: SettingId.HermesTimeoutSeconds,
    allowedUserIds: SettingId.AllowedUserIds,
    endpointSecret: SettingId.EndpointSecret,
    ignoreSenders: SettingId.IgnoreSenders,
    timezone: SettingId.Timezone,
    historyMinMessages: SettingId.HistoryMinMessages,
    historyMaxMessages: SettingId.HistoryMaxMessages,
    groupSessionsPerUser: SettingId.GroupSessionsPerUser,
    threadSessionsPerUser: SettingId.ThreadSessionsPerUser,
    dmSeedMessages: SettingId.DmSeedMessages,
    hermesTransport: SettingId.HermesTransport,
    progress: SettingId.Progress,
    adminUserIds: SettingId.AdminUserIds,
    commandAllowlist: SettingId.CommandAllowlist,
    allowContextReferences: SettingId.AllowContextReferences,
    maxMessageAgeSeconds: SettingId.MaxMessageAgeSeconds,
    askerKey: SettingId.AskerKey,
    sharedMemoryWarning: SettingId.SharedMemoryWarning,
    turnTimeoutMinutes: SettingId.TurnTimeoutMinutes,
};

/**
 * Turns raw admin values into a config, or a list of problems that name the setting id and
 * never echo a value (the API key must not reach the log through an error message).
 */
export function parseConfig(raw: RawSettings): ConfigResult {
    const result = ConfigSchema.safeParse({
        hermesUrl: raw[SettingId.HermesUrl] ?? '',
        hermesApiKey: raw[SettingId.HermesApiKey] ?? '',
        hermesTimeoutSeconds: raw[SettingId.HermesTimeoutSeconds] ?? 120,
        allowedUserIds: splitList(raw[SettingId.AllowedUserIds]),
        endpointSecret: typeof raw[SettingId.EndpointSecret] === 'string' ? raw[SettingId.EndpointSecret] : '',
        ignoreSenders: splitList(raw[SettingId.IgnoreSenders]).map((s) => s.replace(/^@/, '')),
        timezone: typeof raw[SettingId.Timezone] === 'string' ? raw[SettingId.Timezone] : 'UTC',
        historyMinMessages: raw[SettingId.HistoryMinMessages] ?? 10,
        historyMaxMessages: raw[SettingId.HistoryMaxMessages] ?? 50,
        groupSessionsPerUser: raw[SettingId.GroupSessionsPerUser] ?? true,
        threadSessionsPerUser: raw[SettingId.ThreadSessionsPerUser] ?? false,
        dmSeedMessages: raw[SettingId.DmSeedMessages] ?? 0,
        hermesTransport: raw[SettingId.HermesTransport] ?? 'auto',
        progress: raw[SettingId.Progress] ?? 'tools',
        adminUserIds: splitList(raw[SettingId.AdminUserIds]),
        commandAllowlist: splitList(raw[SettingId.CommandAllowlist] ?? 'new, reset, status, help, stop').map((c) => c.replace(/^[/!]/, '').toLowerCase()),
        allowContextReferences: raw[SettingId.AllowContextReferences] ?? false,
        maxMessageAgeSeconds: raw[SettingId.MaxMessageAgeSeconds] ?? 120,
        askerKey: typeof raw[SettingId.AskerKey] === 'string' ? raw[SettingId.AskerKey] : '',
        sharedMemoryWarning: raw[SettingId.SharedMemoryWarning] ?? true,
        turnTimeoutMinutes: raw[SettingId.TurnTimeoutMinutes] ?? 30,
    });
    if (result.success) {
        return { ok: true, config: result.data };
    }
    const problems = result.error.issues.map((issue) => {
        const field = issue.path[0] as keyof HermesConfig;
        const item = issue.path.length > 1 ? ` (entry ${Number(issue.path[1]) + 1})` : '';
        return `${FIELD_TO_SETTING[field] ?? String(field)}${item} ${issue.message}`;
    });
    return { ok: false, problems };
}
