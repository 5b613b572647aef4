import { IModify, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { admit } from '../admission/admit';
import { EngineChat } from '../delivery/engineChat';
import { HermesClient } from '../hermes/client';
import { HermesTransport } from '../hermes/transport';
import { ConfigHolder } from '../settings/configHolder';
import { LogPort } from '../security/safeLog';
import { runTurn } from '../turns/runTurn';
import { toInbound } from './inbound';
import { RecentlySeen } from './recentlySeen';

export interface MessageHandlerDeps {
    config: ConfigHolder;
    transport: HermesTransport;
}

/**
 * The adapter between the engine's message events and the core: guards first (cheapest
 * checks before any read), then one membership read for rooms, then the turn.
 */
export class MessageHandler {
    private bot: IUser | undefined;
    private readonly seen = new RecentlySeen();

    constructor(private readonly deps: MessageHandlerDeps) {}

    /** `log` is the engine's logger of this call: entries reach the admin log when the call returns. */
    public async handle(message: IMessage, read: IRead, modify: IModify, log: LogPort): Promise<void> {
        const inbound = toInbound(message);
        const bot = await this.botUser(read);
        if (!bot || !inbound.id) {
            return;
        }
        const config = this.deps.config.get();
        const decision = admit(inbound, bot, { allowedUserIds: config?.allowedUserIds ?? [] });
        if (!decision.admit) {
            if (decision.reason === 'not-allowed') {
                log.debug(`Ignored message ${inbound.id}: sender ${inbound.senderId} is not in allowed_user_ids.`);
            }
            return;
        }
        if (!(await this.botIsMember(read, message, bot))) {
            return;
        }
        if (!this.seen.claim(inbound.id)) {
            return;
        }
        const hermes = config ? new HermesClient(this.deps.transport, config) : undefined;
        await runTurn(
            { message: inbound, kind: decision.kind, text: decision.text, roomName: message.room.slugifiedName },
            { hermes, chat: new EngineChat(read, modify, bot, message.room), log, now: () => Date.now() },
        );
    }

    /**
     * App users can post anywhere, so the app itself keeps the bot to rooms it was added to.
     * A direct room lists its members; other rooms cost one read of the bot's room ids.
     */
    private async botIsMember(read: IRead, message: IMessage, bot: IUser): Promise<boolean> {
        if (message.room.userIds && message.room.userIds.length > 0) {
            return message.room.userIds.includes(bot.id);
        }
        return (await read.getUserReader().getUserRoomIds(bot.id)).includes(message.room.id);
    }

    private async botUser(read: IRead): Promise<IUser | undefined> {
        if (!this.bot) {
            this.bot = await read.getUserReader().getAppUser();
        }
        return this.bot;
    }
}
