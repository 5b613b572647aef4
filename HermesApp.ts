import {
    IAppAccessors,
    IConfigurationExtend,
    IConfigurationModify,
    IEnvironmentRead,
    IHttp,
    ILogger,
    IModify,
    IPersistence,
    IRead,
} from '@rocket.chat/apps-engine/definition/accessors';
import { ApiSecurity, ApiVisibility } from '@rocket.chat/apps-engine/definition/api';
import { App } from '@rocket.chat/apps-engine/definition/App';
import { IMessage, IPostMessageSent } from '@rocket.chat/apps-engine/definition/messages';
import { IPostMessageSentToBot } from '@rocket.chat/apps-engine/definition/messages/IPostMessageSentToBot';
import { IAppInfo } from '@rocket.chat/apps-engine/definition/metadata';
import { ISetting } from '@rocket.chat/apps-engine/definition/settings';
import { IUIKitInteractionHandler, IUIKitResponse, UIKitBlockInteractionContext } from '@rocket.chat/apps-engine/definition/uikit';
import { ApprovalActionHandler } from './src/approvals/ApprovalActionHandler';
import { HermesCommand } from './src/commands/HermesCommand';
import { ServerInfoCache } from './src/delivery/serverInfo';
import { HistoryEndpoint } from './src/endpoints/HistoryEndpoint';
import { PingEndpoint } from './src/endpoints/PingEndpoint';
import { MessageHandler } from './src/handlers/MessageHandler';
import { CapabilitiesCache } from './src/hermes/capabilitiesCache';
import { HermesClient } from './src/hermes/client';
import { LiveTurns } from './src/hermes/liveTurns';
import { FetchTransport } from './src/hermes/transport';
import { SafeLog } from './src/security/safeLog';
import { ConfigHolder } from './src/settings/configHolder';
import { SETTINGS } from './src/settings/definitions';
import { readSettings } from './src/settings/readSettings';
import { reportConfig } from './src/settings/reportConfig';
import { turnProcessors } from './src/turns/TurnJobs';

/** Wiring only: settings, event handlers, the slash command, scheduler jobs, endpoints. Behaviour lives under src/. */
export class HermesApp extends App implements IPostMessageSent, IPostMessageSentToBot, IUIKitInteractionHandler {
    private readonly config = new ConfigHolder();
    private readonly transport = new FetchTransport();
    private readonly live = new LiveTurns();
    private readonly capabilities = new CapabilitiesCache();
    private readonly serverInfo = new ServerInfoCache();
    private readonly messages = new MessageHandler({ config: this.config, transport: this.transport, live: this.live, serverInfo: this.serverInfo, capabilities: this.capabilities });
    private readonly approvals = new ApprovalActionHandler(this.config, this.transport);

    constructor(info: IAppInfo, logger: ILogger, accessors: IAppAccessors) {
        super(info, logger, accessors);
    }

    public async onEnable(environment: IEnvironmentRead, _configurationModify: IConfigurationModify): Promise<boolean> {
        await this.reloadSettings(environment);
        return true;
    }

    public async onSettingUpdated(_setting: ISetting, _configurationModify: IConfigurationModify, read: IRead, _http: IHttp): Promise<void> {
        await this.reloadSettings(read.getEnvironmentReader());
    }

    public async executePostMessageSentToBot(message: IMessage, read: IRead, _http: IHttp, persistence: IPersistence, modify: IModify): Promise<void> {
        await this.messages.handle(message, read, persistence, modify, this.log());
    }

    public async executePostMessageSent(message: IMessage, read: IRead, _http: IHttp, persistence: IPersistence, modify: IModify): Promise<void> {
        await this.messages.handle(message, read, persistence, modify, this.log());
    }

    public async executeBlockActionHandler(context: UIKitBlockInteractionContext, read: IRead, http: IHttp, persistence: IPersistence, modify: IModify): Promise<IUIKitResponse> {
        return this.approvals.handle(context, read, http, persistence, modify, this.log());
    }

    protected async extendConfiguration(configuration: IConfigurationExtend): Promise<void> {
        await Promise.all(SETTINGS.map((setting) => configuration.settings.provideSetting(setting)));
        await configuration.slashCommands.provideSlashCommand(new HermesCommand(this, this.config, this.transport, this.live));
        await configuration.scheduler.registerProcessors(
            turnProcessors({ config: this.config, transport: this.transport, live: this.live, capabilities: this.capabilities, serverInfo: this.serverInfo, log: (callApp) => this.log(callApp) }),
        );
        // Callers authenticate with their own JWT (endpoint_secret), not a Rocket.Chat login.
        await configuration.api.provideApi({
            visibility: ApiVisibility.PUBLIC,
            security: ApiSecurity.UNSECURE,
            endpoints: [new PingEndpoint(this, this.config, this.getVersion()), new HistoryEndpoint(this, this.config)],
        });
    }

    /** Parses the settings, reports them, and probes what the configured Hermes offers. */
    private async reloadSettings(environment: IEnvironmentRead): Promise<void> {
        const log = this.log();
        const update = this.config.apply(await readSettings(environment.getSettings()));
        log.setSecrets(this.secrets());
        reportConfig(update, log);
        const config = this.config.get();
        if (update.kind !== 'applied' || !config) {
            return;
        }
        try {
            const caps = await this.capabilities.refresh(new HermesClient(this.transport, config), `${config.hermesUrl}#${config.hermesTransport}`);
            log.info(`Hermes ${caps.version ?? '(version unknown)'} reachable; ${caps.runs ? `runs offered${caps.runsLoadHistory ? ' (history loaded by Hermes)' : ' (history sent by the app)'}` : 'no runs: chat completions only'}; transport setting ${config.hermesTransport}.`);
        } catch (error) {
            this.capabilities.forget();
            log.warn(`Hermes could not be probed (${error instanceof Error ? error.message : String(error)}); the first turn will try again.`);
        }
    }

    /** The logger of the current engine call (the engine swaps it per call), with secrets scrubbed. */
    private log(callApp: { getLogger(): ILogger } = this): SafeLog {
        const log = new SafeLog(callApp.getLogger());
        log.setSecrets(this.secrets());
        return log;
    }

    private secrets(): Array<string | undefined> {
        const config = this.config.get();
        return [config?.hermesApiKey, config?.endpointSecret, config?.askerKey];
    }
}
