import { HermesConfig, parseConfig, RawSettings } from './config';

export type ConfigUpdate =
    | { kind: 'applied'; config: HermesConfig }
    | { kind: 'kept-last-good'; config: HermesConfig; problems: string[] }
    | { kind: 'unusable'; problems: string[] };

/**
 * Holds the configuration the app acts on. An invalid change keeps the last good
 * configuration (so a typo in the allowlist cannot open the bot to everyone); without any
 * good configuration the app refuses turns.
 */
export class ConfigHolder {
    private current: HermesConfig | undefined;

    public get(): HermesConfig | undefined {
        return this.current;
    }

    public apply(raw: RawSettings): ConfigUpdate {
        const parsed = parseConfig(raw);
        if (parsed.ok) {
            this.current = parsed.config;
            return { kind: 'applied', config: parsed.config };
        }
        if (this.current) {
            return { kind: 'kept-last-good', config: this.current, problems: parsed.problems };
        }
        return { kind: 'unusable', problems: parsed.problems };
    }
}
