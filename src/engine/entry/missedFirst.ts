/** When this app process started: the messages of the minute before are looked at again (missedMessages.ts). */
export const PROCESS_STARTED_AT = Date.now();
/** How far before this process's start a message may be whose event died with the process before it. */
export const MISSED_LOOKBACK_MS = 60_000;

/**
 * The first message event of a room in a process that has just started takes that room's
 * missed messages (missedMessages.ts) first: a question whose event died with the process before
 * it, posted before this one, takes its place in the room's line ahead of it. Without this the
 * new process answered the later question at once and the earlier one 11 s later, when the
 * start's sweep found it (npm run chaos: 1–6 questions per long run reached Hermes after later
 * ones of their conversation). The sweep still looks at every room the bot is in; this covers
 * the rooms people write in before it comes.
 *
 * Cost: one read of the room's messages of the window (pages of 50) for the first event of each
 * room (not created since the start) in the first minute of a process, and one read per missed
 * message found; nothing later.
 * Process memory (AppState): one entry per room with an event in that minute.
 */
export class MissedFirst {
    /** Each room's look, and whether it has ended. */
    private readonly rooms = new Map<string, { look: Promise<void>; done: boolean }>();
    /** When this process's start (onEnable) ended: events before it never reached a handler here. */
    private enabledAt: number | undefined;

    constructor(private readonly startedAt = PROCESS_STARTED_AT) {}

    /** The start is over: from now on every message reaches a handler of this process. */
    public enabled(at: number): void {
        this.enabledAt ??= at;
    }

    /**
     * Resolves once the room's missed messages have taken their place in its line (or there are
     * none, or the look failed: the sweep looks again). `take` reads them and puts them in line,
     * resolving when they are in it; it runs once per room, for the first event. `askedAt`: when
     * that event's message was posted. Only messages before it are looked for: a later one has
     * its own event on the way (in a process still in its onEnable, its event may already be
     * queued behind this one) and must not be put ahead of it; one whose event did die is the
     * start's sweep's (TurnJobs.ts `sweepAfterStart`, up to the end of onEnable).
     */
    public before(
        room: { id: string; createdAt?: Date | string },
        now: number,
        take: (window: { since: number; until: number }) => Promise<void>,
        askedAt?: number,
    ): Promise<void> | undefined {
        const looking = this.rooms.get(room.id);
        if (now - this.startedAt > MISSED_LOOKBACK_MS) {
            // No new look after the first minute; one still under way keeps the room's later events behind it.
            for (const [id, l] of this.rooms) {
                if (l.done) {
                    this.rooms.delete(id);
                }
            }
            return looking && !looking.done ? looking.look : undefined;
        }
        const until = Math.min(this.enabledAt ?? now, askedAt === undefined || !Number.isFinite(askedAt) ? Infinity : askedAt - 1);
        const window = { since: this.startedAt - MISSED_LOOKBACK_MS, until };
        if (room.createdAt !== undefined && new Date(room.createdAt).getTime() > window.until) {
            // Created since the start (Rocket.Chat's room converter maps createdAt from the room's `ts`,
            // apps/meteor/app/apps/server/converters/rooms convertRoom): no message whose event this process never got.
            return undefined;
        }
        if (looking) {
            return looking.look;
        }
        const entry = { look: take(window).catch(() => undefined), done: false };
        void entry.look.then(() => (entry.done = true));
        this.rooms.set(room.id, entry);
        return entry.look;
    }
}
