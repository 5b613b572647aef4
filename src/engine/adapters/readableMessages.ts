import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { sharedRoomIds } from './membership';

/**
 * Which of `messageIds` a person may read now: their room is one the person and the bot are both
 * members of (the MCP tools' rule, mcp/tools.ts). Costs the two memberships and one read per
 * message, side by side; asked only for an answer that links messages of this server.
 */
export async function readableMessages(read: IRead, userId: string, botId: string, messageIds: string[]): Promise<Set<string>> {
    const [shared, rooms] = await Promise.all([
        sharedRoomIds(read, userId, botId),
        Promise.all(
            messageIds.map((id) =>
                read
                    .getMessageReader()
                    .getRoom(id)
                    .catch(() => undefined),
            ),
        ),
    ]);
    const readable = new Set(shared);
    return new Set(messageIds.filter((_, i) => rooms[i] !== undefined && readable.has((rooms[i] as { id: string }).id)));
}
