import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { Place } from '../../commands/cronCommandPorts';
import { CronJob } from '../../cron/job';
import { accessRefusal, AccessRefusal } from '../../admission/access';
import { HermesConfig } from '../../settings/config';
import { AdmissionConfig, describeRefusal, roomRules } from '../../admission/turnAdmission';
import { botPostingRefusal, roomHasBot, userInRoom, userMayPost } from './membership';

/** A room as a delivery place (a direct room of two is a DM). */
function placeOf(room: IRoom, threadId?: string): Place {
    const type = String(room.type);
    const dm = type === 'd' && (room.userIds?.length ?? 2) <= 2;
    return { roomId: room.id, roomType: type, roomName: room.slugifiedName, threadId, kind: dm ? 'dm' : 'room' };
}

type Rules = Pick<HermesConfig, 'allowedUserIds' | 'ignoreSenders'>;

/**
 * `--to` of `/hermes cron add`: `home` (the home channel setting), `#room-name`, or a thread
 * link (`…/thread/<id>` or `…?msg=<id>` of the thread's root). Only a room the bot is in, and
 * one its creator is in and may post in (the gate's rule for a person's request, as if they had
 * typed the command there): a job never makes the bot post where it was not invited, nor where
 * its creator could not read or write (another person's DM, a private group, a read-only
 * channel). Undefined for every refusal alike, so `--to` does not tell what exists.
 */
export async function resolveCronTarget(
    spec: string,
    read: IRead,
    botId: string,
    homeRoomId: string,
    userId: string,
    config: Rules,
): Promise<Place | undefined> {
    const rooms = read.getRoomReader();
    let room: IRoom | undefined;
    let threadId: string | undefined;
    if (spec.toLowerCase() === 'home') {
        room = homeRoomId ? await rooms.getById(homeRoomId) : undefined;
    } else if (spec.startsWith('#')) {
        room = await rooms.getByName(spec.slice(1));
    } else {
        const id = /\/thread\/([A-Za-z0-9_-]{1,64})/.exec(spec)?.[1] ?? /[?&]msg=([A-Za-z0-9_-]{1,64})/.exec(spec)?.[1];
        const root = id ? await read.getMessageReader().getById(id) : undefined;
        if (root?.id) {
            // A reply's thread is its root's.
            threadId = root.threadId || root.id;
            room = root.room;
        }
    }
    if (!room || (await placeRefusal(read, room, userId, botId, config))) {
        return undefined;
    }
    return placeOf(room, threadId);
}

/**
 * A firing's re-check of where a job delivers (cron/recheck.ts): its room as the server has it
 * now, read by id, and the owner's membership and right to post there. Why not, or undefined.
 */
export async function jobStanding(read: IRead, job: CronJob, bot: IUser, config: Rules): Promise<AccessRefusal | 'bot-cannot-post' | undefined> {
    const room = await read.getRoomReader().getById(job.roomId);
    if (!room) {
        return 'no-room';
    }
    // A room that became read-only, muted the bot or turned encrypted: the run could not be delivered.
    return (await placeRefusal(read, room, job.ownerId, bot.id, config)) ?? ((await botPostingRefusal(read, room, bot)) ? 'bot-cannot-post' : undefined);
}

/** The gate's rule (security/access.ts) for a person who needs to post in `room`, on the server's data. */
async function placeRefusal(read: IRead, room: IRoom, userId: string, botId: string, config: Rules, known?: IUser): Promise<AccessRefusal | undefined> {
    const user = known ?? (await read.getUserReader().getById(userId));
    // A deleted or deactivated account keeps no job running in its name.
    if (!user || user.isEnabled === false) {
        return 'not-allowed';
    }
    const [callerIsMember, botIsMember, callerMayPost] = await Promise.all([
        userInRoom(read, user.id, room),
        roomHasBot(read, room, botId),
        userMayPost(read, user, room),
    ]);
    return accessRefusal(
        {
            caller: { id: user.id, username: user.username },
            botId,
            room: { type: String(room.type), directMemberCount: room.userIds?.length },
            callerIsMember,
            botIsMember,
            callerMayPost,
            need: 'post',
        },
        config,
    );
}

/**
 * Where the MCP write tools may have the bot act for a person (mcp/writeTools.ts): a room read
 * by the id the model gave, with the rules of `--to` (the person and the bot members, the person
 * may post there) and of a firing (the bot may post there), a thread only when its root is in
 * that room, and the room's policy admitting Hermes. Why not (for the log), or the place and the
 * person's username.
 */
export async function actingPlace(
    read: IRead,
    ids: { roomId: string; threadId?: string; userId: string },
    bot: IUser,
    config: Rules & AdmissionConfig,
): Promise<{ ok: true; place: Place; username: string } | { ok: false; reason: string }> {
    const [room, user, root] = await Promise.all([
        read.getRoomReader().getById(ids.roomId),
        read.getUserReader().getById(ids.userId),
        ids.threadId ? read.getMessageReader().getById(ids.threadId) : Promise.resolve(undefined),
    ]);
    if (!room || !user) {
        return { ok: false, reason: room ? 'no such user' : 'no-room' };
    }
    if (ids.threadId && root?.room?.id !== room.id) {
        return { ok: false, reason: 'thread-elsewhere' };
    }
    const rules = roomRules(
        {
            source: 'cron',
            asker: { id: user.id, username: user.username },
            room: { id: room.id, type: String(room.type), directMemberCount: room.userIds?.length },
        },
        config,
    );
    const refusal =
        (await placeRefusal(read, room, user.id, bot.id, config, user)) ??
        (rules.admit ? undefined : describeRefusal(rules)) ??
        (await botPostingRefusal(read, room, bot));
    if (refusal) {
        return { ok: false, reason: refusal };
    }
    return { ok: true, place: placeOf(room, root ? root.threadId || root.id : undefined), username: user.username };
}
