import { HermesConfig, parseConfig, RawSettings } from './config';

export type ConfigUpdate =
    { kind: 'applied'; config: HermesConfig } | { kind: 'kept-last-good'; config: HermesConfig; problems: string[] } | { kind: 'unusable'; problems: string[] };

/**
 * Holds the configuration the app acts on. An invalid change keeps the last good
 * configuration (so a typo in the allowlist cannot open the bot to everyone); without any
 * good configuration the app refuses turns. The last good one is also persisted (see
 * ensureConfig), so a restarted process with invalid settings can take it up again.
 */
export class ConfigHolder {
    private current: HermesConfig | undefined;
    private loaded = false;
    /** Applied from the settings but not yet persisted (settings events carry no persistence accessor). */
    private unsaved: HermesConfig | undefined;
    private storedTried = false;

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
            this.unsaved = parsed.config;
            return { kind: 'applied', config: parsed.config };
        }
        if (this.current) {
            return { kind: 'kept-last-good', config: this.current, problems: parsed.problems };
        }
        return { kind: 'unusable', problems: parsed.problems };
    }

    /** True once per process while there is no configuration: whether to look for a stored one. */
    public shouldTryStored(): boolean {
        if (this.current || this.storedTried) {
            return false;
        }
        this.storedTried = true;
        return true;
    }

    /** Takes up a persisted last good configuration; never replaces one from the settings. */
    public adoptStored(config: HermesConfig): boolean {
        if (this.current) {
            return false;
        }
        this.current = config;
        return true;
    }

    /** The applied configuration still to persist, if any. */
    public pendingSave(): HermesConfig | undefined {
        return this.unsaved;
    }

    public saved(config: HermesConfig): void {
        if (this.unsaved === config) {
            this.unsaved = undefined;
        }
    }

    /** Its write failed: still to persist, unless a newer one was applied meanwhile. */
    public saveFailed(config: HermesConfig): void {
        this.unsaved ??= config;
    }
}
