import { randomInt } from 'crypto';

/** In-memory Rocket.Chat data, shaped like the server's own documents (ids, rooms, subscriptions). */
export interface StoredUser {
    id: string;
    username: string;
    name: string;
    type: 'user' | 'bot' | 'app';
    appId?: string;
    roles: string[];
    createdAt: Date;
    /** The person's language preference (`settings.preferences.language`), when they set one. */
    language?: string;
}

export type RoomTypeCode = 'c' | 'p' | 'd' | 'l';

export interface StoredRoom {
    id: string;
    type: RoomTypeCode;
    name?: string;
    creatorId: string;
    members: Set<string>;
    createdAt: Date;
    /** The room's `ro` flag: only users with `post-readonly` (admin, owner, moderator) may post. */
    readOnly: boolean;
    /** Usernames muted in the room (`muted`), and those a moderator let post in a read-only room (`unmuted`). */
    muted?: string[];
    unmuted?: string[];
    /** End-to-end encryption on (`encrypted`): with E2E on and unencrypted messages refused, only `t: 'e2e'` posts. */
    encrypted?: boolean;
    /** A read-only room whose members may still react (`reactWhenReadOnly`). */
    reactWhenReadOnly?: boolean;
    /** A direct room one member blocked: both subscriptions carry `blocker` / `blocked`, so neither side may post. */
    blocked?: boolean;
}

/**
 * A message attachment as the server stores it (snake_case, flat title and author), which
 * the apps converter maps to and from the app's nested shape (`title: { value, link }`).
 */
export interface StoredAttachment {
    title?: string;
    title_link?: string;
    title_link_download?: boolean;
    message_link?: string;
    thumb_url?: string;
    image_url?: string;
    image_type?: string;
    image_size?: number;
    image_dimensions?: { width: number; height: number };
    image_preview?: string;
    audio_url?: string;
    audio_type?: string;
    audio_size?: number;
    video_url?: string;
    video_type?: string;
    video_size?: number;
    author_name?: string;
    author_link?: string;
    author_icon?: string;
    type?: string;
    description?: string;
    text?: string;
    color?: string;
    collapsed?: boolean;
    /** ISO string, as `_convertAppAttachments` writes it (`timestamp.toJSON()`). */
    ts?: string;
    fields?: Array<{ short?: boolean; title: string; value: string | number | boolean }>;
    actions?: unknown[];
    button_alignment?: string;
    fileId?: string;
    /** Anything else an app put on `_unmappedProperties_`: the converter spreads it onto the stored attachment. */
    [unmapped: string]: unknown;
}

export interface StoredMessage {
    id: string;
    rid: string;
    senderId: string;
    text: string;
    createdAt: Date;
    tmid?: string;
    /** "Also send to channel" on a thread reply. */
    tshow?: boolean;
    /** System message type ('uj', 'au', …); undefined for normal messages. */
    t?: string;
    editedAt?: Date;
    editorId?: string;
    updatedAt: Date;
    attachments?: StoredAttachment[];
    /** The first of `files` (the server keeps it for older clients); `_id` may be absent on history laid down by tests. */
    file?: StoredFile;
    /** A file message's files: the upload, then its thumbnail when one was made (sendFileMessage.ts). */
    files?: StoredFile[];
    customFields?: Record<string, unknown>;
    groupable?: boolean;
    blocks?: unknown[];
    /** Replies counted on a thread root (the server's `tcount`, kept by its thread hook). */
    tcount?: number;
    /** An edit-history copy or a hidden deleted message (`Message_KeepHistory`): out of room reads, in thread reads. */
    _hidden?: boolean;
    /** On an edit-history copy: the id of the message it is a copy of. */
    parent?: string;
    /** Reactions by emoji (`:name:`), each with the usernames that gave it (setReaction.ts). */
    reactions?: Record<string, { usernames: string[] }>;
}

/**
 * A message's file entry as parseMultipleFilesIntoMessageAttachments writes it
 * (apps/meteor/app/file-upload/server/methods/sendFileMessage.ts).
 */
export interface StoredFile {
    _id?: string;
    name: string;
    type: string;
    size?: number;
    /** `identify.format` for images the server could read, '' otherwise. */
    format?: string;
    typeGroup?: string;
}

/**
 * An `rocketchat_uploads` document (core-typings IUpload) as the server leaves it after
 * rooms.media + rooms.mediaConfirm: the store's insert (ufs-store.ts create/write),
 * uploadsOnValidate's `identify` for images, rooms.media's `/file-upload/` path, and
 * the confirmation's description.
 */
export interface StoredUpload {
    _id: string;
    name: string;
    size: number;
    type: string;
    rid: string;
    userId: string;
    store: string;
    complete: boolean;
    uploading: boolean;
    progress: number;
    etag: string;
    path: string;
    token: string;
    url: string;
    uploadedAt: Date;
    _updatedAt: Date;
    description?: string;
    identify?: { format: string; size?: { width: number; height: number } };
    /** Thumbnails (FileUpload.uploadImageThumbnail) point at their original. */
    typeGroup?: string;
    originalFileId?: string;
}

const ID_CHARS = '23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz';

/** Meteor-style 17-character random id, as Rocket.Chat generates for users, rooms and messages. */
export function randomId(length = 17): string {
    let out = '';
    for (let i = 0; i < length; i++) {
        out += ID_CHARS[randomInt(ID_CHARS.length)];
    }
    return out;
}

export class RocketChatStore {
    public readonly users = new Map<string, StoredUser>();
    public readonly rooms = new Map<string, StoredRoom>();
    public readonly messages = new Map<string, StoredMessage>();
    /** Messages per room in insertion (createdAt) order, so history reads do not scan the world. */
    public readonly roomMessages = new Map<string, StoredMessage[]>();
    /** Upload documents (`rocketchat_uploads`) and their bytes (the file store), by upload id. */
    public readonly uploads = new Map<string, StoredUpload>();
    public readonly uploadContents = new Map<string, Buffer>();
    /** Server settings with Rocket.Chat's defaults; the rig's message rules read them on every call. */
    public readonly serverSettings = new Map<string, unknown>([
        ['Message_MaxAllowedSize', 5000],
        ['Site_Url', 'http://127.0.0.1:3000'],
        ['Site_Name', 'Rocket.Chat'],
        // validateCustomMessageFields: custom fields are refused unless enabled and declared in this JSON schema.
        ['Message_CustomFields_Enabled', false],
        ['Message_CustomFields', ''],
        // executeSendMessage refuses a tmid when threads are off.
        ['Threads_enabled', true],
        // executeSendMessage: in an encrypted room, only e2e messages while E2E is on and clear text is not allowed.
        ['E2E_Enable', false],
        // The UIKit route's limiter (AppUIKitInteractionApi): 10 * 60 calls per 60 s window per client address.
        ['API_Enable_Rate_Limiter', true],
        ['API_Enable_Rate_Limiter_Limit_Calls_Default', 10],
        ['API_Enable_Rate_Limiter_Limit_Time_Default', 60000],
        ['E2E_Allow_Unencrypted_Messages', false],
        // updateMessage / deleteMessage keep hidden copies (edit history) when on.
        ['Message_KeepHistory', false],
        // deleteMessage leaves a `t: 'rm'` stub instead of removing the message when on.
        ['Message_ShowDeletedStatus', false],
        // Uploads (apps/meteor/app/file-upload/server/startup/settings.ts defaults).
        ['FileUpload_Enabled', true],
        ['FileUpload_Enabled_Direct', true],
        ['FileUpload_MaxFileSize', 104857600],
        ['FileUpload_MediaTypeWhiteList', ''],
        ['FileUpload_MediaTypeBlackList', 'image/svg+xml'],
        ['FileUpload_Storage_Type', 'GridFS'],
        ['Message_Attachments_Thumbnails_Enabled', true],
        ['Message_Attachments_Thumbnails_Width', 480],
        ['Message_Attachments_Thumbnails_Height', 360],
    ]);
    private clock = 0;

    public addUser(user: Partial<StoredUser> & { username: string }): StoredUser {
        const stored: StoredUser = { id: randomId(), name: user.username, type: 'user', roles: ['user'], createdAt: new Date(), ...user };
        this.users.set(stored.id, stored);
        return stored;
    }

    public userByUsername(username: string): StoredUser | undefined {
        for (const user of this.users.values()) {
            if (user.username === username) {
                return user;
            }
        }
        return undefined;
    }

    public addRoom(room: { type: RoomTypeCode; name?: string; creatorId: string; memberIds: string[]; id?: string; readOnly?: boolean }): StoredRoom {
        const stored: StoredRoom = {
            id: room.id ?? randomId(),
            type: room.type,
            name: room.name,
            creatorId: room.creatorId,
            members: new Set(room.memberIds),
            createdAt: new Date(),
            readOnly: room.readOnly ?? false,
        };
        this.rooms.set(stored.id, stored);
        this.roomMessages.set(stored.id, []);
        return stored;
    }

    /** Strictly increasing timestamps: two messages posted in the same millisecond still sort. */
    public nextDate(): Date {
        this.clock = Math.max(Date.now(), this.clock + 1);
        return new Date(this.clock);
    }

    public insertMessage(message: Omit<StoredMessage, 'id' | 'createdAt' | 'updatedAt'> & { id?: string; createdAt?: Date }): StoredMessage {
        const createdAt = message.createdAt ?? this.nextDate();
        const stored: StoredMessage = { ...message, id: message.id ?? randomId(), createdAt, updatedAt: createdAt };
        this.messages.set(stored.id, stored);
        const list = this.roomMessages.get(stored.rid);
        if (!list) {
            throw new Error(`room ${stored.rid} does not exist`);
        }
        // Keep the per-room list sorted by createdAt (backdated history is inserted in place).
        let i = list.length;
        while (i > 0 && list[i - 1].createdAt > createdAt) {
            i--;
        }
        list.splice(i, 0, stored);
        return stored;
    }

    /**
     * Inserts a message the way sendMessage does, thread bookkeeping included: the server's
     * thread hook (afterSaveMessage → processThreads → reply) counts the reply on its root
     * when threads are enabled and the root exists. Raw inserts (history copies) skip it.
     */
    public postMessage(message: Parameters<RocketChatStore['insertMessage']>[0]): StoredMessage {
        const stored = this.insertMessage(message);
        const root = stored.tmid ? this.messages.get(stored.tmid) : undefined;
        if (root && this.flag('Threads_enabled')) {
            root.tcount = (root.tcount ?? 0) + 1;
        }
        return stored;
    }

    /** Deletes the document (Messages.removeById). */
    public removeMessage(id: string): StoredMessage | undefined {
        const message = this.messages.get(id);
        if (!message) {
            return undefined;
        }
        this.messages.delete(id);
        const list = this.roomMessages.get(message.rid);
        const at = list?.indexOf(message) ?? -1;
        if (list && at >= 0) {
            list.splice(at, 1);
        }
        return message;
    }

    /** The server setting as a boolean, the way `settings.get(...)` is tested in its code (truthy). */
    public flag(id: string): boolean {
        return Boolean(this.serverSettings.get(id));
    }
}
