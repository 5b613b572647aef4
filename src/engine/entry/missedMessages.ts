import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
/** Messages read per page, newest first, until a page reaches back before the window. */
const PAGE = 50;
/** Messages of one room looked at, at most: a room busier than this in the window is a flood, not a restart's loss. */
const PER_ROOM = 1_000;
/** Rooms looked at, at most: one read each. */
const MAX_ROOMS = 2_000;

type Accessors = { read: IRead; modify: IModify; persistence: IPersistence; logger: ILogger };

/** What the look needs of the app: the bot, and the message handler's way to take missed messages. */
export interface MissedMessagesDeps {
    botUser(read: IRead): Promise<IUser | undefined>;
    takeMissed(missed: MissedMessage[], a: Accessors): Array<Promise<void>>;
}

type Raw = { id?: string; createdAt?: Date | string; threadId?: string; sender?: { _id?: string; id?: string } };

/**
 * Messages whose event died with the app process before it stored anything. The engine sends
 * a message event into the app once: `checkPostMessageSent`, then `executePostMessageSent`
 * (AppListenerManager.executePostMessageSent). A process killed while either runs (or started
 * again while the message was posted) leaves a call the engine gives up on at its 30 s timeout,
 * and only a DM gets a second chance (its `executePostMessageSentToBot` call comes first). The
 * app's persistence holds nothing of such a message, so the process that starts next reads
 * the messages of the bot's rooms from the minute before its start and hands each to the
 * message handler as its event would have: admission, the receipt (a message already taken is
 * left alone, so one the old process answered, or whose event comes later, is not answered
 * twice), and the turn. In createdAt order, each taking its place in its room's line at once.
 *
 * Cost, once per process start: one read of the bot's rooms, one read per room and 50 of its
 * messages in the window, one read per message of the window not written by the bot (the
 * message whole, as its event carries it, read once it has its place in line); nothing on the
 * turn path.
 */
export async function takeMissedMessages(
    app: Pick<MissedMessagesDeps, 'botUser'>,
    handler: Pick<MissedMessagesDeps, 'takeMissed'>,
    a: Accessors,
    window: { since: number; until: number },
): Promise<number> {
    const bot = await app.botUser(a.read);
    if (!bot) {
        return 0;
    }
    const rooms = (await a.read.getUserReader().getUserRoomIds(bot.id)).slice(0, MAX_ROOMS);
    const missed = await missedIn(a.read, rooms, bot.id, window);
    await Promise.all(handler.takeMissed(missed, a));
    return missed.length;
}

/** A message of the window as the room's page shows it: enough to take its place in its room's line. */
export interface MissedMessage {
    id: string;
    roomId: string;
    threadId?: string;
}

/** The messages of `rooms` in the window not written by the bot, oldest first (one page read per room and 50 messages). */
export async function missedIn(read: IRead, rooms: string[], botId: string, window: { since: number; until: number }): Promise<MissedMessage[]> {
    const inWindow = (m: Raw) => {
        const at = m.createdAt ? new Date(m.createdAt).getTime() : NaN;
        const sender = m.sender?._id ?? m.sender?.id;
        return at >= window.since && at <= window.until && sender !== botId && typeof m.id === 'string';
    };
    const pages = await Promise.all(
        rooms.map((roomId) => windowOf(read, roomId, window.since).then((page) => page.filter(inWindow).map((m) => ({ ...m, roomId })))),
    );
    return pages
        .flat()
        .sort((x, y) => new Date(x.createdAt as Date).getTime() - new Date(y.createdAt as Date).getTime())
        .map((m) => ({ id: m.id as string, roomId: m.roomId, threadId: m.threadId || undefined }));
}

/**
 * A room's messages from the newest back to `since`, page by page: every message of the window,
 * however busy the room was in it (a kill under load loses events in a busy room most of all).
 */
async function windowOf(read: IRead, roomId: string, since: number): Promise<Raw[]> {
    const found: Raw[] = [];
    try {
        for (let skip = 0; skip < PER_ROOM; skip += PAGE) {
            const page = (await read
                .getRoomReader()
                .getMessages(roomId, { limit: PAGE, skip, sort: { createdAt: 'desc' }, showThreadMessages: true })) as unknown as Raw[];
            found.push(...page);
            const oldest = page[page.length - 1]?.createdAt;
            if (page.length < PAGE || !oldest || new Date(oldest).getTime() < since) {
                break;
            }
        }
    } catch {
        // A room that cannot be read keeps what was read of it.
    }
    return found;
}
