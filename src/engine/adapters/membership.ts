import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { GroupedReads } from './groupedRead';

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
