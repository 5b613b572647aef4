import { z } from '../generated/zodBundle';
import { SETTING_TABLE, SettingField } from './definitions';

/** A comma/space/newline separated list, trimmed, empties dropped, duplicates removed. */
export function splitList(raw: unknown): string[] {
    if (typeof raw !== 'string') {
        return [];
    }
    return [
        ...new Set(
            raw
                .split(/[\s,]+/)
                .map((s) => s.trim())
                .filter((s) => s.length > 0),
        ),
    ];
}

type Table = typeof SETTING_TABLE;
type Entry = Table[SettingField];

/** The zod rule of one table entry (whole numbers within bounds, a choice, a list of checked items, …). */
function ruleOf(entry: Entry): z.ZodTypeAny {
    switch (entry.type) {
        case 'number':
            return z.coerce
                .number()
                .int('must be a whole number')
                .min(entry.min, `must be at least ${entry.min}`)
                .max(entry.max, `must be at most ${entry.max}`);
        case 'boolean':
            return z.boolean();
        case 'select':
            return z.enum(entry.choices as unknown as [string, ...string[]]);
        case 'list':
            return z.array(entry.item);
        default:
            return entry.rule;
    }
}

/** A raw admin value as the rule expects it: lists split and normalised, strings defaulted. */
function prepare(entry: Entry, raw: unknown): unknown {
    const value = raw ?? entry.default;
    if (entry.type === 'list') {
        const normalise = 'normalise' in entry ? entry.normalise : undefined;
        return splitList(value).map((item) => (normalise ? normalise(item) : item));
    }
    if (entry.type === 'string' || entry.type === 'password' || entry.type === 'text') {
        return typeof value === 'string' ? value : entry.default;
    }
    return value;
}

const FIELDS = Object.keys(SETTING_TABLE) as SettingField[];

/** The typed configuration every other module receives. Parsed once per settings change. */
export const ConfigSchema = z
    .object(Object.fromEntries(FIELDS.map((f) => [f, ruleOf(SETTING_TABLE[f])])) as { [F in SettingField]: z.ZodTypeAny })
    .strict()
    .refine((c) => (c.historyMinMessages as number) <= (c.historyMaxMessages as number), {
        message: 'must not exceed history_max_messages',
        path: ['historyMinMessages'],
    });

/** Each field's type, from its entry. */
type ValueOf<E> = E extends { type: 'number' }
    ? number
    : E extends { type: 'boolean' }
      ? boolean
      : E extends { type: 'select'; choices: readonly (infer C)[] }
        ? C
        : E extends { type: 'list'; item: z.ZodType<infer I> }
          ? I[]
          : E extends { rule: z.ZodType<infer O> }
            ? O
            : never;

export type HermesConfig = { [F in SettingField]: ValueOf<Table[F]> };

/** Defaults of every setting but the two without one, for tests and tools that build a config by hand. */
export const DEFAULT_OPTIONS: Omit<HermesConfig, 'hermesUrl' | 'hermesApiKey'> = (() => {
    const parsed = ConfigSchema.safeParse({
        ...Object.fromEntries(FIELDS.map((f) => [f, prepare(SETTING_TABLE[f], undefined)])),
        hermesUrl: 'http://default.invalid',
        hermesApiKey: 'k'.repeat(16),
    });
    if (!parsed.success) {
        throw new Error(`a setting's default breaks its own rule: ${parsed.error.message}`);
    }
    const { hermesUrl: _url, hermesApiKey: _key, ...defaults } = parsed.data as HermesConfig;
    return defaults;
})();

/** Raw admin values by setting id. */
export type RawSettings = Partial<Record<string, unknown>>;

export type ConfigResult = { ok: true; config: HermesConfig } | { ok: false; problems: string[] };

/**
 * Turns raw admin values into a config, or a list of problems that name the setting id and
 * never echo a value (the API key must not reach the log through an error message).
 */
export function parseConfig(raw: RawSettings): ConfigResult {
    const input = Object.fromEntries(FIELDS.map((f) => [f, prepare(SETTING_TABLE[f], raw[SETTING_TABLE[f].id])]));
    const result = ConfigSchema.safeParse(input);
    if (result.success) {
        return { ok: true, config: result.data as HermesConfig };
    }
    const problems = result.error.issues.map((issue) => {
        const field = issue.path[0] as SettingField;
        const item = issue.path.length > 1 ? ` (entry ${Number(issue.path[1]) + 1})` : '';
        return `${SETTING_TABLE[field]?.id ?? String(field)}${item} ${issue.message}`;
    });
    return { ok: false, problems };
}
