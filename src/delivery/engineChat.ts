import { IModify, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { ChatPort, ReplyTarget } from './chatPort';
import { BotMessageKind, KIND_FIELD } from './messageKind';

/** ChatPort on the engine's IModify: posts as the app's bot user, marked with its kind. */
export class EngineChat implements ChatPort {
    constructor(private readonly read: IRead, private readonly modify: IModify, private readonly bot: IUser, private readonly knownRoom?: IRoom) {}

    public async post(target: ReplyTarget, text: string, kind: BotMessageKind): Promise<string> {
        const room = this.knownRoom?.id === target.roomId ? this.knownRoom : await this.read.getRoomReader().getById(target.roomId);
        if (!room) {
            throw new Error(`room ${target.roomId} not found`);
        }
        const builder = this.modify
            .getCreator()
            .startMessage()
            .setSender(this.bot)
            .setRoom(room)
            .setText(text)
            .setGroupable(false)
            .addCustomField(KIND_FIELD, kind);
        if (target.threadId) {
            builder.setThreadId(target.threadId);
        }
        return this.modify.getCreator().finish(builder);
    }
}
