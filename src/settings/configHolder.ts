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
    private loaded = false;

    public get(): HermesConfig | undefined {
        return this.current;
    }

    /** Whether settings were read in this app process at all (a restarted process starts empty). */
    public isLoaded(): boolean {
        return this.loaded;
    }

    public apply(raw: RawSettings): ConfigUpdate {
        this.loaded = true;
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
