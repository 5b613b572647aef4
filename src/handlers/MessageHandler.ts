import { IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { admit, InboundMessage } from '../admission/admit';
import { EngineHistory } from '../context/engineHistory';
import { EngineChat } from '../delivery/engineChat';
import { ServerInfoCache } from '../delivery/serverInfo';
import { HermesClient } from '../hermes/client';
import { HermesTransport } from '../hermes/transport';
import { LogPort } from '../security/safeLog';
import { ConfigHolder } from '../settings/configHolder';
import { EngineSessions } from '../sessions/engineSessions';
import { runTurn } from '../turns/runTurn';
import { SerialQueue } from '../turns/serialQueue';
import { Turn, turnSessionKey } from '../turns/turn';
import { toInbound } from './inbound';
import { RecentlySeen } from './recentlySeen';

export interface MessageHandlerDeps {
    config: ConfigHolder;
    transport: HermesTransport;
}

/**
 * The adapter between the engine's message events and the core: guards first (cheapest
 * checks before any read), then one membership read for rooms, then the turn, queued
 * behind earlier turns of the same session.
 */
export class MessageHandler {
    private bot: IUser | undefined;
    private readonly seen = new RecentlySeen();
    private readonly queue = new SerialQueue();
    private readonly serverInfo = new ServerInfoCache();

    constructor(private readonly deps: MessageHandlerDeps) {}

    /** `log` is the engine's logger of this call: entries reach the admin log when the call returns. */
    public async handle(message: IMessage, read: IRead, persistence: IPersistence, modify: IModify, log: LogPort): Promise<void> {
        const bot = await this.botUser(read);
        if (!bot || !message.id) {
            return;
        }
        const inbound = await this.withRoomFacts(toInbound(message), message, read);
        const config = this.deps.config.get();
        const decision = admit(inbound, bot, { allowedUserIds: config?.allowedUserIds ?? [], ignoreSenders: config?.ignoreSenders ?? [] });
        if (!decision.admit) {
            if (decision.reason === 'not-allowed') {
                log.debug(`Ignored message ${inbound.id}: sender ${inbound.senderId} is not in allowed_user_ids.`);
            }
            return;
        }
        if (!(await this.botIsMember(read, message, bot)) || !this.seen.claim(inbound.id)) {
            return;
        }
        const turn: Turn = { message: inbound, kind: decision.kind, text: decision.text, createdAt: new Date(message.createdAt ?? Date.now()), roomName: message.room.slugifiedName };
        const ports = {
            config,
            hermes: config ? new HermesClient(this.deps.transport, config) : undefined,
            bot: { id: bot.id, username: bot.username },
            chat: new EngineChat(read, modify, bot, message.room),
            history: new EngineHistory(read, bot.id),
            sessions: new EngineSessions(read.getPersistenceReader(), persistence),
            server: (fresh?: boolean) => this.serverInfo.get(read, fresh),
            log,
            now: () => Date.now(),
        };
        const queueKey = config ? turnSessionKey(turn, config) : inbound.roomId;
        await this.queue.run(queueKey, () => runTurn(turn, ports));
    }

    /**
     * A direct room's member count decides between DM and room rules. The event's room
     * carries it; if it does not, read the room once, and if that fails treat it as a 1:1 DM
     * (the next message reads again).
     */
    private async withRoomFacts(inbound: InboundMessage, message: IMessage, read: IRead): Promise<InboundMessage> {
        if (inbound.roomType !== 'd' || inbound.directMemberCount !== undefined) {
            return inbound;
        }
        try {
            const room = await read.getRoomReader().getById(inbound.roomId);
            return { ...inbound, directMemberCount: room?.userIds?.length || undefined };
        } catch {
            return inbound;
        }
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
