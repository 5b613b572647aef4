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
 * The benchmark's floor: the least an app can do per message — take the event and send one
 * HTTP request with the runtime's fetch (as the Hermes app does). Only in rooms named floor*.
 */
export class FloorApp extends App implements IPostMessageSent {
    private url = '';

    constructor(info: IAppInfo, logger: ILogger, accessors: IAppAccessors) {
        super(info, logger, accessors);
    }

    public async onEnable(environment: IEnvironmentRead, _c: IConfigurationModify): Promise<boolean> {
        this.url = await environment.getSettings().getValueById('url');
        return true;
    }

    public async onSettingUpdated(setting: ISetting, _c: IConfigurationModify, _r: IRead, _h: IHttp): Promise<void> {
        this.url = setting.value;
    }

    public async executePostMessageSent(message: IMessage, _read: IRead, _http: IHttp, _p: IPersistence, _m: IModify): Promise<void> {
        if (!message.room.slugifiedName?.startsWith('floor') || !this.url) {
            return;
        }
        await fetch(`${this.url}/floor`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ id: message.id }) });
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
    }
}
