import { IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { admit, InboundMessage } from '../admission/admit';
import { EngineHistory } from '../context/engineHistory';
import { EngineChat } from '../delivery/engineChat';
import { ServerInfoCache } from '../delivery/serverInfo';
import { HermesClient } from '../hermes/client';
import { LiveTurns } from '../hermes/liveTurns';
import { HermesTransport } from '../hermes/transport';
import { LogPort } from '../security/safeLog';
import { ConfigHolder } from '../settings/configHolder';
import { ensureConfig } from '../settings/ensureConfig';
import { EngineSessions } from '../sessions/engineSessions';
import { EngineTurns } from '../turns/engineTurns';
import { Receipts } from '../turns/receipts';
import { startTurn } from '../turns/startTurn';
import { Turn } from '../turns/turn';
import { engineTickPorts, scheduleTick } from '../turns/TurnJobs';
import { tick } from '../turns/tick';
import { CapabilitiesCache } from '../hermes/capabilitiesCache';
import { toInbound } from './inbound';
import { RecentlySeen } from './recentlySeen';

/** A direct room whose members could not be read counts as a group DM: room rules, never the looser DM ones. */
const UNKNOWN_MEMBERS = 3;

export interface MessageHandlerDeps {
    config: ConfigHolder;
    transport: HermesTransport;
    live: LiveTurns;
    serverInfo: ServerInfoCache;
    capabilities: CapabilitiesCache;
}

/**
 * The adapter between the engine's message events and the core: guards first (cheapest
 * checks before any read), one membership read for rooms, a persisted receipt so a message
 * is taken once ever, then the turn is started and left to the scheduler.
 */
export class MessageHandler {
    private bot: IUser | undefined;
    private readonly seen = new RecentlySeen();

    constructor(private readonly deps: MessageHandlerDeps) {}

    /** `log` is the engine's logger of this call: entries reach the admin log when the call returns. */
    public async handle(message: IMessage, read: IRead, persistence: IPersistence, modify: IModify, log: LogPort): Promise<void> {
        const bot = await this.botUser(read);
        if (!bot || !message.id) {
            return;
        }
        const inbound = await this.withRoomFacts(toInbound(message), read);
        const config = await ensureConfig(this.deps.config, read, log, persistence);
        const decision = admit(inbound, bot, {
            allowedUserIds: config?.allowedUserIds ?? [],
            ignoreSenders: config?.ignoreSenders ?? [],
            maxAgeSeconds: config?.maxMessageAgeSeconds ?? 120,
        });
        if (!decision.admit) {
            if (decision.reason === 'not-allowed' || decision.reason === 'too-old') {
                log.debug(`Ignored message ${inbound.id}: ${decision.reason === 'too-old' ? 'older than max_message_age_seconds' : `sender ${inbound.senderId} is not in allowed_user_ids`}.`);
            }
            return;
        }
        // In-process first (a DM's two events arrive back to back), then the persisted receipt (replays, other instances, restarts).
        if (!(await this.botIsMember(read, message, bot)) || !this.seen.claim(inbound.id)) {
            return;
        }
        const receipts = new Receipts(read.getPersistenceReader(), persistence);
        if (await receipts.taken(inbound.id)) {
            log.debug(`Message ${inbound.id} was already taken as a turn.`);
            return;
        }
        const turn: Turn = { message: inbound, kind: decision.kind, text: decision.text, createdAt: new Date(message.createdAt ?? Date.now()), roomName: message.room.slugifiedName };
        await startTurn(turn, {
            config,
            hermes: config ? new HermesClient(this.deps.transport, config) : undefined,
            bot: { id: bot.id, username: bot.username },
            chat: new EngineChat(read, modify, bot, message.room),
            history: new EngineHistory(read, bot.id),
            sessions: new EngineSessions(read.getPersistenceReader(), persistence),
            turns: new EngineTurns(read.getPersistenceReader(), persistence),
            live: this.deps.live,
            server: (fresh?: boolean) => this.deps.serverInfo.get(read, fresh),
            // The turn's first step runs here, in the event: it only starts handing the turn to
            // Hermes in the background and schedules the chain, so the event still returns at
            // once, and the turn does not queue behind other turns' jobs for its start.
            schedule: async (job) => {
                if (!config || job.wake) {
                    await scheduleTick(modify, job, 0);
                    return;
                }
                await tick(job, engineTickPorts({ ...this.deps, log: () => log }, config, bot, read, modify, persistence, log));
            },
            claim: () => receipts.record(inbound.id),
            log,
            now: () => Date.now(),
        });
    }

    /**
     * A direct room's member count decides between DM and room rules. The event's room
     * carries it; if it does not, read the room once, and if that fails too, fail closed:
     * room rules (a mention is needed, "always" is never offered); the next message reads again.
     */
    private async withRoomFacts(inbound: InboundMessage, read: IRead): Promise<InboundMessage> {
        if (inbound.roomType !== 'd' || inbound.directMemberCount !== undefined) {
            return inbound;
        }
        try {
            const room = await read.getRoomReader().getById(inbound.roomId);
            return { ...inbound, directMemberCount: room?.userIds?.length || UNKNOWN_MEMBERS };
        } catch {
            return { ...inbound, directMemberCount: UNKNOWN_MEMBERS };
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
