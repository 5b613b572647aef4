import { IMessage, IMessageRaw } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom, IRoomRaw } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { RoomBridge } from '@rocket.chat/apps-engine/server/bridges';
import { GetMessagesOptions, GetRoomsFilters, GetRoomsOptions } from '@rocket.chat/apps-engine/server/bridges/RoomBridge';
import { ThreadBridge } from '@rocket.chat/apps-engine/server/bridges/ThreadBridge';
import type { RigServer } from '../server';

/** Rooms and their history, with the limits of the server's getMessages. */
export class RigRoomBridge extends RoomBridge {
    constructor(private readonly rig: RigServer) {
        super();
    }

    protected async create(room: IRoom, members: string[], _appId: string): Promise<string> {
        this.rig.calls.record('write', 'room.create');
        const memberIds = members.map((username) => this.rig.store.userByUsername(username)?.id).filter((id): id is string => Boolean(id));
        return this.rig.store.addRoom({
            type: room.type as 'c',
            name: room.slugifiedName,
            creatorId: room.creator.id,
            memberIds: [room.creator.id, ...memberIds],
        }).id;
    }

    protected async getById(roomId: string, _appId: string): Promise<IRoom> {
        this.rig.calls.record('read', 'room.getById');
        if (this.rig.failRoomReads) {
            throw new Error('rig: room reads are failing');
        }
        return this.rig.convert.roomById(roomId) as IRoom;
    }

    protected async getByName(roomName: string, _appId: string): Promise<IRoom> {
        this.rig.calls.record('read', 'room.getByName');
        const room = [...this.rig.store.rooms.values()].find((r) => r.name === roomName);
        return (room ? this.rig.convert.room(room) : undefined) as IRoom;
    }

    protected async getCreatorById(roomId: string, _appId: string): Promise<IUser | undefined> {
        this.rig.calls.record('read', 'room.getCreatorById');
        const room = this.rig.store.rooms.get(roomId);
        return room ? this.rig.convert.userById(room.creatorId) : undefined;
    }

    protected async getCreatorByName(roomName: string, _appId: string): Promise<IUser | undefined> {
        this.rig.calls.record('read', 'room.getCreatorByName');
        const room = [...this.rig.store.rooms.values()].find((r) => r.name === roomName);
        return room ? this.rig.convert.userById(room.creatorId) : undefined;
    }

    protected async getDirectByUsernames(usernames: string[], _appId: string): Promise<IRoom | undefined> {
        this.rig.calls.record('read', 'room.getDirectByUsernames');
        const ids = usernames.map((u) => this.rig.store.userByUsername(u)?.id);
        const room = [...this.rig.store.rooms.values()].find(
            (r) => r.type === 'd' && r.members.size === ids.length && ids.every((id) => id && r.members.has(id)),
        );
        return room ? this.rig.convert.room(room) : undefined;
    }

    protected async getMembers(roomId: string, _appId: string): Promise<IUser[]> {
        this.rig.calls.record('read', 'room.getMembers');
        const room = this.rig.store.rooms.get(roomId);
        return [...(room?.members ?? [])].map((id) => this.rig.convert.userById(id)).filter((u): u is IUser => Boolean(u));
    }

    protected async getAllRooms(_filters: GetRoomsFilters, options: GetRoomsOptions, _appId: string): Promise<IRoomRaw[]> {
        this.rig.calls.record('read', 'room.getAllRooms');
        const skip = options.skip ?? 0;
        return [...this.rig.store.rooms.values()]
            .slice(skip, skip + (options.limit ?? 100))
            .map((r) => ({ id: r.id, name: r.name, type: r.type }) as unknown as IRoomRaw);
    }

    protected async update(room: IRoom, members: string[], _appId: string): Promise<void> {
        this.rig.calls.record('write', 'room.update');
        const stored = this.rig.store.rooms.get(room.id);
        if (!stored) {
            throw new Error('A room must exist to update.');
        }
        for (const username of members) {
            const user = this.rig.store.userByUsername(username);
            if (user) {
                stored.members.add(user.id);
            }
        }
    }

    protected async createDiscussion(): Promise<string> {
        throw new Error('The test rig does not create discussions');
    }

    protected async delete(roomId: string, _appId: string): Promise<void> {
        this.rig.calls.record('write', 'room.delete');
        this.rig.store.rooms.delete(roomId);
    }

    protected async getModerators(): Promise<IUser[]> {
        return [];
    }

    protected async getOwners(roomId: string): Promise<IUser[]> {
        const room = this.rig.store.rooms.get(roomId);
        return room ? [this.rig.convert.userById(room.creatorId)].filter((u): u is IUser => Boolean(u)) : [];
    }

    protected async getLeaders(): Promise<IUser[]> {
        return [];
    }

    /**
     * The server's query (apps/meteor/app/apps/server/bridges/rooms.ts, getMessages):
     * `{ rid, _hidden: { $ne: true }, t: { $exists: false }, ...(showThreadMessages ? {} : { tmid: { $exists: false } }) }`,
     * so edit-history copies, hidden deleted messages, deletion stubs (`t: 'rm'`) and other
     * system messages are left out, and without showThreadMessages every thread reply is left
     * out, "also send to channel" ones included (the query has no `tshow` clause). The bridge
     * takes a missing showThreadMessages as false; the engine's RoomRead accessor defaults it
     * to true before calling. Sorted only by createdAt when asked, else in storage order; skip
     * and limit apply after the filter. The ≤100 limit is the engine accessor's; it is checked
     * here too so a test cannot pass by asking for more.
     */
    protected async getMessages(roomId: string, options: GetMessagesOptions, _appId: string): Promise<IMessageRaw[]> {
        this.rig.calls.record('read', 'room.getMessages');
        if (this.rig.failRoomReads) {
            throw new Error('rig: room reads are failing');
        }
        const limit = options.limit ?? 100;
        if (!Number.isFinite(limit) || limit > 100) {
            throw new Error(`Invalid limit provided. Expected number <= 100, got ${limit}`);
        }
        const all = this.rig.store.roomMessages.get(roomId) ?? [];
        const descending = options.sort?.createdAt === 'desc';
        const strict = this.rig.strict;
        const showThreads = strict ? Boolean(options.showThreadMessages) : options.showThreadMessages !== false;
        const skip = options.skip ?? 0;
        const out: IMessageRaw[] = [];
        let skipped = 0;
        // Walk from the requested end so a read near the newest messages costs what it returns, not the room's size.
        for (let n = 0; n < all.length && out.length < limit; n++) {
            const m = all[descending ? all.length - 1 - n : n];
            const hiddenThread = !showThreads && Boolean(m.tmid) && (strict || !m.tshow);
            if (m.t || m._hidden || hiddenThread) {
                continue;
            }
            if (skipped < skip) {
                skipped++;
                continue;
            }
            out.push(this.rig.convert.rawMessage(m));
        }
        return out;
    }

    protected async removeUsers(roomId: string, usernames: string[], _appId: string): Promise<void> {
        this.rig.calls.record('write', 'room.removeUsers');
        const room = this.rig.store.rooms.get(roomId);
        for (const username of usernames) {
            const user = this.rig.store.userByUsername(username);
            if (room && user) {
                room.members.delete(user.id);
            }
        }
    }

    protected async getUnreadByUser(): Promise<IMessageRaw[]> {
        return [];
    }

    protected async getUserUnreadMessageCount(): Promise<number> {
        return 0;
    }
}

/**
 * getThreadById as the server answers it (apps/meteor/app/apps/server/bridges/thread.ts →
 * converters/threads.ts convertById): the root, then every document matching
 * `{ $or: [{ _id: tid }, { tmid: tid }] }` unsorted, so the root comes twice and edit-history
 * copies (`_hidden`) and deletion stubs (`t: 'rm'`) are included; neither is marked on a
 * mapped field, only under `_unmappedProperties_` (`_hidden`, `t`).
 */
export class RigThreadBridge extends ThreadBridge {
    constructor(private readonly rig: RigServer) {
        super();
    }

    protected async getById(threadId: string, _appId: string): Promise<IMessage[]> {
        this.rig.calls.record('read', 'thread.getById');
        const root = this.rig.store.messages.get(threadId);
        if (!root) {
            return [];
        }
        const inRoom = this.rig.store.roomMessages.get(root.rid) ?? [];
        if (!this.rig.strict) {
            const replies = inRoom.filter((m) => m.tmid === threadId && !m.t && !m._hidden);
            return [root, ...replies.reverse(), root].map((m) => this.rig.convert.message(m));
        }
        const room = this.rig.convert.roomById(root.rid);
        if (!room) {
            return [];
        }
        // Mongo returns the matches in storage order; reversed here so the app cannot rely on any order.
        const matches = inRoom.filter((m) => m.id === threadId || m.tmid === threadId).reverse();
        return [root, ...matches].map((m) => this.rig.convert.threadMessage(m, room));
    }
}
