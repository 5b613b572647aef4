import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { INTAKE_AT_ONCE, IntakeGate } from '../turns/intakeGate';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { DecidePorts } from '../approvals/decide';
import { CommandPorts } from '../commands/runCommand';
import { CapabilitiesCache } from '../hermes/capabilitiesCache';
import { HermesClient } from '../hermes/client';
import { LiveTurns } from '../hermes/liveTurns';
import { HermesTransport } from '../hermes/transport';
import { SafeLog } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { ConfigHolder } from '../settings/configHolder';
import { SweepPorts } from '../turns/sweep';
import { TickJob, TickPorts } from '../turns/tickPorts';
import { AskerTokens, askerTokenIn } from './adapters/askerTokens';
import { EngineChat } from './adapters/engineChat';
import { EngineHistory } from './adapters/engineHistory';
import { EngineSessions } from './adapters/engineSessions';
import { EngineTurns } from './adapters/engineTurns';
import { EngineBeats } from './adapters/engineBeats';
import { ProcessBeat } from '../turns/processBeat';
import { MissedFirst } from './entry/missedFirst';
import { PlaceOrder } from '../turns/placeOrder';
import { ticksInHand } from '../turns/tick';
import { ensureConfig } from './adapters/ensureConfig';
import { ThreadFollows } from './adapters/threadFollows';
import { EngineCron } from './adapters/engineCron';
import { EngineUsage } from './adapters/engineUsage';
import { EngineSummaries } from './adapters/engineSummaries';
import { randomUUID } from 'crypto';
import { jobStanding, resolveCronTarget } from './adapters/cronTargets';
import { ISettingUpdater } from '@rocket.chat/apps-engine/definition/accessors/ISettingUpdater';
import { FirePorts, runEnded } from '../cron/fire';
import { EngineSessionIndex } from './adapters/engineSessionIndex';
import { Receipts } from './adapters/receipts';
import { ServerInfoCache } from './adapters/serverInfo';
import { botPostingRefusal, memberships } from './adapters/membership';

const TURN_JOB = 'hermes-turn';

/**
 * Rocket.Chat's scheduler (Agenda, `defaultConcurrency: 1`) runs one job per processor name at a
 * time in an instance: with one turn processor, every step of every turn queued behind every
 * other. Turns are spread over these processors, each chain of a turn always on the same one,
 * so one turn's steps still run one at a time while different turns' steps run side by side
 * (Agenda's own cap across names is 20). Eight: a step that waits (a finishing lease settles
 * for 200 ms, turns/lease.ts) holds only its own lane, and the next turn rarely shares it
 * (`npm run load`: 154 s with four lanes, 145 s with eight).
 *
 * By chain, not by turn alone: a process killed in a job leaves that processor busy on its
 * instance for the engine's 30 s request timeout, and the job it was in is most often a job of
 * the very turn that must now be taken over. A turn taken over gets a new chain (sweep.ts,
 * takeOverGone.ts), and with it most likely another lane (npm run chaos: a restarted turn's
 * first tick waited 20 s for its old lane on both instances).
 */
const TURN_LANES = 8;
export const TURN_JOBS = Array.from({ length: TURN_LANES }, (_, i) => (i === 0 ? TURN_JOB : `${TURN_JOB}-${i}`));

/** The processor of a turn's jobs: a stable hash of its id and chain. */
function turnJobName(turnId: string, chain = ''): string {
    const key = `${turnId}:${chain}`;
    let h = 0;
    for (let i = 0; i < key.length; i++) {
        h = (h * 31 + key.charCodeAt(i)) >>> 0;
    }
    return TURN_JOBS[h % TURN_JOBS.length];
}

/**
 * What lives as long as the app process: the configuration, the Hermes transport and the
 * streams of running turns, and the caches that save reads on every call (the bot user,
 * the server's limits, what Hermes offers, one Hermes client per configuration).
 */
export class AppState {
    public readonly live = new LiveTurns();
    /** This process's beat while it has turns in hand: the sweep tells a gone process by it (turns/beats.ts). */
    public readonly beat = new ProcessBeat(() => ticksInHand() || this.live.holdsAny());
    public readonly capabilities = new CapabilitiesCache();
    public readonly serverInfo = new ServerInfoCache();
    /** Message events reading and storing their turns at once (turns/intakeGate.ts). */
    public readonly intake = new IntakeGate(INTAKE_AT_ONCE);
    /** Message events of one room or thread storing their turns in the order they came (turns/placeOrder.ts). */
    public readonly placeOrder = new PlaceOrder();
    /** A new process's first event of a room takes the room's missed messages first (entry/missedFirst.ts). */
    public readonly missedFirst = new MissedFirst();
    /** The app's own settings, for `/hermes sethome` and `/hermes automation` (set by HermesApp). */
    public settingsWriter: ISettingUpdater | undefined;
    /** The installed app's id (`app.json`, set by HermesApp): what a private notice's buttons name. */
    public appId = '';
    private bot: IUser | undefined;
    private client: { config: HermesConfig; client: HermesClient } | undefined;

    constructor(
        public readonly transport: HermesTransport,
        public readonly config = new ConfigHolder(),
    ) {}

    public async botUser(read: IRead): Promise<IUser | undefined> {
        this.bot ??= await read.getUserReader().getAppUser();
        return this.bot;
    }

    public hermes(config: HermesConfig): HermesClient {
        if (this.client?.config !== config) {
            this.client = { config, client: new HermesClient(this.transport, config) };
        }
        return this.client.client;
    }

    /** The secrets the log must never show, from the configuration in force. */
    public secrets(): Array<string | undefined> {
        const c = this.config.get();
        return [c?.hermesApiKey, c?.endpointSecret, c?.askerKey];
    }

    /**
     * The configuration for one engine call (loaded in a restarted process, a newly applied one
     * persisted) and the call's log, with the configuration's secrets scrubbed.
     */
    public async loadConfig(read: IRead, logger: ILogger, persistence: IPersistence): Promise<{ log: SafeLog; config: HermesConfig | undefined }> {
        const log = this.log(logger);
        const config = await ensureConfig(this.config, read, log, persistence);
        log.setSecrets(this.secrets());
        return { log, config };
    }

    /** The logger of one engine call (the engine swaps it per call), with the secrets scrubbed. */
    public log(logger: ILogger): SafeLog {
        const log = new SafeLog(logger);
        log.setSecrets(this.secrets());
        return log;
    }
}

/** Schedules a tick of a turn as a one-time job (the scheduler survives app restarts); resolves with its job id. */
async function scheduleTick(modify: IModify, job: TickJob, delayMs: number): Promise<string | void> {
    const data: Record<string, unknown> = { turnId: job.turnId, chain: job.chain };
    if (job.wake) {
        data.wake = true;
    }
    return modify.getScheduler().scheduleOnce({ id: turnJobName(job.turnId, job.chain), when: new Date(Date.now() + Math.max(0, delayMs)), data });
}

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
    public commandExtras(config: HermesConfig): Pick<CommandPorts, 'cron' | 'updateSetting' | 'memberOf'> {
        return {
            memberOf: memberships(this.read),
            cron: {
                store: this.cron(),
                fire: this.cronFire(config),
                resolveTo: (spec, userId) => resolveCronTarget(spec, this.read, (this.bot as IUser).id, config.homeRoomId, userId, config),
                botCannotPost: async (place) => {
                    const room = await this.read.getRoomReader().getById(place.roomId);
                    return room ? botPostingRefusal(this.read, room, this.bot as IUser) : undefined;
                },
            },
            updateSetting: this.app.settingsWriter ? (id, value) => (this.app.settingsWriter as ISettingUpdater).updateValue(id, value) : undefined,
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
