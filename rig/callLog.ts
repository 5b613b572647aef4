import { AsyncLocalStorage } from 'async_hooks';

/** Counts bridge calls by kind, so tests and the benchmark can say what a turn costs the server. */
export type CallKind = 'read' | 'write' | 'persistence' | 'http' | 'other';

export class CallLog {
    public readonly counts = new Map<string, number>();
    /** The same counts per app that made the call (the appId the engine passed to the bridge; see RigAppBridges). */
    public readonly countsByApp = new Map<string, Map<string, number>>();
    /** Each call with its time (performance.now()), app and what it touched (e.g. a persistence record's associations), for timelines; bounded. */
    public readonly timeline: Array<{ at: number; key: string; app?: string; detail?: string }> = [];
    private readonly caller = new AsyncLocalStorage<string>();

    public record(kind: CallKind, name: string, detail?: string): void {
        const key = `${kind}:${name}`;
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
        const app = this.caller.getStore();
        if (app) {
            let mine = this.countsByApp.get(app);
            if (!mine) {
                mine = new Map();
                this.countsByApp.set(app, mine);
            }
            mine.set(key, (mine.get(key) ?? 0) + 1);
        }
        if (this.timeline.length < 10_000) {
            this.timeline.push({ at: performance.now(), key, app, detail });
        }
    }

    /** Runs one bridge call on behalf of `appId` (synchronously), so `record` can tell the apps apart. */
    public onBehalfOf<T>(appId: string | undefined, call: () => T): T {
        return appId ? this.caller.run(appId, call) : call();
    }

    public reset(): void {
        this.counts.clear();
        this.countsByApp.clear();
        this.timeline.length = 0;
    }

    /** Every call since the last reset, by `kind:name`; with `appId`, only that app's. */
    public snapshot(appId?: string): Record<string, number> {
        return Object.fromEntries(appId === undefined ? this.counts : (this.countsByApp.get(appId) ?? []));
    }

    public total(kind: CallKind): number {
        let sum = 0;
        for (const [key, n] of this.counts) {
            if (key.startsWith(`${kind}:`)) {
                sum += n;
            }
        }
        return sum;
    }
}
