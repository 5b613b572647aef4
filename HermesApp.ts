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
import { IMessage, IMessageReactionContext, IPostMessageReacted, IPostMessageSent, IPostMessageUpdated } from '@rocket.chat/apps-engine/definition/messages';
import { IPostMessageSentToBot } from '@rocket.chat/apps-engine/definition/messages/IPostMessageSentToBot';
import { IAppInfo } from '@rocket.chat/apps-engine/definition/metadata';
import { ISetting } from '@rocket.chat/apps-engine/definition/settings';
import {
    IUIKitInteractionHandler,
    IUIKitResponse,
    UIKitActionButtonInteractionContext,
    UIKitBlockInteractionContext,
    UIKitViewSubmitInteractionContext,
} from '@rocket.chat/apps-engine/definition/uikit';
import { AppState } from './src/engine/appState';
import { dropEmptyListenerKeys } from './src/engine/eventTargetLeak';
import { ApprovalActionHandler } from './src/engine/entry/ApprovalActionHandler';
import { Gate } from './src/engine/entry/gate';
import { HermesCommand } from './src/engine/entry/HermesCommand';
import { HistoryEndpoint } from './src/engine/entry/HistoryEndpoint';
import { MessageHandler } from './src/engine/entry/MessageHandler';
import { takeMissedMessages } from './src/engine/entry/missedMessages';
import { PingEndpoint } from './src/engine/entry/PingEndpoint';
import { McpEndpoint } from './src/engine/entry/McpEndpoint';
import { WriteApprovalActions } from './src/engine/entry/WriteApprovalActions';
import { FeedbackActions } from './src/engine/entry/FeedbackActions';
import { ReactionHandler } from './src/engine/entry/ReactionHandler';
import { sweepAfterStart, turnProcessors } from './src/engine/entry/TurnJobs';
import { registerButtons, UiActions } from './src/engine/entry/UiActions';
import { reportSettings, settingsChanged, settingsReportProcessor } from './src/engine/entry/SettingsReport';
import { FetchTransport } from './src/hermes/fetchTransport';
import { SETTINGS } from './src/settings/definitions';

/** Wiring only: settings, event handlers, the slash command, scheduler jobs, endpoints. Behaviour lives under src/. */
export class HermesApp extends App implements IPostMessageSent, IPostMessageSentToBot, IPostMessageUpdated, IPostMessageReacted, IUIKitInteractionHandler {
    private readonly state = new AppState(new FetchTransport());
    /** Every entry point gets its ports from the gate, which checks the caller against what the request names. */
    private readonly gate = new Gate(this.state);
    private readonly messages = new MessageHandler(this.state, this.gate);
    private readonly approvals = new ApprovalActionHandler(this.gate);
    private readonly ui = new UiActions(this.gate);
    private readonly reactions = new ReactionHandler(this.gate);
    private readonly feedback = new FeedbackActions(this.gate);
    private readonly writes = new WriteApprovalActions(this.gate);

    constructor(info: IAppInfo, logger: ILogger, accessors: IAppAccessors) {
        super(info, logger, accessors);
        // The engine's runtime keeps a key per bridge call for the life of the process (see the file).
        dropEmptyListenerKeys();
        // `?.`: rc-apps' packager checks the class by constructing it without accessors.
        this.state.settingsWriter = accessors?.environmentWriter.getSettings();
        this.state.appId = info?.id ?? '';
    }

    public async onEnable(environment: IEnvironmentRead, configurationModify: IConfigurationModify): Promise<boolean> {
        await this.reloadSettings(environment);
        await sweepAfterStart(configurationModify.scheduler, this.getLogger());
        this.state.missedFirst.enabled(Date.now());
        return true;
    }

    public async onSettingUpdated(_setting: ISetting, configurationModify: IConfigurationModify, read: IRead, _http: IHttp): Promise<void> {
        await settingsChanged(this.state, configurationModify, read, this.getLogger());
    }

    public async executePostMessageSentToBot(message: IMessage, read: IRead, _http: IHttp, persistence: IPersistence, modify: IModify): Promise<void> {
        await this.messages.handle(message, read, persistence, modify, this.getLogger());
    }

    public async executePostMessageSent(message: IMessage, read: IRead, _http: IHttp, persistence: IPersistence, modify: IModify): Promise<void> {
        await this.messages.handle(message, read, persistence, modify, this.getLogger());
    }

    public async checkPostMessageSent(message: IMessage, read: IRead): Promise<boolean> {
        return this.messages.worthHandling(message, read);
    }

    public async checkPostMessageUpdated(message: IMessage, read: IRead): Promise<boolean> {
        return this.messages.worthHandling(message, read);
    }

    public async executePostMessageUpdated(message: IMessage, read: IRead, _http: IHttp, persistence: IPersistence, modify: IModify): Promise<void> {
        await this.messages.handleEdit(message, read, persistence, modify, this.getLogger());
    }

    public async executePostMessageReacted(
        context: IMessageReactionContext,
        read: IRead,
        _http: IHttp,
        persistence: IPersistence,
        modify: IModify,
    ): Promise<void> {
        await this.reactions.handle(context, read, persistence, modify, this.getLogger());
    }

    public async executeBlockActionHandler(
        context: UIKitBlockInteractionContext,
        read: IRead,
        _http: IHttp,
        persistence: IPersistence,
        modify: IModify,
    ): Promise<IUIKitResponse> {
        if (
            (await this.ui.blockAction(context, read, modify, persistence, this.getLogger())) ||
            (await this.feedback.blockAction(context, read, modify, persistence, this.getLogger())) ||
            (await this.writes.blockAction(context, read, modify, persistence, this.getLogger()))
        ) {
            return context.getInteractionResponder().successResponse();
        }
        return this.approvals.handle(context, read, persistence, modify, this.getLogger());
    }

    public async executeActionButtonHandler(
        context: UIKitActionButtonInteractionContext,
        read: IRead,
        _http: IHttp,
        persistence: IPersistence,
        modify: IModify,
    ): Promise<IUIKitResponse> {
        return this.ui.actionButton(context, read, modify, persistence, this.getLogger());
    }

    public async executeViewSubmitHandler(
        context: UIKitViewSubmitInteractionContext,
        read: IRead,
        _http: IHttp,
        persistence: IPersistence,
        modify: IModify,
    ): Promise<IUIKitResponse> {
        return (
            (await this.feedback.viewSubmit(context, read, modify, persistence, this.getLogger())) ??
            this.ui.viewSubmit(context, read, modify, persistence, this.getLogger())
        );
    }

    protected async extendConfiguration(configuration: IConfigurationExtend): Promise<void> {
        await Promise.all(SETTINGS.map((setting) => configuration.settings.provideSetting(setting)));
        await configuration.slashCommands.provideSlashCommand(new HermesCommand(this, this.state, this.gate));
        // Jobs get the call's logger from the engine where it binds one; this app's own logger otherwise (engines 1.58/1.59).
        const appLogger = () => this.getLogger();
        // A process that starts looks again at the minute before it: a message event that died with its predecessor.
        const missed = (a: Parameters<typeof takeMissedMessages>[2], window: { since: number; until: number }) =>
            takeMissedMessages(this.state, this.messages, a, window);
        await configuration.scheduler.registerProcessors([...turnProcessors(this.gate, appLogger, missed), settingsReportProcessor(this.state, appLogger)]);
        await registerButtons(configuration);
        // Callers authenticate with their own JWT (endpoint_secret), not a Rocket.Chat login.
        await configuration.api.provideApi({
            visibility: ApiVisibility.PUBLIC,
            security: ApiSecurity.UNSECURE,
            endpoints: [
                new PingEndpoint(this, this.gate, this.getVersion()),
                new HistoryEndpoint(this, this.gate),
                new McpEndpoint(this, this.state, this.gate, this.getVersion()),
            ],
        });
    }

    /** Parses the settings, reports them, and probes what the configured Hermes offers. */
    private async reloadSettings(environment: IEnvironmentRead): Promise<void> {
        await reportSettings(this.state, environment, this.getLogger());
    }
}
