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
    private readonly rooms = new Map<string, Promise<void>>();
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
     * resolving when they are in it; it runs once per room, for the first event.
     */
    public before(
        room: { id: string; createdAt?: Date | string },
        now: number,
        take: (window: { since: number; until: number }) => Promise<void>,
    ): Promise<void> | undefined {
        if (now - this.startedAt > MISSED_LOOKBACK_MS) {
            this.rooms.clear();
            return undefined;
        }
        const window = { since: this.startedAt - MISSED_LOOKBACK_MS, until: this.enabledAt ?? now };
        if (room.createdAt !== undefined && new Date(room.createdAt).getTime() > window.until) {
            // Created since the start (Rocket.Chat's room converter maps createdAt from the room's `ts`,
            // apps/meteor/app/apps/server/converters/rooms convertRoom): no message whose event this process never got.
            return undefined;
        }
        let looked = this.rooms.get(room.id);
        if (!looked) {
            looked = take(window).catch(() => undefined);
            this.rooms.set(room.id, looked);
        }
        return looked;
    }
}
