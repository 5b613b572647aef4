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
import { App } from '@rocket.chat/apps-engine/definition/App';
import { IMessage, IPostMessageSent } from '@rocket.chat/apps-engine/definition/messages';
import { IAppInfo } from '@rocket.chat/apps-engine/definition/metadata';
import { ISetting, SettingType } from '@rocket.chat/apps-engine/definition/settings';

/**
 * The benchmark's floor: the least an app can do to answer a message through Hermes — take the
 * event, send one chat completion with the runtime's fetch (as the Hermes app does) and post
 * the answer (one message write). Only in rooms named floor*, never to an app's message.
 */
export class FloorApp extends App implements IPostMessageSent {
    private url = '';
    private key = '';

    constructor(info: IAppInfo, logger: ILogger, accessors: IAppAccessors) {
        super(info, logger, accessors);
    }

    public async onEnable(environment: IEnvironmentRead, _c: IConfigurationModify): Promise<boolean> {
        this.url = await environment.getSettings().getValueById('url');
        this.key = await environment.getSettings().getValueById('key');
        return true;
    }

    public async onSettingUpdated(setting: ISetting, _c: IConfigurationModify, _r: IRead, _h: IHttp): Promise<void> {
        if (setting.id === 'url') {
            this.url = setting.value;
        } else if (setting.id === 'key') {
            this.key = setting.value;
        }
    }

    public async executePostMessageSent(message: IMessage, _read: IRead, _http: IHttp, _p: IPersistence, modify: IModify): Promise<void> {
        if (!message.room.slugifiedName?.startsWith('floor') || message.sender.type === 'app' || !this.url) {
            return;
        }
        const response = await fetch(`${this.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.key}` },
            body: JSON.stringify({ model: 'hermes-agent', messages: [{ role: 'user', content: message.text ?? '' }] }),
        });
        const body = (await response.json()) as { choices?: Array<{ message?: { content?: string } }> };
        const answer = body.choices?.[0]?.message?.content || `(Hermes answered ${response.status})`;
        await modify.getCreator().finish(modify.getCreator().startMessage().setRoom(message.room).setText(answer));
    }

    protected async extendConfiguration(configuration: IConfigurationExtend): Promise<void> {
        await configuration.settings.provideSetting({
            id: 'url',
            type: SettingType.STRING,
            packageValue: '',
            required: false,
            public: false,
            i18nLabel: 'url',
        });
        await configuration.settings.provideSetting({
            id: 'key',
            type: SettingType.PASSWORD,
            packageValue: '',
            required: false,
            public: false,
            i18nLabel: 'key',
        });
    }
}
