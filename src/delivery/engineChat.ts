import { IModify, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { ChatPort, ReplyTarget } from './chatPort';

/** ChatPort on the engine's IModify: posts as the app's bot user. */
export class EngineChat implements ChatPort {
    constructor(private readonly read: IRead, private readonly modify: IModify, private readonly bot: IUser, private readonly knownRoom?: IRoom) {}

    public async post(target: ReplyTarget, text: string): Promise<string> {
        const room = this.knownRoom?.id === target.roomId ? this.knownRoom : await this.read.getRoomReader().getById(target.roomId);
        if (!room) {
            throw new Error(`room ${target.roomId} not found`);
        }
        const builder = this.modify.getCreator().startMessage().setSender(this.bot).setRoom(room).setText(text).setGroupable(false);
        if (target.threadId) {
            builder.setThreadId(target.threadId);
        }
        return this.modify.getCreator().finish(builder);
    }
}
