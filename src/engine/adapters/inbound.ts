import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { InboundMessage } from '../../admission/admit';
import { preferenceOf } from '../../i18n/messages';

/** Turns the engine's message into the plain values the core decides on. */
export function toInbound(message: IMessage): InboundMessage {
    return {
        id: message.id ?? '',
        roomId: message.room.id,
        roomType: String(message.room.type),
        // An empty list means the event did not say; the handler reads the room then.
        directMemberCount: message.room.userIds?.length || undefined,
        senderId: message.sender.id,
        senderUsername: message.sender.username,
        senderLanguage: preferenceOf(message.sender),
        text: message.text ?? '',
        threadId: message.threadId || undefined,
        // Regular messages carry no type; joins, topic changes and the like do.
        isSystem: Boolean(message.type),
        edited: Boolean(message.editedAt),
        createdAt: message.createdAt ? new Date(message.createdAt).getTime() : undefined,
        files: uploadsOf(message),
    };
}

type FileEntry = { _id?: unknown; name?: unknown; type?: unknown; size?: unknown };

/**
 * The uploads of a file message: `file`, and the rest of `files` (the converter hands that list
 * over only under `_unmappedProperties_`), without the thumbnails the server adds for images.
 * The same for every reader: the event's message, getById, getMessages, getThreadById.
 */
export function uploadsOf(message: { file?: unknown; _unmappedProperties_?: unknown }): InboundMessage['files'] {
    const listed = ((message._unmappedProperties_ as { files?: unknown } | undefined)?.files ?? []) as FileEntry[];
    const all = [message.file as FileEntry | undefined, ...(Array.isArray(listed) ? listed : [])];
    const out = new Map<string, { id: string; name: string; type: string; size?: number }>();
    for (const f of all) {
        if (!f || typeof f._id !== 'string' || typeof f.name !== 'string' || out.has(f._id) || (out.size > 0 && f.name.startsWith('thumb-'))) {
            continue;
        }
        out.set(f._id, { id: f._id, name: f.name, type: typeof f.type === 'string' ? f.type : '', size: typeof f.size === 'number' ? f.size : undefined });
    }
    return out.size > 0 ? [...out.values()] : undefined;
}
