import { IRead } from '@rocket.chat/apps-engine/definition/accessors';

/**
 * App users can post anywhere, so the app itself keeps the bot to rooms it was added to. A
 * direct room lists its members; other rooms cost one read of the bot's room ids (whose
 * cost follows the bot's own room count, not the room's size).
 */
export async function roomHasBot(read: IRead, room: { id: string; userIds?: string[] }, botId: string): Promise<boolean> {
    if (room.userIds && room.userIds.length > 0) {
        return room.userIds.includes(botId);
    }
    return (await read.getUserReader().getUserRoomIds(botId)).includes(room.id);
}
