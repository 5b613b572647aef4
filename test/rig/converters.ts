import { IMessage, IMessageRaw } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom, RoomType } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser, UserStatusConnection, UserType } from '@rocket.chat/apps-engine/definition/users';
import { RocketChatStore, StoredMessage, StoredRoom, StoredUser } from './store';

/** Converts stored documents to the engine's shapes, as Rocket.Chat's own converters do. */
export class Converters {
    /**
     * Set by a test: direct rooms in message events arrive with empty member lists, as from a
     * server that does not fill them there (the engine itself needs the array to exist). Room
     * reads still return the members.
     */
    public omitDirectMembers = false;

    constructor(private readonly store: RocketChatStore) {}

    public user(user: StoredUser): IUser {
        return {
            id: user.id,
            username: user.username,
            name: user.name,
            emails: [],
            type: user.type === 'app' ? UserType.APP : user.type === 'bot' ? UserType.BOT : UserType.USER,
            isEnabled: true,
            roles: user.roles,
            status: 'online',
            statusConnection: UserStatusConnection.ONLINE,
            utcOffset: 0,
            createdAt: user.createdAt,
            updatedAt: user.createdAt,
            lastLoginAt: user.createdAt,
            appId: user.appId,
        };
    }

    public userById(id: string): IUser | undefined {
        const user = this.store.users.get(id);
        return user ? this.user(user) : undefined;
    }

    public room(room: StoredRoom, opts: { omitMembers?: boolean } = {}): IRoom {
        const creator = this.store.users.get(room.creatorId);
        const memberUsers = [...room.members].map((id) => this.store.users.get(id)).filter((u): u is StoredUser => Boolean(u));
        const isDirect = room.type === 'd';
        const listed = isDirect && !opts.omitMembers ? memberUsers : [];
        return {
            id: room.id,
            displayName: room.name,
            slugifiedName: room.name ?? '',
            type: room.type as RoomType,
            creator: creator ? this.user(creator) : (undefined as unknown as IUser),
            // Like the server: only direct rooms carry their members on the room document.
            usernames: listed.map((u) => u.username),
            userIds: isDirect ? listed.map((u) => u.id) : undefined,
            isDefault: false,
            isReadOnly: false,
            displaySystemMessages: true,
            messageCount: this.store.roomMessages.get(room.id)?.length ?? 0,
            createdAt: room.createdAt,
            updatedAt: room.createdAt,
            lastModifiedAt: room.createdAt,
        };
    }

    public roomById(id: string): IRoom | undefined {
        const room = this.store.rooms.get(id);
        return room ? this.room(room) : undefined;
    }

    public message(message: StoredMessage): IMessage {
        const room = this.store.rooms.get(message.rid);
        const sender = this.store.users.get(message.senderId);
        if (!room || !sender) {
            throw new Error(`message ${message.id} refers to a missing room or sender`);
        }
        const editor = message.editorId ? this.store.users.get(message.editorId) : undefined;
        return {
            id: message.id,
            room: this.room(room, { omitMembers: this.omitDirectMembers }),
            sender: this.user(sender),
            text: message.text,
            threadId: message.tmid,
            createdAt: message.createdAt,
            updatedAt: message.updatedAt,
            editedAt: message.editedAt,
            editor: editor ? this.user(editor) : undefined,
            attachments: message.attachments?.map((a) => ({ title: a.title ? { value: a.title } : undefined, type: a.type, text: a.text })) as IMessage['attachments'],
            file: message.file ? ({ _id: 'file', name: message.file.name, type: message.file.type } as IMessage['file']) : undefined,
            customFields: message.customFields,
            groupable: message.groupable,
            type: message.t as IMessage['type'],
        };
    }

    public rawMessage(message: StoredMessage): IMessageRaw {
        const sender = this.store.users.get(message.senderId);
        const editor = message.editorId ? this.store.users.get(message.editorId) : undefined;
        return {
            id: message.id,
            roomId: message.rid,
            sender: { _id: message.senderId, username: sender?.username ?? '', name: sender?.name },
            createdAt: message.createdAt,
            threadId: message.tmid,
            text: message.text,
            updatedAt: message.updatedAt,
            editedAt: message.editedAt,
            editor: editor ? { _id: editor.id, username: editor.username, name: editor.name } : undefined,
            // Like the server's convertMessageRaw: attachments in the app shape (title as {value}), the file as stored.
            attachments: message.attachments?.map((a) => ({ title: a.title ? { value: a.title } : undefined, type: a.type, text: a.text })) as IMessageRaw['attachments'],
            file: message.file ? ({ _id: 'file', name: message.file.name, type: message.file.type } as IMessageRaw['file']) : undefined,
            customFields: message.customFields,
            groupable: message.groupable,
        };
    }
}
