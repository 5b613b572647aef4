/**
 * One read shared by every caller of this process that asks while the read before it is in
 * flight: when a hundred turns arrive at once, each needs the open turns' tickets after its own
 * write, and a hundred reads of a hundred tickets cost the Deno thread a second of decoding
 * (`npm run bench` part 4) where a few shared reads cost a few milliseconds.
 *
 * A caller only ever joins a read sent after it asked, never one already in flight: whoever
 * asks right after writing its own record gets an answer the server made after that write (the
 * write-then-read that lets two instances see each other's claims, turns/freshClaim.ts). At most
 * one read is in flight; the callers that ask meanwhile share the next, sent when it returns. A
 * lone caller's read is sent at once.
 */
export class GroupedRead<T> {
    /** The read in flight, if one is. */
    private current?: Promise<T>;
    /** The read the callers waiting for the one in flight share, not sent yet. */
    private next?: { promise: Promise<T>; send: () => void };

    /** `onIdle`: called when a read returns and nobody waits for another. */
    constructor(private readonly onIdle?: () => void) {}

    /**
     * For a caller that wrote nothing the read must show (a finishing turn looking for waiters to
     * wake): the read in flight if there is one, else as `get`.
     */
    public recent(read: () => Promise<T>): Promise<T> {
        return this.current ?? this.get(read);
    }

    /** `read`: how this caller would read (its call's accessor); the first caller of a group sends its own. */
    public get(read: () => Promise<T>): Promise<T> {
        if (!this.current) {
            return this.send(read);
        }
        if (!this.next) {
            let send!: () => void;
            const promise = new Promise<T>((resolve, reject) => {
                send = () => this.send(read).then(resolve, reject);
            });
            this.next = { promise, send };
        }
        return this.next.promise;
    }

    private send(read: () => Promise<T>): Promise<T> {
        const sent = Promise.resolve().then(read);
        this.current = sent;
        const done = () => {
            this.current = undefined;
            const next = this.next;
            this.next = undefined;
            if (next) {
                next.send();
            } else {
                this.onIdle?.();
            }
        };
        sent.then(done, done);
        return sent;
    }
}

/**
 * A {@link GroupedRead} per key (a session's record, the bot's rooms), forgotten as soon as no
 * read of that key is in flight or waiting: it holds nothing between bursts.
 */
export class GroupedReads<T> {
    private readonly byKey = new Map<string, GroupedRead<T>>();

    public get(key: string, read: () => Promise<T>): Promise<T> {
        let grouped = this.byKey.get(key);
        if (!grouped) {
            const made = new GroupedRead<T>(() => {
                if (this.byKey.get(key) === made) {
                    this.byKey.delete(key);
                }
            });
            grouped = made;
            this.byKey.set(key, grouped);
        }
        return grouped.get(read);
    }

    /** Keys with a read in flight (tests). */
    public get size(): number {
        return this.byKey.size;
    }
}
