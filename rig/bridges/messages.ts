import { IMessage, Reaction } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { ITypingDescriptor } from '@rocket.chat/apps-engine/server/bridges/MessageBridge';
import { MessageBridge } from '@rocket.chat/apps-engine/server/bridges';
import type { RigServer } from '../server';
import { assertBridgeReaction } from '../reactions';

/** The server's message bridge: writes go through the server's send, edit and delete rules (RigServer). */
export class RigMessageBridge extends MessageBridge {
    constructor(private readonly rig: RigServer) {
        super();
    }

    /** apps/meteor/app/apps/server/bridges/messages.ts → executeSendMessage (see RigServer.sendAppMessage). */
    protected async create(message: IMessage, _appId: string): Promise<string> {
        this.rig.calls.record('write', 'message.create');
        return this.rig.sendAppMessage(message).id;
    }

    /** The bridge's editor and existence checks, then updateMessage (see RigServer.updateAppMessage). */
    protected async update(message: IMessage, _appId: string): Promise<void> {
        this.rig.calls.record('write', 'message.update');
        this.rig.updateAppMessage(message);
    }

    protected async notifyUser(user: IUser, message: IMessage, _appId: string): Promise<void> {
        this.rig.calls.record('write', 'message.notifyUser');
        this.rig.recordEphemeral(user.id, message);
    }

    protected async notifyRoom(room: IRoom, message: IMessage, _appId: string): Promise<void> {
        this.rig.calls.record('write', 'message.notifyRoom');
        for (const member of this.rig.store.rooms.get(room.id)?.members ?? []) {
            this.rig.recordEphemeral(member, message);
        }
    }

    protected async typing(options: ITypingDescriptor, _appId: string): Promise<void> {
        this.rig.calls.record('write', 'message.typing');
        this.rig.typing.push({ ...options, at: Date.now() });
    }

    protected async getById(messageId: string, _appId: string): Promise<IMessage> {
        this.rig.calls.record('read', 'message.getById');
        const stored = this.rig.store.messages.get(messageId);
        return (stored ? this.rig.convert.message(stored) : undefined) as IMessage;
    }

    /** The bridge converts the message (its room must exist) and the user, then deleteMessage (see RigServer.deleteMessage). */
    protected async delete(message: IMessage, user: IUser, _appId: string): Promise<void> {
        this.rig.calls.record('write', 'message.delete');
        if (!message.id) {
            throw new Error('Invalid message id');
        }
        if (this.rig.strict && (!message.room?.id || !this.rig.store.rooms.has(message.room.id))) {
            throw new Error('Invalid room provided on the message.');
        }
        this.rig.deleteMessage(message.id, user ? this.rig.store.users.get(user.id) : undefined);
    }

    /** The bridge's `:name:` check, then executeSetReaction (see RigServer.setReaction). */
    protected async addReaction(messageId: string, userId: string, reaction: Reaction): Promise<void> {
        this.rig.calls.record('write', 'message.addReaction');
        assertBridgeReaction(reaction);
        this.rig.setReaction(userId, reaction, messageId, true);
    }

    protected async removeReaction(messageId: string, userId: string, reaction: Reaction): Promise<void> {
        this.rig.calls.record('write', 'message.removeReaction');
        assertBridgeReaction(reaction);
        this.rig.setReaction(userId, reaction, messageId, false);
    }
}
