/**
 * Message ids this app process has already taken as a turn. A DM to the bot arrives twice
 * (IPostMessageSentToBot, then IPostMessageSent); the first claim wins. Bounded so a busy
 * server cannot grow it without limit.
 */
export class RecentlySeen {
    private readonly seen = new Map<string, number>();

    constructor(private readonly capacity = 5000) {}

    /** Whether the id was claimed here already (the message's other event, or an edit of a message taken). */
    public has(id: string): boolean {
        return this.seen.has(id);
    }

    /** True the first time an id is claimed, false afterwards. */
    public claim(id: string): boolean {
        if (this.seen.has(id)) {
            return false;
        }
        this.seen.set(id, Date.now());
        if (this.seen.size > this.capacity) {
            const oldest = this.seen.keys().next().value as string;
            this.seen.delete(oldest);
        }
        return true;
    }
}
