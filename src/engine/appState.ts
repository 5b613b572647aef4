import { ILogger, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { INTAKE_AT_ONCE, IntakeGate } from '../turns/intakeGate';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { CapabilitiesCache } from '../hermes/capabilitiesCache';
import { HermesClient } from '../hermes/client';
import { LiveTurns } from '../hermes/liveTurns';
import { HermesTransport } from '../hermes/transport';
import { SafeLog } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { ConfigHolder } from '../settings/configHolder';
import { ProcessBeat } from '../turns/processBeat';
import { MissedFirst } from './entry/missedFirst';
import { PlaceOrder } from '../turns/placeOrder';
import { ticksInHand } from '../turns/tickMemory';
import { ensureConfig } from './adapters/ensureConfig';
import { ISettingUpdater } from '@rocket.chat/apps-engine/definition/accessors/ISettingUpdater';
import { ServerInfoCache } from './adapters/serverInfo';

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
    private botRead: Promise<IUser | undefined> | undefined;
    private client: { config: HermesConfig; client: HermesClient } | undefined;

    constructor(
        public readonly transport: HermesTransport,
        public readonly config = new ConfigHolder(),
    ) {}

    /**
     * The bot user, read once. Calls that ask while the read is in flight share it and resume in
     * the order they asked: the message events' checks (`checkPostMessageSent`) ask first thing,
     * and the engine sends each event on when its check returns, so after a restart two messages
     * of one thread must not have their checks answered out of order (the later one's turn would
     * be stored, and sent, first: turns/placeOrder.ts keeps the order events arrive in).
     */
    public botUser(read: IRead): Promise<IUser | undefined> {
        if (this.bot) {
            return Promise.resolve(this.bot);
        }
        this.botRead ??= read
            .getUserReader()
            .getAppUser()
            .then((user) => (this.bot = user))
            .finally(() => {
                this.botRead = undefined;
            });
        return this.botRead;
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
