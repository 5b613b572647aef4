import { HermesCapabilities } from './capabilities';
import { HermesClient } from './client';

const TTL_MS = 5 * 60_000;

/**
 * What the configured Hermes offers, probed when settings change and at start, then kept
 * for a few minutes: turns must not pay two extra requests each.
 */
export class CapabilitiesCache {
    private cached: { for: string; value: HermesCapabilities; at: number } | undefined;

    public async get(hermes: HermesClient, identity: string, now = Date.now()): Promise<HermesCapabilities> {
        if (this.cached && this.cached.for === identity && now - this.cached.at < TTL_MS) {
            return this.cached.value;
        }
        return this.refresh(hermes, identity, now);
    }

    public async refresh(hermes: HermesClient, identity: string, now = Date.now()): Promise<HermesCapabilities> {
        const value = await hermes.capabilities();
        this.cached = { for: identity, value, at: now };
        return value;
    }

    public forget(): void {
        this.cached = undefined;
    }
}
