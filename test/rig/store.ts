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
}

export type RoomTypeCode = 'c' | 'p' | 'd' | 'l';

export interface StoredRoom {
    id: string;
    type: RoomTypeCode;
    name?: string;
    creatorId: string;
    members: Set<string>;
    createdAt: Date;
}

export interface StoredAttachment {
    title?: string;
    type?: string;
    text?: string;
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
    file?: { name: string; type: string };
    customFields?: Record<string, unknown>;
    groupable?: boolean;
    blocks?: unknown[];
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
    public readonly serverSettings = new Map<string, unknown>([
        ['Message_MaxAllowedSize', 5000],
        ['Site_Url', 'http://127.0.0.1:3000'],
        ['Site_Name', 'Rocket.Chat'],
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

    public addRoom(room: { type: RoomTypeCode; name?: string; creatorId: string; memberIds: string[]; id?: string }): StoredRoom {
        const stored: StoredRoom = {
            id: room.id ?? randomId(),
            type: room.type,
            name: room.name,
            creatorId: room.creatorId,
            members: new Set(room.memberIds),
            createdAt: new Date(),
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
}
