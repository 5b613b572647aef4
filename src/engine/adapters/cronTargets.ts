import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { Place } from '../../commands/cronCommands';
import { roomHasBot } from './membership';

/** A room as a delivery place (a direct room of two is a DM). */
function placeOf(room: IRoom, threadId?: string): Place {
    const type = String(room.type);
    const dm = type === 'd' && (room.userIds?.length ?? 2) <= 2;
    return { roomId: room.id, roomType: type, roomName: room.slugifiedName, threadId, kind: dm ? 'dm' : 'room' };
}

/**
 * `--to` of `/hermes cron add`: `home` (the home channel setting), `#room-name`, or a thread
 * link (`…/thread/<id>` or `…?msg=<id>` of the thread's root). Only rooms the bot is a member
 * of: a job never makes the bot post where it was not invited.
 */
export async function resolveCronTarget(spec: string, read: IRead, botId: string, homeRoomId: string): Promise<Place | undefined> {
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
    if (!room || !(await roomHasBot(read, room, botId))) {
        return undefined;
    }
    return placeOf(room, threadId);
}
