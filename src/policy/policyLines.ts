/*
 * The `room_policies` setting's text read into entries: the line format below, its limits, and
 * each problem with its line number. Lookups and descriptions are in roomPolicy.ts.
 */

/**
 * Per-room policy: the `room_policies` setting maps Rocket.Chat room IDs to what the bot does there.
 *
 * One entry per line, `<roomId> key=value key=value …`; blank lines and lines starting with `#` are ignored (a `#`
 * later in a line is not a comment). Keys, each at most once per line:
 *   profile=<name>   the Hermes profile the room's turns go to (`/p/<name>/…` on the api_server)
 *   model=<alias>    a Hermes `model_routes` alias, sent as the request's `model`
 *   prompt="…"       a room instruction added to the system message; double quotes required, `\"` and `\\` the only escapes
 *   mode=mention|free|off   mention: a mention starts a turn (the default); free: every message does; off: the bot is silent
 *   off              shorthand for mode=off
 * Values other than the prompt may be quoted too. A room ID alone is an entry that gives the room the defaults.
 *
 * An entry replaces the defaults as a whole: keys it leaves out take the default, never another line's value.
 * A line that cannot be read is reported with its number; when its first word is a room ID, that room is `broken` and
 * refuses service, because a room the operator meant to restrict must not quietly get the default. A room listed on
 * two lines is broken the same way. Problem reasons never quote the setting's text, so they are safe for the log.
 */

type RoomMode = 'mention' | 'free' | 'off';

export interface RoomPolicy {
    profile?: string;
    model?: string;
    prompt?: string;
    mode: RoomMode;
    /** How mentions are answered here (reply_mode for this room); absent: the reply_mode setting. */
    reply?: 'channel' | 'thread' | 'auto';
}

interface PolicyProblem {
    /** 1-based line of the setting. */
    line: number;
    /** The room the line names, when its first word is a room ID; that room is broken. */
    roomId?: string;
    reason: string;
}

export interface RoomPolicies {
    entries: ReadonlyMap<string, Readonly<RoomPolicy>>;
    /** Rooms named by an unreadable or repeated line: they refuse service. */
    broken: ReadonlySet<string>;
    /** In line order. */
    problems: PolicyProblem[];
}

/** What an entry's keys default to, and what a room without an entry gets. */
export const DEFAULT_ROOM_POLICY: Readonly<RoomPolicy> = Object.freeze({ mode: 'mention' });

/** Lines past this are not parsed (the setting is admin text, but parsing stays bounded); see parseRoomPolicies. */
const MAX_LINES = 500;
const MAX_PROMPT_CHARS = 2000;
/** Rocket.Chat IDs are 17 alphanumerics; `GENERAL` and imported rooms use other ids in this alphabet. */
const ROOM_ID = /^[A-Za-z0-9_-]{1,64}$/;
const PROFILE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MODEL = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$/;
const MODES: readonly string[] = ['mention', 'free', 'off'];
/** Control characters, line/paragraph separators and bidi overrides: none belongs in a one-line instruction. */
const UNFIT_IN_PROMPT = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

type Key = 'profile' | 'model' | 'prompt' | 'mode' | 'reply';
const KEYS: readonly string[] = ['profile', 'model', 'prompt', 'mode', 'reply'];
const REPLY_MODES: readonly string[] = ['channel', 'thread', 'auto'];

type LineResult = { roomId?: string; policy: RoomPolicy } | { roomId?: string; reason: string };

/** Reads the setting. Never throws; bounded to MAX_LINES lines of parsing. */
export function parseRoomPolicies(text: string): RoomPolicies {
    const lines = typeof text === 'string' ? text.split('\n') : [];
    const problems: PolicyProblem[] = [];
    const broken = new Set<string>();
    const seen = new Map<string, number[]>();
    const policies = new Map<string, RoomPolicy>();

    lines.slice(0, MAX_LINES).forEach((raw, index) => {
        const line = index + 1;
        const result = parseLine(raw);
        if (!result) {
            return;
        }
        if (result.roomId !== undefined) {
            seen.set(result.roomId, [...(seen.get(result.roomId) ?? []), line]);
        }
        if ('reason' in result) {
            problems.push({ line, ...(result.roomId !== undefined ? { roomId: result.roomId } : {}), reason: result.reason });
            if (result.roomId !== undefined) broken.add(result.roomId);
        } else if (result.roomId !== undefined) {
            policies.set(result.roomId, result.policy);
        }
    });
    for (const [roomId, at] of seen) {
        if (at.length > 1) {
            broken.add(roomId);
            at.forEach((line) => problems.push({ line, roomId, reason: `room listed more than once (lines ${at.join(', ')})` }));
        }
    }
    refuseUnreadRooms(lines, problems, broken);

    const entries = new Map<string, Readonly<RoomPolicy>>();
    for (const [roomId, policy] of policies) {
        if (!broken.has(roomId)) entries.set(roomId, Object.freeze(policy));
    }
    problems.sort((a, b) => a.line - b.line);
    return { entries, broken, problems };
}

/**
 * Lines past MAX_LINES are not parsed, but a room they name is broken rather than left on the default: the operator
 * wrote something for it. Finding a line's first word is cheap, so this stays linear in the text.
 */
function refuseUnreadRooms(lines: string[], problems: PolicyProblem[], broken: Set<string>): void {
    let unread = 0;
    for (const raw of lines.slice(MAX_LINES)) {
        const content = raw.trim();
        if (content.length === 0 || content.startsWith('#')) continue;
        unread += 1;
        const first = content.split(/\s/, 1)[0];
        if (ROOM_ID.test(first)) broken.add(first);
    }
    if (unread > 0) {
        problems.push({
            line: MAX_LINES + 1,
            reason: `more than ${MAX_LINES} lines: ${unread} entries after line ${MAX_LINES} were not read and their rooms refuse service`,
        });
    }
}

/** One line: undefined for blank and comment lines, else the room it names (if any) and its policy or why it is unreadable. */
function parseLine(raw: string): LineResult | undefined {
    const content = raw.trim();
    if (content.length === 0 || content.startsWith('#')) {
        return undefined;
    }
    const split = /\s/.exec(content);
    const first = split ? content.slice(0, split.index) : content;
    if (!ROOM_ID.test(first)) {
        return { reason: 'the first word is not a room ID (1 to 64 letters, digits, _ or -)' };
    }
    const items = readItems(split ? content.slice(split.index) : '');
    if ('reason' in items) {
        return { roomId: first, reason: items.reason };
    }
    const policy = policyOf(items.values);
    return 'reason' in policy ? { roomId: first, reason: policy.reason } : { roomId: first, policy };
}

interface Item {
    key: string;
    value: string;
    quoted: boolean;
}

/** Splits `key=value key="quoted value" off …` into items; a quoted value runs to its closing quote, spaces and all. */
function readItems(rest: string): { values: Item[] } | { reason: string } {
    const values: Item[] = [];
    let i = 0;
    while (i < rest.length) {
        if (/\s/.test(rest[i])) {
            i += 1;
            continue;
        }
        let end = i;
        while (end < rest.length && rest[end] !== '=' && !/\s/.test(rest[end])) end += 1;
        const key = rest.slice(i, end);
        if (rest[end] !== '=') {
            if (key !== 'off') return { reason: 'expected key=value or off' };
            values.push({ key: 'mode', value: 'off', quoted: false });
            i = end;
            continue;
        }
        const read = rest[end + 1] === '"' ? readQuoted(rest, end + 2) : readBare(rest, end + 1);
        if ('reason' in read) return read;
        values.push({ key, value: read.value, quoted: rest[end + 1] === '"' });
        i = read.next;
    }
    return { values };
}

function readBare(rest: string, start: number): { value: string; next: number } {
    let end = start;
    while (end < rest.length && !/\s/.test(rest[end])) end += 1;
    return { value: rest.slice(start, end), next: end };
}

/** From just after the opening quote to just after the closing one; `\"` and `\\` are the only escapes. */
function readQuoted(rest: string, start: number): { value: string; next: number } | { reason: string } {
    let value = '';
    for (let i = start; i < rest.length; i += 1) {
        const c = rest[i];
        if (c === '"') {
            if (i + 1 < rest.length && !/\s/.test(rest[i + 1])) return { reason: 'text right after a closing quote' };
            return { value, next: i + 1 };
        }
        if (c === '\\') {
            const escaped = rest[i + 1];
            if (escaped !== '"' && escaped !== '\\') return { reason: 'unknown escape in quotes (only \\" and \\\\)' };
            value += escaped;
            i += 1;
        } else {
            value += c;
        }
    }
    return { reason: 'unterminated quote' };
}

/** The entry from its items: every key checked, none twice; keys left out take the default. */
function policyOf(items: Item[]): RoomPolicy | { reason: string } {
    const given = new Map<Key, string>();
    for (const item of items) {
        if (!KEYS.includes(item.key)) return { reason: `unknown key (known: ${KEYS.join(', ')})` };
        const key = item.key as Key;
        if (given.has(key)) return { reason: `${key} given twice` };
        const problem = valueProblem(key, item.value, item.quoted);
        if (problem) return { reason: problem };
        given.set(key, item.value);
    }
    const policy: RoomPolicy = { mode: (given.get('mode') as RoomMode | undefined) ?? DEFAULT_ROOM_POLICY.mode };
    for (const key of ['profile', 'model', 'prompt'] as const) {
        const value = given.get(key);
        if (value !== undefined) policy[key] = value;
    }
    const reply = given.get('reply');
    if (reply !== undefined) policy.reply = reply as RoomPolicy['reply'];
    return policy;
}

function valueProblem(key: Key, value: string, quoted: boolean): string | undefined {
    if (value.length === 0) return `empty ${key}`;
    switch (key) {
        case 'profile':
            return PROFILE.test(value) ? undefined : 'profile must be 1 to 64 letters, digits, _ . or -, starting with a letter or digit';
        case 'model':
            return MODEL.test(value) ? undefined : 'model must be 1 to 128 letters, digits, _ . : / or -, starting with a letter or digit';
        case 'mode':
            return MODES.includes(value) ? undefined : 'mode must be mention, free or off';
        case 'reply':
            return REPLY_MODES.includes(value) ? undefined : 'reply must be channel, thread or auto';
        case 'prompt':
            if (!quoted) return 'prompt must be in double quotes';
            if (value.length > MAX_PROMPT_CHARS) return `prompt longer than ${MAX_PROMPT_CHARS} characters`;
            return UNFIT_IN_PROMPT.test(value) ? 'prompt contains a control or direction character' : undefined;
    }
}
