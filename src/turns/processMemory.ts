/**
 * What this app process keeps in memory about the turns it works on, in one object. Each module
 * names the collection it keeps (`map`, `set`) and holds a handle to it; the collections live
 * here, so there is one inventory of them (`sizes`) and one lifetime: made when the process
 * loads the app, gone with the process.
 *
 * Nothing here is needed after a restart: the persisted records are the truth, and a new
 * process finds its turns through the sweep. What is here spares reads (what this process
 * wrote a moment ago), keeps one process from doing one thing twice at once (a turn's ticks,
 * its chain's next tick), or holds what cannot be stored (a typing indicator's stop).
 */
class ProcessMemory {
    private readonly held = new Map<string, { readonly size: number }>();

    public map<K, V>(name: string): Map<K, V> {
        return this.keep(name, new Map<K, V>());
    }

    public set<T>(name: string): Set<T> {
        return this.keep(name, new Set<T>());
    }

    /** How many entries each collection holds now, by name: a turn that ended leaves none behind in the per-turn ones. */
    public sizes(): Record<string, number> {
        return Object.fromEntries([...this.held].map(([name, c]) => [name, c.size]));
    }

    private keep<C extends { readonly size: number }>(name: string, collection: C): C {
        // A module loaded again (a test that resets its modules) replaces its own.
        this.held.set(name, collection);
        return collection;
    }
}

export const processMemory = new ProcessMemory();
