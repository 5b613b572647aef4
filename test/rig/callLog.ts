/** Counts bridge calls by kind, so tests and the benchmark can say what a turn costs the server. */
export type CallKind = 'read' | 'write' | 'persistence' | 'http' | 'other';

export class CallLog {
    public readonly counts = new Map<string, number>();

    public record(kind: CallKind, name: string): void {
        const key = `${kind}:${name}`;
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    }

    public reset(): void {
        this.counts.clear();
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
