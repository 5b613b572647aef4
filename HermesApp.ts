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
import { HermesCommand } from './src/commands/HermesCommand';
import { PingEndpoint } from './src/endpoints/PingEndpoint';
import { MessageHandler } from './src/handlers/MessageHandler';
import { FetchTransport } from './src/hermes/transport';
import { SafeLog } from './src/security/safeLog';
import { ConfigHolder } from './src/settings/configHolder';
import { SETTINGS } from './src/settings/definitions';
import { readSettings } from './src/settings/readSettings';
import { reportConfig } from './src/settings/reportConfig';

/** Wiring only: settings, event handlers, endpoints. Behaviour lives under src/. */
export class HermesApp extends App implements IPostMessageSent, IPostMessageSentToBot {
    private readonly config = new ConfigHolder();
    private readonly transport = new FetchTransport();
    private readonly messages = new MessageHandler({ config: this.config, transport: this.transport });

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

    protected async extendConfiguration(configuration: IConfigurationExtend): Promise<void> {
        await Promise.all(SETTINGS.map((setting) => configuration.settings.provideSetting(setting)));
        await configuration.slashCommands.provideSlashCommand(new HermesCommand(this, this.config, this.transport));
        // Callers authenticate with their own JWT (endpoint_secret), not a Rocket.Chat login.
        await configuration.api.provideApi({
            visibility: ApiVisibility.PUBLIC,
            security: ApiSecurity.UNSECURE,
            endpoints: [new PingEndpoint(this, this.config, this.getVersion())],
        });
    }

    private async reloadSettings(environment: IEnvironmentRead): Promise<void> {
        const log = this.log();
        const update = this.config.apply(await readSettings(environment.getSettings()));
        log.setSecrets(this.secrets());
        reportConfig(update, log);
    }

    /** The logger of the current engine call (the engine swaps it per call), with secrets scrubbed. */
    private log(): SafeLog {
        const log = new SafeLog(this.getLogger());
        log.setSecrets(this.secrets());
        return log;
    }

    private secrets(): Array<string | undefined> {
        const config = this.config.get();
        return [config?.hermesApiKey, config?.endpointSecret];
    }
}
