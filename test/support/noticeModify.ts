import { IModify } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';

/** A private notice as the gate's refusal sends it: who got it, in which room, what it said. */
export type Notice = { to: string; room: string; text: string };

/** The engine's modify accessor as far as the gate uses it: message builders, and notifyUser recorded into `notices`. */
export function noticeModify(notices: Notice[]): IModify {
    const builder = () => {
        const m: Record<string, unknown> = {};
        const b = {
            setSender: () => b,
            setRoom: (r: IRoom) => ((m.room = r), b),
            setText: (t: string) => ((m.text = t), b),
            setGroupable: () => b,
            setThreadId: () => b,
            setBlocks: () => b,
            addBlocks: () => b,
            getMessage: () => m,
        };
        return b;
    };
    return {
        getCreator: () => ({ startMessage: builder }),
        getNotifier: () => ({
            notifyUser: async (to: IUser, m: { room: IRoom; text: string }) => {
                notices.push({ to: to.id, room: m.room.id, text: m.text });
            },
        }),
    } as unknown as IModify;
}
