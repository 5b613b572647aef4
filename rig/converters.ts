import { IMessage, IMessageAttachment, IMessageRaw } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom, RoomType } from '@rocket.chat/apps-engine/definition/rooms';
import { IUpload } from '@rocket.chat/apps-engine/definition/uploads';
import { IUser, UserStatusConnection, UserType } from '@rocket.chat/apps-engine/definition/users';
import { RocketChatStore, StoredAttachment, StoredMessage, StoredRoom, StoredUpload, StoredUser } from './store';

/**
 * Message fields the rig stores that Rocket.Chat's apps converters do not map to an app
 * field: `transformMappedData` / `mappedDecodeAsync` hand everything they do not name to the
 * app under `_unmappedProperties_` (apps/meteor/app/apps/server/converters/transformMappedData.ts,
 * codecs/mappedData.ts). That is how an app can see `_hidden` (an edit-history copy).
 */
type Unmapped = Record<string, unknown>;

function defined(entries: Unmapped): Unmapped {
    return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}

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
            // As apps/meteor/app/apps/server/converters/users.ts: only the language preference, only when set.
            settings: { preferences: { ...(user.language && { language: user.language }) } },
        } as IUser;
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
            isReadOnly: room.readOnly,
            displaySystemMessages: true,
            messageCount: this.store.roomMessages.get(room.id)?.length ?? 0,
            createdAt: room.createdAt,
            updatedAt: room.createdAt,
            lastModifiedAt: room.createdAt,
            // convertRoom maps neither `muted`, `unmuted` nor `encrypted`: transformMappedData leaves them here.
            ...unmappedRoomFields(room),
        } as IRoom;
    }

    public roomById(id: string): IRoom | undefined {
        const room = this.store.rooms.get(id);
        return room ? this.room(room) : undefined;
    }

    /**
     * A full message as the server's `convertMessage` gives it (getById, events): `t` is
     * mapped to `type`; `rid`, `u` and `editedBy` are consumed by the room/sender/editor
     * mappers; `tcount`, `tshow`, `_hidden`, `parent` are not mapped and arrive under
     * `_unmappedProperties_` (apps/meteor/app/apps/server/converters/messages.ts).
     */
    public message(message: StoredMessage): IMessage {
        const { room, sender, editor } = this.parts(message);
        // transformMappedData sets only defined values: an absent field is absent, not undefined (which msgpack would send as null).
        return defined({
            id: message.id,
            room: this.room(room, { omitMembers: this.omitDirectMembers }),
            sender: this.user(sender),
            text: message.text,
            threadId: message.tmid,
            createdAt: message.createdAt,
            updatedAt: message.updatedAt,
            editedAt: message.editedAt,
            editor: editor ? this.user(editor) : undefined,
            attachments: message.attachments?.map((a) => attachmentToApp(a)),
            file: this.file(message),
            customFields: message.customFields,
            groupable: message.groupable,
            blocks: message.blocks as IMessage['blocks'],
            reactions: message.reactions as IMessage['reactions'],
            type: message.t as IMessage['type'],
            // The converter maps `file` but not `files`: an app finds the list under _unmappedProperties_.
            _unmappedProperties_: defined({
                files: message.files,
                tcount: message.tcount,
                tshow: message.tshow,
                _hidden: message._hidden,
                parent: message.parent,
            }),
        }) as unknown as IMessage;
    }

    /**
     * A message as getThreadById gives it: the threads converter
     * (apps/meteor/app/apps/server/converters/threads.ts) maps no `type`, and its sender and
     * editor mappers do not consume `u` / `editedBy`, so `t` (e.g. 'rm' for a deleted message),
     * `rid`, `u` and `editedBy` arrive under `_unmappedProperties_` together with `_hidden`.
     * Its attachments carry `fileId`, and `author` only when the attachment has an author.
     */
    public threadMessage(message: StoredMessage, threadRoom: IRoom): IMessage {
        const { sender, editor } = this.parts(message);
        return defined({
            id: message.id,
            room: threadRoom,
            sender: this.user(sender),
            text: message.text,
            threadId: message.tmid,
            createdAt: message.createdAt,
            updatedAt: message.updatedAt,
            editedAt: message.editedAt,
            editor: editor ? this.user(editor) : undefined,
            attachments: message.attachments?.map((a) =>
                attachmentToApp(a, { thread: true, mainFileId: this.file(message)?._id, only: message.attachments?.length === 1 }),
            ),
            file: this.file(message),
            customFields: message.customFields,
            groupable: message.groupable,
            blocks: message.blocks as IMessage['blocks'],
            _unmappedProperties_: defined({
                rid: message.rid,
                u: { _id: sender.id, username: sender.username, name: sender.name },
                editedBy: editor ? { _id: editor.id, username: editor.username } : undefined,
                files: message.files,
                t: message.t,
                tcount: message.tcount,
                tshow: message.tshow,
                _hidden: message._hidden,
                parent: message.parent,
            }),
        }) as unknown as IMessage;
    }

    /**
     * A message as getMessages gives it (`convertMessageRaw`): sender is the stored `u`,
     * editor the stored `editedBy` ({ _id, username }), `t` → `type`, `tcount` → `threadMsgCount`.
     */
    public rawMessage(message: StoredMessage): IMessageRaw {
        const sender = this.store.users.get(message.senderId);
        const editor = message.editorId ? this.store.users.get(message.editorId) : undefined;
        return defined({
            id: message.id,
            roomId: message.rid,
            sender: { _id: message.senderId, username: sender?.username ?? '', name: sender?.name },
            createdAt: message.createdAt,
            threadId: message.tmid,
            text: message.text,
            updatedAt: message.updatedAt,
            editedAt: message.editedAt,
            editor: editor ? { _id: editor.id, username: editor.username } : undefined,
            attachments: message.attachments?.map((a) => attachmentToApp(a)),
            file: this.file(message),
            customFields: message.customFields,
            groupable: message.groupable,
            blocks: message.blocks as IMessageRaw['blocks'],
            type: message.t,
            threadMsgCount: message.tcount,
            _unmappedProperties_: defined({ files: message.files, tshow: message.tshow, _hidden: message._hidden, parent: message.parent }),
        }) as unknown as IMessageRaw;
    }

    private parts(message: StoredMessage): { room: StoredRoom; sender: StoredUser; editor?: StoredUser } {
        const room = this.store.rooms.get(message.rid);
        const sender = this.store.users.get(message.senderId);
        if (!room || !sender) {
            throw new Error(`message ${message.id} refers to a missing room or sender`);
        }
        return { room, sender, editor: message.editorId ? this.store.users.get(message.editorId) : undefined };
    }

    /** `file: 'file'` in the converters' maps: the stored entry as it is (history laid down without an id gets 'file'). */
    private file(message: StoredMessage): IMessage['file'] {
        return message.file ? ({ ...message.file, _id: message.file._id ?? 'file' } as IMessage['file']) : undefined;
    }

    /**
     * An upload document as the app reads it (apps/meteor/app/apps/server/converters/uploads.ts
     * convertToApp, via transformMappedData): renamed fields when defined, `room` and `user`
     * converted from `rid` / `userId` (which are consumed), everything else (`identify`,
     * `typeGroup`, `originalFileId`, …) under `_unmappedProperties_`.
     */
    public upload(doc: StoredUpload | undefined): IUpload | undefined {
        if (!doc) {
            return undefined;
        }
        // A copy (the app must not reach the stored document); not structuredClone, whose Dates
        // under jest come from another realm and would cross to the app as {}.
        const rest: Record<string, unknown> = { ...doc, ...(doc.identify ? { identify: JSON.parse(JSON.stringify(doc.identify)) } : {}) };
        const out: Record<string, unknown> = {};
        const renames: Array<[string, string]> = [
            ['id', '_id'],
            ['name', 'name'],
            ['size', 'size'],
            ['type', 'type'],
            ['store', 'store'],
            ['description', 'description'],
            ['complete', 'complete'],
            ['uploading', 'uploading'],
            ['extension', 'extension'],
            ['progress', 'progress'],
            ['etag', 'etag'],
            ['path', 'path'],
            ['token', 'token'],
            ['url', 'url'],
            ['updatedAt', '_updatedAt'],
            ['uploadedAt', 'uploadedAt'],
        ];
        for (const [to, from] of renames) {
            if (rest[from] !== undefined) {
                out[to] = rest[from];
            }
            delete rest[from];
        }
        const room = this.roomById(String(rest.rid));
        delete rest.rid;
        if (room) {
            out.room = room;
        }
        if (rest.userId) {
            const user = this.userById(String(rest.userId));
            delete rest.userId;
            if (user) {
                out.user = user;
            }
        }
        out._unmappedProperties_ = rest;
        return out as unknown as IUpload;
    }

    /**
     * An app's IUpload back to the server's document (convertToRocketChat / the uploads codec's
     * encode): only `_id` and `store` matter to FileUpload.getBuffer afterwards.
     */
    public uploadFromApp(upload: IUpload): Partial<StoredUpload> & Record<string, unknown> {
        const wide = upload as IUpload & { description?: string; _unmappedProperties_?: Record<string, unknown> };
        return {
            _id: upload.id,
            name: upload.name,
            size: Number(upload.size),
            type: upload.type,
            extension: upload.extension,
            description: wide.description,
            store: upload.store,
            etag: upload.etag,
            complete: upload.complete,
            uploading: upload.uploading,
            progress: upload.progress,
            token: upload.token,
            url: upload.url,
            _updatedAt: upload.updatedAt,
            uploadedAt: upload.uploadedAt,
            rid: upload.room?.id,
            userId: upload.user?.id,
            ...wide._unmappedProperties_,
        } as Partial<StoredUpload> & Record<string, unknown>;
    }
}

/**
 * Server attachment → app attachment, as `_convertAttachmentsToApp` does. The messages
 * converter always builds `author` and `title` objects (empty when the attachment has none)
 * and `timestamp: new Date(ts)` even without `ts` (an Invalid Date, `null` once serialized);
 * the threads converter builds `author` only for attachments with `author_name`, `timestamp`
 * only with `ts`, and adds `fileId` (falling back to the message's file when it is the only
 * attachment). Fields neither maps go to `_unmappedProperties_`.
 */
function attachmentToApp(a: StoredAttachment, opts: { thread?: boolean; mainFileId?: string; only?: boolean } = {}): IMessageAttachment {
    const {
        collapsed,
        color,
        text,
        message_link,
        thumb_url,
        image_dimensions,
        image_preview,
        image_url,
        image_type,
        image_size,
        audio_url,
        audio_type,
        audio_size,
        video_url,
        video_type,
        video_size,
        fields,
        button_alignment,
        actions,
        type,
        description,
        author_name,
        author_link,
        author_icon,
        title,
        title_link,
        title_link_download,
        ts,
        fileId,
        ...rest
    } = a;
    const hasAuthor = 'author_name' in a;
    const out: Record<string, unknown> = defined({
        collapsed,
        color,
        text,
        timestampLink: message_link,
        thumbnailUrl: thumb_url,
        imageDimensions: image_dimensions,
        imagePreview: image_preview,
        imageUrl: image_url,
        imageType: image_type,
        imageSize: image_size,
        audioUrl: audio_url,
        audioType: audio_type,
        audioSize: audio_size,
        videoUrl: video_url,
        videoType: video_type,
        videoSize: video_size,
        fields,
        actionButtonsAlignment: button_alignment,
        actions,
        type,
        description,
        author: !opts.thread || hasAuthor ? { name: author_name, link: author_link, icon: author_icon } : undefined,
        title: { value: title, link: title_link, displayDownloadLink: title_link_download },
        timestamp: !opts.thread || ts ? new Date(ts as string) : undefined,
    });
    if (opts.thread) {
        // The threads converter maps fileId with a function that does not delete the source
        // key, so fileId also stays under _unmappedProperties_; its author mapper only
        // consumes author_* when author_name is there.
        const resolved = fileId || (type === 'file' && opts.only ? opts.mainFileId : undefined);
        if (resolved !== undefined) {
            out.fileId = resolved;
        }
        out._unmappedProperties_ = defined({ ...rest, fileId, ...(hasAuthor ? {} : { author_link, author_icon }) });
    } else {
        out._unmappedProperties_ = defined({ ...rest, fileId });
    }
    return out as IMessageAttachment;
}

/**
 * App attachment → server attachment, as `_convertAppAttachments` does: flattened, with
 * `removeEmpty` dropping absent values and the app's `_unmappedProperties_` spread on top
 * (which is how a `fileId` the app got back on a read survives a write).
 */
export function attachmentFromApp(a: IMessageAttachment): StoredAttachment {
    const extra = (a as { _unmappedProperties_?: Record<string, unknown> })._unmappedProperties_ ?? {};
    const wide = a as IMessageAttachment & Record<string, unknown>;
    const timestamp = a.timestamp ? new Date(a.timestamp as unknown as string) : undefined;
    return defined({
        collapsed: a.collapsed,
        color: a.color,
        text: a.text,
        ts: timestamp && !Number.isNaN(timestamp.getTime()) ? timestamp.toJSON() : undefined,
        message_link: a.timestampLink,
        thumb_url: a.thumbnailUrl,
        author_name: a.author?.name,
        author_link: a.author?.link,
        author_icon: a.author?.icon,
        title: a.title?.value,
        title_link: a.title?.link,
        title_link_download: a.title?.displayDownloadLink,
        image_dimensions: wide.imageDimensions,
        image_preview: wide.imagePreview,
        image_url: a.imageUrl,
        image_type: wide.imageType,
        image_size: wide.imageSize,
        audio_url: a.audioUrl,
        audio_type: wide.audioType,
        audio_size: wide.audioSize,
        video_url: a.videoUrl,
        video_type: wide.videoType,
        video_size: wide.videoSize,
        fields: a.fields,
        button_alignment: a.actionButtonsAlignment,
        actions: a.actions,
        type: a.type,
        description: a.description,
        ...extra,
    }) as StoredAttachment;
}

/** The room document's fields the converter does not map (apps/meteor/app/apps/server/converters/rooms.ts), when set. */
function unmappedRoomFields(room: StoredRoom): { _unmappedProperties_?: Record<string, unknown> } {
    const rest = defined({ muted: room.muted, unmuted: room.unmuted, encrypted: room.encrypted });
    return Object.keys(rest).length > 0 ? { _unmappedProperties_: rest } : {};
}
