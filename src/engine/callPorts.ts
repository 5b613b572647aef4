import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { ActionPorts } from '../actions/actionTurn';
import { DecidePorts } from '../approvals/decide';
import { CommandPorts } from '../commands/commandPorts';
import { HermesClient } from '../hermes/client';
import { SafeLog } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { SweepPorts } from '../turns/sweep';
import { TickJob, TickPorts } from '../turns/tickPorts';
import { askerTokenIn, AskerTokens } from './adapters/askerTokens';
import { EngineChat } from './adapters/engineChat';
import { EngineHistory } from './adapters/engineHistory';
import { EngineSessions } from './adapters/engineSessions';
import { EngineTurns } from './adapters/engineTurns';
import { EngineBeats } from './adapters/engineBeats';
import { ThreadFollows } from './adapters/threadFollows';
import { EngineCron } from './adapters/engineCron';
import { EngineUsage } from './adapters/engineUsage';
import { EngineFeedback } from './adapters/engineFeedback';
import { EngineSummaries } from './adapters/engineSummaries';
import { randomUUID } from 'crypto';
import { jobStanding } from './adapters/cronTargets';
import { ISettingUpdater } from '@rocket.chat/apps-engine/definition/accessors/ISettingUpdater';
import { FirePorts, runEnded } from '../cron/fire';
import { EngineSessionIndex } from './adapters/engineSessionIndex';
import { Receipts } from './adapters/receipts';
import { memberships } from './adapters/membership';
import { AppState } from './appState';
import { scheduleTick } from './turnLanes';
import { exchangePorts } from './exchangePorts';
import { cronCommandPorts } from './cronPorts';
import { backgroundPorts } from './backgroundPorts';
import { readableMessages } from './adapters/readableMessages';

/**
 * The one place that builds the core's ports for one engine call, on that call's accessors.
 * Entry points open one of these and hand the core what it asks for; the core never
 * assembles ports itself.
 */
export class CallPorts {
    private constructor(
        public readonly app: AppState,
        public readonly read: IRead,
        public readonly modify: IModify,
        public readonly persistence: IPersistence,
        public readonly log: SafeLog,
        public readonly config: HermesConfig | undefined,
        public readonly bot: IUser | undefined,
    ) {}

    /** Loads the configuration (persisting a newly applied one) and the bot user for this call. */
    public static async open(app: AppState, read: IRead, modify: IModify, persistence: IPersistence, logger: ILogger): Promise<CallPorts> {
        const { log, config } = await app.loadConfig(read, logger, persistence);
        return new CallPorts(app, read, modify, persistence, log, config, await app.botUser(read));
    }

    public hermes(): HermesClient | undefined {
        return this.config ? this.app.hermes(this.config) : undefined;
    }

    public chat(room?: IRoom): EngineChat {
        return new EngineChat(this.read, this.modify, this.bot as IUser, this.app.appId, room);
    }

    public history(): EngineHistory {
        return new EngineHistory(this.read, (this.bot as IUser).id);
    }

    public sessions(): EngineSessions {
        return new EngineSessions(this.read.getPersistenceReader(), this.persistence);
    }

    public turns(): EngineTurns {
        return new EngineTurns(this.read.getPersistenceReader(), this.persistence);
    }

    public sessionIndex(): EngineSessionIndex {
        return new EngineSessionIndex(this.read.getPersistenceReader(), this.persistence);
    }

    public follows(): ThreadFollows {
        return new ThreadFollows(this.read.getPersistenceReader(), this.persistence);
    }

    public receipts(): Receipts {
        return new Receipts(this.read.getPersistenceReader(), this.persistence);
    }

    public askerTokens(): AskerTokens {
        return new AskerTokens(this.read.getPersistenceReader(), this.persistence);
    }

    public schedule(job: TickJob, delayMs: number): Promise<string | void> {
        return scheduleTick(this.modify, job, delayMs);
    }

    /** Ports of a turn's tick (needs a configuration and the bot user). */
    public tick(config: HermesConfig): TickPorts {
        const hermes = this.app.hermes(config);
        return {
            config,
            hermes,
            capabilities: () => this.app.capabilities.get(hermes, `${config.hermesUrl}#${config.hermesTransport}`),
            store: this.turns(),
            sessions: this.sessions(),
            chat: this.chat(),
            history: this.history(),
            botId: (this.bot as IUser).id,
            botUsername: (this.bot as IUser).username,
            index: this.sessionIndex(),
            usage: this.usage(),
            keepSummary: async (rec, text) => {
                const id = randomUUID();
                await this.summaries().keep({ id, ownerId: rec.askerId, roomId: rec.roomId, threadId: rec.threadId as string, text, at: Date.now() });
                return id;
            },
            readFile: async (fileId) => new Uint8Array(await this.read.getUploadReader().getBufferById(fileId)),
            cronDone: (jobId, runId, outcome) => runEnded(this.cron(), jobId, runId, outcome, config.timezone),
            follow: config.threadFollow === 'off' ? undefined : (threadId, askerId) => this.follows().add(threadId, askerId),
            server: (fresh?: boolean) => this.app.serverInfo.get(this.read, fresh),
            live: this.app.live,
            beat: () => this.app.beat.touch(this.beats()),
            beats: this.beats(),
            schedule: (job, delayMs) => this.schedule(job, delayMs),
            cancel: (jobId) => this.modify.getScheduler().cancelJob(jobId),
            claimSend: (key) => this.receipts().claimFirst(`send:${key}`),
            readableMessages: (userId, messageIds) => readableMessages(this.read, userId, (this.bot as IUser).id, messageIds),
            markNewestToken: async (sessionKey, userText, sessionId) => {
                const token = config.askerKey ? askerTokenIn(userText) : undefined;
                if (token) {
                    await this.askerTokens().markNewest(sessionKey, token, sessionId);
                }
            },
            log: this.log,
            now: () => Date.now(),
        };
    }

    public summaries(): EngineSummaries {
        return new EngineSummaries(this.read.getPersistenceReader(), this.persistence);
    }

    public usage(): EngineUsage {
        return new EngineUsage(this.read.getPersistenceReader(), this.persistence);
    }

    public feedback(): EngineFeedback {
        return new EngineFeedback(this.read.getPersistenceReader(), this.persistence);
    }

    public cron(): EngineCron {
        return new EngineCron(this.read.getPersistenceReader(), this.persistence);
    }

    /** Ports of the scheduled prompts' firing (the sweep, and `/hermes cron run`). */
    public cronFire(config: HermesConfig): FirePorts {
        return {
            store: this.cron(),
            turns: this.turns(),
            claim: (runId) => this.receipts().claim(runId),
            claimedAt: (runId) => this.receipts().claimedAt(runId),
            schedule: (job) => this.schedule(job, 0),
            // Each firing re-checks its owner and room (cron/recheck.ts).
            config,
            standing: (job) => jobStanding(this.read, job, this.bot as IUser, config),
            usage: this.usage(),
            log: this.log,
            now: () => Date.now(),
        };
    }

    public beats(): EngineBeats {
        return new EngineBeats(this.read.getPersistenceReader(), this.persistence);
    }

    public sweep(): SweepPorts {
        return {
            store: this.turns(),
            beats: this.beats(),
            schedule: (job, delayMs) => this.schedule(job, delayMs),
            log: this.log,
            now: () => Date.now(),
            config: this.config,
        };
    }

    /**
     * What the commands need beyond the session ones: scheduled prompts, the settings writer, and
     * membership (also here for the text commands, whose ports the message event builds from these).
     */
    public commandExtras(
        config: HermesConfig,
        /** The room the command was run in, when the caller holds it: a background task's start reads it no more. */
        room?: IRoom,
    ): Pick<CommandPorts, 'cron' | 'updateSetting' | 'memberOf' | 'feedback' | 'exchange' | 'background'> {
        return {
            exchange: exchangePorts(this, config),
            background: backgroundPorts(this, config, room),
            memberOf: memberships(this.read),
            feedback: this.feedback(),
            cron: cronCommandPorts(this, config),
            updateSetting: this.app.settingsWriter ? (id, value) => (this.app.settingsWriter as ISettingUpdater).updateValue(id, value) : undefined,
        };
    }

    /** Ports of a turn an action starts (a message action, the panel's, a retry); `notify` tells the clicker why nothing started. */
    public actionPorts(config: HermesConfig, notify: ActionPorts['notify']): ActionPorts {
        return {
            turns: this.turns(),
            claim: (id) => this.receipts().claim(id),
            schedule: async (job) => this.schedule(job, 0),
            now: () => Date.now(),
            config,
            usage: this.usage(),
            notify,
            log: this.log,
        };
    }

    /** Ports of a command; `wake` lets a stopped queued turn see its stop at once. */
    public commands(config: HermesConfig): CommandPorts {
        return {
            config,
            hermes: this.app.hermes(config),
            sessions: this.sessions(),
            turns: this.turns(),
            live: this.app.live,
            log: this.log,
            botUsername: (this.bot as IUser).username,
            index: this.sessionIndex(),
            wake: async (rec) => {
                await this.schedule({ turnId: rec.id, chain: rec.chain, wake: true }, 0);
            },
            memberOf: memberships(this.read),
        };
    }

    public decide(config: HermesConfig, room?: IRoom): DecidePorts {
        return { config, hermes: this.app.hermes(config), store: this.turns(), chat: this.chat(room), log: this.log };
    }
}
