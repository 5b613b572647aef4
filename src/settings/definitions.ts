import type { ISetting, SettingType } from '@rocket.chat/apps-engine/definition/settings';
import { z } from '../generated/zodBundle';
import { hermesUrl, roomId, timezone, userId } from './fieldRules';

/**
 * The commands command_allowlist may give ordinary users (all of them by default); `sethome`
 * and `automation` change the app's settings and are admins' only (admission/textCommand.ts).
 */
export const USER_COMMANDS = [
    'new',
    'reset',
    'status',
    'help',
    'stop',
    'retry',
    'undo',
    'background',
    'unfollow',
    'title',
    'sessions',
    'resume',
    'search',
    'cron',
    'usage',
] as const;
/**
 * Every admin setting, declared once: its id, how the admin form shows it, its default,
 * and the rule its value must follow. The admin form (SETTINGS), the parser and the
 * defaults (config.ts) are derived from this table; labels and descriptions are the i18n
 * keys `<id>_label` / `<id>_description` (choices: `<id>_<choice>`). A new setting is one
 * entry here plus its i18n strings.
 */
type Entry =
    | { id: string; type: 'string' | 'password'; default: string; rule: z.ZodTypeAny; required?: boolean; placeholder?: boolean }
    /** Several lines in the form; the rule checks only the size, the feature parses the lines (and reports each bad one). */
    | { id: string; type: 'text'; default: string; rule: z.ZodTypeAny }
    | { id: string; type: 'number'; default: number; min: number; max: number }
    | { id: string; type: 'boolean'; default: boolean }
    | { id: string; type: 'select'; default: string; choices: readonly string[] }
    /** Comma/space/newline separated in the form; each item normalised, then checked. */
    | { id: string; type: 'list'; default: string; item: z.ZodTypeAny; normalise?: (item: string) => string };

/** An optional secret: empty turns the feature off; otherwise at least this long (HS256 is only as strong as its key). */
const optionalSecret = (what: string) => z.union([z.literal(''), z.string().min(32, `must be empty (${what}) or at least 32 characters`)]);

export const SETTING_TABLE = {
    hermesUrl: { id: 'hermes_url', type: 'string', default: '', rule: hermesUrl, required: true, placeholder: true },
    // Hermes refuses to start with a key under 16 characters, so a shorter one is a paste error.
    hermesApiKey: {
        id: 'hermes_api_key',
        type: 'password',
        default: '',
        rule: z.string().min(16, 'is missing or shorter than the 16 characters Hermes requires'),
        required: true,
    },
    hermesTimeoutSeconds: { id: 'hermes_timeout_seconds', type: 'number', default: 120, min: 5, max: 3600 },
    allowedUserIds: { id: 'allowed_user_ids', type: 'list', default: '', item: userId },
    endpointSecret: { id: 'endpoint_secret', type: 'password', default: '', rule: optionalSecret('endpoints off') },
    /** Other bots by username or id, compared case-insensitively for usernames. */
    ignoreSenders: { id: 'ignore_senders', type: 'list', default: '', item: z.string().min(1), normalise: (s: string) => s.replace(/^@/, '') },
    timezone: { id: 'timezone', type: 'string', default: 'UTC', rule: timezone },
    historyMinMessages: { id: 'history_min_messages', type: 'number', default: 10, min: 0, max: 100 },
    historyMaxMessages: { id: 'history_max_messages', type: 'number', default: 50, min: 1, max: 200 },
    groupSessionsPerUser: { id: 'group_sessions_per_user', type: 'boolean', default: true },
    threadSessionsPerUser: { id: 'thread_sessions_per_user', type: 'boolean', default: false },
    dmSeedMessages: { id: 'dm_seed_messages', type: 'number', default: 0, min: 0, max: 100 },
    /** auto: runs when Hermes offers them (approvals, stop, progress), else chat completions. */
    hermesTransport: { id: 'hermes_transport', type: 'select', default: 'auto', choices: ['auto', 'runs', 'chat'] },
    /** The status message in the channel; the run panel always has the full detail. */
    progress: { id: 'progress_in_channel', type: 'select', default: 'tools', choices: ['off', 'status', 'tools'] },
    /** The bot's reaction on the message that asked: 👀 taken, ⏳ queued, ✅ answered, ❌ failed (turns/ack.ts). */
    reactions: { id: 'reactions', type: 'boolean', default: true },
    /** Answers appear as Hermes writes them: the answer's message is edited as it grows (turns/streamAnswer.ts). */
    streamAnswers: { id: 'stream_answers', type: 'boolean', default: true },
    /**
     * At most one edit of a streaming answer this often: every edit is a database write, a broadcast to the
     * room and a call of every installed app's update hooks. A choice: the admin form's numbers are whole.
     */
    streamEditSeconds: { id: 'stream_edit_seconds', type: 'select', default: '1.5', choices: ['1', '1.5', '2', '3', '5'] },
    /** After a 👎 on an answer, the reactor is asked privately for one line of why (feedback/why.ts). */
    feedbackAskWhy: { id: 'feedback_ask_why', type: 'boolean', default: false },
    /** A turn shows a status message only once it has run this long: a quick answer never flickers one in and out. */
    statusDelaySeconds: { id: 'status_delay_seconds', type: 'number', default: 3, min: 0, max: 600 },
    /** May decide any approval, and alone may grant "always" (only in their own 1:1 DM). */
    adminUserIds: { id: 'admin_user_ids', type: 'list', default: '', item: userId },
    /** Commands ordinary users may run; the rest only admin_user_ids. */
    commandAllowlist: {
        id: 'command_allowlist',
        type: 'list',
        default: USER_COMMANDS.join(', '),
        item: z.enum(USER_COMMANDS),
        normalise: (c: string) => c.replace(/^[/!]/, '').toLowerCase(),
    },
    /** A person's message while their turn of the same conversation runs (turns/followUps.ts): `auto` steers where Hermes can, else merges. */
    busyInputMode: { id: 'busy_input_mode', type: 'select', default: 'auto', choices: ['auto', 'steer', 'merge', 'interrupt', 'queue'] },
    /** `/hermes retry`: the retried answer's first message becomes a short line naming the retry (`edit`), or the answer goes (`remove`). */
    retryOldAnswer: { id: 'retry_old_answer', type: 'select', default: 'edit', choices: ['edit', 'remove'] },
    allowContextReferences: { id: 'allow_context_references', type: 'boolean', default: false },
    maxMessageAgeSeconds: { id: 'max_message_age_seconds', type: 'number', default: 120, min: 10, max: 86_400 },
    /** HMAC key of the asker token; empty: no token line. */
    askerKey: { id: 'asker_key', type: 'password', default: '', rule: optionalSecret('no asker token') },
    /** The MCP server at /mcp (issue 37): off unless on here, with its own bearer secret (and asker_key for the tools' tokens). */
    mcpEnabled: { id: 'mcp_enabled', type: 'boolean', default: false },
    mcpSecret: { id: 'mcp_secret', type: 'password', default: '', rule: optionalSecret('MCP server off') },
    /** The MCP write tools (post_message, schedule_prompt): each only proposes; the asker's click does it (mcp/approveWrite.ts). */
    mcpWriteTools: { id: 'mcp_write_tools', type: 'boolean', default: false },
    sharedMemoryWarning: { id: 'shared_memory_warning', type: 'boolean', default: true },
    /** A turn that has not ended this long after reaching Hermes is stopped and the asker told. */
    turnTimeoutMinutes: { id: 'turn_timeout_minutes', type: 'number', default: 30, min: 1, max: 1440 },
    /** Turns in flight at Hermes across the whole server (turns/slots.ts); below Hermes's own max_concurrent_runs (10). */
    maxParallelTurns: { id: 'max_parallel_turns', type: 'number', default: 8, min: 1, max: 1000 },
    /**
     * One room per line: `<room id> [profile=…] [model=…] [prompt="…"] [mode=mention|free|off]`
     * (policy/roomPolicy.ts). A malformed line never fails the whole settings: that room refuses service.
     */
    roomPolicies: { id: 'room_policies', type: 'text', default: '', rule: z.string().max(100_000, 'is longer than 100,000 characters') },
    /** After the bot answered in a thread, later messages there are turns without a mention: the askers' (asker) or everyone's. */
    threadFollow: { id: 'thread_follow', type: 'select', default: 'off', choices: ['off', 'asker', 'everyone'] },
    /** Automatic resets, as the Hermes gateway's reset policy: a new generation, like /new. */
    sessionReset: { id: 'session_reset', type: 'select', default: 'none', choices: ['none', 'idle', 'daily', 'both'] },
    sessionIdleMinutes: { id: 'session_idle_minutes', type: 'number', default: 1440, min: 5, max: 525_600 },
    /** The hour (0–23, in `timezone`) a daily reset happens at. */
    sessionResetHour: { id: 'session_reset_hour', type: 'number', default: 4, min: 0, max: 23 },
    /** Who besides admins may create scheduled prompts. */
    cronUserIds: { id: 'cron_user_ids', type: 'list', default: '', item: userId },
    cronMaxJobsPerRoom: { id: 'cron_max_jobs_per_room', type: 'number', default: 10, min: 1, max: 200 },
    cronMaxJobsPerUser: { id: 'cron_max_jobs_per_user', type: 'number', default: 10, min: 1, max: 200 },
    /** Where deliveries without a target go (`--to home`); `/hermes sethome` sets it. */
    homeRoomId: { id: 'home_room_id', type: 'string', default: '', rule: z.union([z.literal(''), roomId]) },
    /** Rooms that only receive deliveries: no turns from people's messages. `/hermes automation on|off` edits it. */
    automationRoomIds: { id: 'automation_room_ids', type: 'list', default: '', item: roomId },
    /** Uploads Hermes gets from the trigger message: images up to this size as image parts. */
    maxImageMb: { id: 'max_image_mb', type: 'number', default: 5, min: 0, max: 8 },
    /** …and text-like files up to this size as text. */
    maxTextFileKb: { id: 'max_text_file_kb', type: 'number', default: 256, min: 0, max: 4096 },
    /**
     * Files of the turn's context (the messages its block hands over, the message it quotes) sent like the trigger's, at
     * most this many, 3 MB together (files/contextFiles.ts, turns/turnFiles.ts). 0: none, only named in their lines.
     */
    contextFiles: { id: 'context_files', type: 'number', default: 0, min: 0, max: 10 },
    /** Ask Hermes about this, Summarize this thread, Catch me up, the Hermes panel. */
    messageActions: { id: 'message_actions', type: 'boolean', default: true },
    /** A line under answers: the turn's tokens in and out. */
    usageFooter: { id: 'usage_footer', type: 'boolean', default: false },
    /** Daily budgets (0: none). A turn over one is not sent; the asker is told privately. Admins are exempt. */
    budgetUserTurns: { id: 'budget_user_turns_per_day', type: 'number', default: 0, min: 0, max: 1_000_000 },
    budgetUserTokens: { id: 'budget_user_tokens_per_day', type: 'number', default: 0, min: 0, max: 1_000_000_000 },
    budgetRoomTurns: { id: 'budget_room_turns_per_day', type: 'number', default: 0, min: 0, max: 1_000_000 },
    budgetRoomTokens: { id: 'budget_room_tokens_per_day', type: 'number', default: 0, min: 0, max: 1_000_000_000 },
    /** Room mentions answered in the channel (quoting), in a new thread on the question, or in a thread named from the question. */
    replyMode: { id: 'reply_mode', type: 'select', default: 'channel', choices: ['channel', 'thread', 'auto'] },
} as const satisfies Record<string, Entry>;

export type SettingField = keyof typeof SETTING_TABLE;

const FORM_TYPE: Record<Entry['type'], SettingType> = {
    string: 'string' as SettingType,
    password: 'password' as SettingType,
    number: 'int' as SettingType,
    boolean: 'boolean' as SettingType,
    select: 'select' as SettingType,
    list: 'string' as SettingType,
    text: 'string' as SettingType,
};

function formSetting(entry: Entry): ISetting {
    const setting: ISetting = {
        id: entry.id,
        type: FORM_TYPE[entry.type],
        packageValue: entry.default,
        required: 'required' in entry && entry.required === true,
        public: false,
        i18nLabel: `${entry.id}_label`,
        i18nDescription: `${entry.id}_description`,
    };
    if ('placeholder' in entry && entry.placeholder) {
        setting.i18nPlaceholder = `${entry.id}_placeholder`;
    }
    if (entry.type === 'text') {
        setting.multiline = true;
    }
    if (entry.type === 'select') {
        setting.values = entry.choices.map((key) => ({ key, i18nLabel: `${entry.id}_${key}` }));
    }
    return setting;
}

/** The admin form, in table order. */
export const SETTINGS: ReadonlyArray<ISetting> = (Object.values(SETTING_TABLE) as Entry[]).map(formSetting);
