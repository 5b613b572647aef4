import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { conversationKind } from '../../admission/admit';
import { describeRefusal, refusalNotice, roomRules } from '../../admission/turnAdmission';
import { commandSessionKey } from '../../commands/conversationScope';
import { policyForRoom } from '../../policy/roomPolicy';
import { HermesConfig } from '../../settings/config';
import { CallPorts } from '../callPorts';
import { Accessors, Gate, Subject, Way } from './gate';

/** One admitted UIKit request (a message action, the panel, the Ask modal): its ports, who asked, where. */
export interface Ctx {
    call: CallPorts;
    config: HermesConfig;
    bot: IUser;
    user: IUser;
    room: IRoom;
    triggerId: string;
    /** The clicking person's language preference: what only they see is in it. */
    language?: string;
}

/** Through the gate (the caller against the room and message named), then the surface's own rule: message actions on. */
export async function openSurface(gate: Gate, way: Way, a: Accessors, user: IUser, subject: Subject, triggerId: string): Promise<Ctx | undefined> {
    const admitted = await gate.person(way, a, user, subject);
    if (!admitted) {
        return undefined;
    }
    const { call, config, bot, room, language } = admitted;
    if (!config || !config.messageActions) {
        call.log.debug(`Refused a message action from ${user.id} in room ${room.id}: message actions are off or no configuration.`);
        await call.chat(room).whisper(user.id, { roomId: room.id }, (tr) => tr('action_not_available'));
        return undefined;
    }
    // The room's rules as a mention meets them (an `off` or automation room, a malformed policy), before any history is read.
    const rules = roomRules(
        {
            source: 'action',
            asker: { id: user.id, username: user.username },
            room: { id: room.id, type: String(room.type), directMemberCount: room.userIds?.length },
        },
        config,
    );
    if (!rules.admit) {
        call.log.info(`Refused a message action from ${user.id} in room ${room.id}: ${describeRefusal(rules)}.`);
        await call.chat(room).whisper(user.id, { roomId: room.id }, refusalNotice(rules, config));
        return undefined;
    }
    return { call, config, bot, user, room, triggerId, language };
}

export function isDm(ctx: Ctx): boolean {
    return conversationKind({ roomType: String(ctx.room.type), directMemberCount: ctx.room.userIds?.length }) === 'dm';
}

export function mainKey(ctx: Ctx, threadId?: string): string {
    // A room whose policy names a profile has its sessions under that profile's keys, as its turns and `/hermes` do.
    const policy = policyForRoom(ctx.config, ctx.room.id, isDm(ctx));
    return commandSessionKey(
        {
            roomType: String(ctx.room.type),
            roomId: ctx.room.id,
            directMemberCount: ctx.room.userIds?.length,
            threadId,
            userId: ctx.user.id,
            profile: policy.kind === 'entry' ? policy.policy.profile : undefined,
        },
        ctx.config,
    );
}
