/** Counts bridge calls by kind, so tests and the benchmark can say what a turn costs the server. */
export type CallKind = 'read' | 'write' | 'persistence' | 'http' | 'other';

export class CallLog {
    public readonly counts = new Map<string, number>();
    /** Each call with its time (performance.now()), for timelines; bounded. */
    public readonly timeline: Array<{ at: number; key: string }> = [];

    public record(kind: CallKind, name: string): void {
        const key = `${kind}:${name}`;
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
        if (this.timeline.length < 10_000) {
            this.timeline.push({ at: performance.now(), key });
        }
    }

    public reset(): void {
        this.counts.clear();
        this.timeline.length = 0;
    }

    public snapshot(): Record<string, number> {
        return Object.fromEntries(this.counts);
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
