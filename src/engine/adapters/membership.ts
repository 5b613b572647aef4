import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { GroupedReads } from './groupedRead';
import { PostingFacts, PostingRefusal, postingRefusal } from '../../admission/botPosting';

/**
 * The bot's room ids, one read shared by the events of this process that ask while one is in
 * flight (a burst of mentions reads them a few times, not once a mention). A caller joins only
 * a read sent after it asked, so what it learns is never older than its message.
 */
const botRooms = new GroupedReads<string[]>();

/**
 * App users can post anywhere, so the app itself keeps the bot to rooms it was added to. A
 * direct room lists its members; other rooms cost one read of the bot's room ids (whose
 * cost follows the bot's own room count, not the room's size).
 */
export async function roomHasBot(read: IRead, room: { id: string; userIds?: string[] }, botId: string): Promise<boolean> {
    if (room.userIds && room.userIds.length > 0) {
        return room.userIds.includes(botId);
    }
    return (await botRooms.get(botId, () => read.getUserReader().getUserRoomIds(botId))).includes(room.id);
}

/**
 * The rooms a person and the bot are both members of now: what the MCP tools, `/history` and an
 * answer's links may show that person. Two reads side by side (the bot's shared with the events
 * of this process that ask at the same moment).
 */
export async function sharedRoomIds(read: IRead, userId: string, botId: string): Promise<string[]> {
    const [mine, bots] = await Promise.all([
        read.getUserReader().getUserRoomIds(userId),
        botRooms.get(botId, () => read.getUserReader().getUserRoomIds(botId)),
    ]);
    const bot = new Set(bots ?? []);
    return (mine ?? []).filter((id) => bot.has(id));
}

/**
 * Whether a person is a member of a room now (a subscription: what the server's
 * `getUserRoomIds` lists). A direct room carries its members' ids; any other room costs one read
 * of the person's room ids. A public channel the person could open but never joined is not
 * theirs here: the app answers members only. Never shared between callers (each asks about
 * someone else).
 */
export async function userInRoom(read: IRead, userId: string, room: { id: string; type?: unknown; userIds?: string[] }): Promise<boolean> {
    if (String(room.type) === 'd') {
        return (room.userIds ?? []).includes(userId);
    }
    return (await read.getUserReader().getUserRoomIds(userId)).includes(room.id);
}

/** Roles that hold `post-readonly` by default on Rocket.Chat (its permissions table): server-wide, or the room's own. */
const POST_READONLY = ['admin', 'owner', 'moderator'];

/**
 * Whether a member may post in the room: every member may, except in a read-only room, where
 * the server lets only holders of `post-readonly` post (`sendMessage` → `canSendMessageAsync`:
 * admins, and the room's owners and moderators by default). Reads the room's owners and
 * moderators only for a read-only room.
 */
export async function userMayPost(read: IRead, user: Pick<IUser, 'id' | 'roles'>, room: Pick<IRoom, 'id' | 'isReadOnly'>): Promise<boolean> {
    if (!room.isReadOnly || (user.roles ?? []).some((r) => POST_READONLY.includes(r))) {
        return true;
    }
    const rooms = read.getRoomReader();
    const [owners, moderators] = await Promise.all([rooms.getOwners(room.id), rooms.getModerators(room.id)]);
    return [...owners, ...moderators].some((u) => u?.id === user.id);
}

/**
 * Whether a person is a member of a room now, for the session commands of one engine call: the
 * rooms the server lists for them (`getUserRoomIds`, their subscriptions, DMs included — the
 * same read `userInRoom` makes for a room). A command asks about every room its sessions were
 * in, so the list is read once per person and call, however many rooms; never kept longer, as
 * membership is what the command must see now.
 */
export function memberships(read: IRead): (userId: string, roomId: string) => Promise<boolean> {
    const rooms = new Map<string, Promise<string[]>>();
    return async (userId, roomId) => {
        let ids = rooms.get(userId);
        if (!ids) {
            ids = read.getUserReader().getUserRoomIds(userId);
            rooms.set(userId, ids);
        }
        return (await ids).includes(roomId);
    };
}

/**
 * What the server decides a post on (admission/botPosting.ts), from the room the engine gives:
 * `isReadOnly` is mapped; `muted`, `unmuted` and `encrypted` arrive under `_unmappedProperties_`
 * (the room converter maps neither). No read.
 */
function postingFactsOf(room: Pick<IRoom, 'isReadOnly'>): PostingFacts {
    const extra = ((room as { _unmappedProperties_?: unknown })._unmappedProperties_ ?? {}) as { muted?: unknown; unmuted?: unknown; encrypted?: unknown };
    const names = (v: unknown) => (Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string') : []);
    return { readOnly: room.isReadOnly === true, muted: names(extra.muted), unmuted: names(extra.unmuted), encrypted: extra.encrypted === true };
}

/**
 * Whether the server would refuse the bot's post in the room, and why. A read-only room is
 * read-only for the bot unless it holds `post-readonly` there: one read of the room's owners and
 * moderators, only for a read-only room the bot's own roles do not open.
 */
export async function botPostingRefusal(read: IRead, room: IRoom, bot: Pick<IUser, 'id' | 'username' | 'roles'>): Promise<PostingRefusal | undefined> {
    const refusal = postingRefusal(postingFactsOf(room), bot);
    return refusal === 'read-only' && (await userMayPost(read, bot, room)) ? undefined : refusal;
}
