import { IMessage, Reaction } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { ITypingDescriptor } from '@rocket.chat/apps-engine/server/bridges/MessageBridge';
import { MessageBridge } from '@rocket.chat/apps-engine/server/bridges';
import type { RigServer } from '../server';

/** Messages as the server stores them, with its size limit, edit marks and post-send events. */
export class RigMessageBridge extends MessageBridge {
    constructor(private readonly rig: RigServer) {
        super();
    }

    protected async create(message: IMessage, appId: string): Promise<string> {
        this.rig.calls.record('write', 'message.create');
        const text = message.text ?? '';
        this.rig.assertMessageSize(text);
        if (this.rig.refuseMessage?.(text)) {
            throw new Error('error-action-not-allowed');
        }
        if (!message.room?.id || !this.rig.store.rooms.has(message.room.id)) {
            throw new Error('error-invalid-room');
        }
        const stored = this.rig.store.insertMessage({
            rid: message.room.id,
            senderId: message.sender.id,
            text,
            tmid: message.threadId,
            attachments: message.attachments?.map((a) => ({ title: typeof a.title === 'object' ? a.title?.value : undefined, text: a.text })),
            customFields: message.customFields,
            groupable: message.groupable,
            blocks: message.blocks as unknown[] | undefined,
        });
        this.rig.emitPosted(stored, appId);
        return stored.id;
    }

    protected async update(message: IMessage, _appId: string): Promise<void> {
        this.rig.calls.record('write', 'message.update');
        const stored = message.id ? this.rig.store.messages.get(message.id) : undefined;
        if (!stored) {
            throw new Error('A message must exist to update.');
        }
        this.rig.assertMessageSize(message.text ?? '');
        stored.text = message.text ?? '';
        stored.blocks = message.blocks as unknown[] | undefined;
        stored.attachments = message.attachments?.map((a) => ({ title: typeof a.title === 'object' ? a.title?.value : undefined, text: a.text }));
        // Every update marks the message edited, as the server does.
        stored.editedAt = this.rig.store.nextDate();
        stored.updatedAt = stored.editedAt;
        stored.editorId = message.editor?.id ?? message.sender?.id;
        this.rig.emitUpdated(stored);
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

    protected async delete(message: IMessage, _user: IUser, _appId: string): Promise<void> {
        this.rig.calls.record('write', 'message.delete');
        if (message.id) {
            this.rig.deleteMessage(message.id);
        }
    }

    protected async addReaction(messageId: string, userId: string, reaction: Reaction): Promise<void> {
        this.rig.calls.record('write', 'message.addReaction');
        this.rig.reactions.push({ messageId, userId, reaction, added: true });
    }

    protected async removeReaction(messageId: string, userId: string, reaction: Reaction): Promise<void> {
        this.rig.calls.record('write', 'message.removeReaction');
        this.rig.reactions.push({ messageId, userId, reaction, added: false });
    }
}
