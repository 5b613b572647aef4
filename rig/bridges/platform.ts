import { generateKeyPairSync } from 'crypto';
import { IHttpResponse, RequestMethod } from '@rocket.chat/apps-engine/definition/accessors';
import { ISetting } from '@rocket.chat/apps-engine/definition/settings';
import { ISlashCommand } from '@rocket.chat/apps-engine/definition/slashcommands';
import {
    ApiBridge,
    AppActivationBridge,
    AppDetailChangesBridge,
    CommandBridge,
    EnvironmentalVariableBridge,
    HttpBridge,
    IHttpBridgeRequestInfo,
    IInternalBridge,
    IInternalFederationBridge,
    ServerSettingBridge,
} from '@rocket.chat/apps-engine/server/bridges';
import { AppApi } from '@rocket.chat/apps-engine/server/managers/AppApi';
import type { RigServer } from '../server';

/** Endpoints: registered here, served over real HTTP by the rig's API server. */
export class RigApiBridge extends ApiBridge {
    public readonly apis = new Map<string, AppApi>();

    protected async registerApi(api: AppApi, appId: string): Promise<void> {
        this.apis.set(`${appId}/${api.computedPath ?? api.endpoint.path}`, api);
    }

    protected async unregisterApis(appId: string): Promise<void> {
        for (const key of [...this.apis.keys()]) {
            if (key.startsWith(`${appId}/`)) {
                this.apis.delete(key);
            }
        }
    }
}

/** The HTTP bridge on real fetch, following redirects like the server's (which is why the app avoids it for Hermes). */
export class RigHttpBridge extends HttpBridge {
    constructor(private readonly rig: RigServer) {
        super();
    }

    protected async call(info: IHttpBridgeRequestInfo): Promise<IHttpResponse> {
        this.rig.calls.record('http', `bridge.${info.method}`);
        const { request } = info;
        const url = new URL(info.url);
        for (const [k, v] of Object.entries(request.params ?? {})) {
            url.searchParams.append(k, v);
        }
        let body = request.content;
        if (!body && request.data !== undefined) {
            body = JSON.stringify(request.data);
        }
        const response = await fetch(url, {
            method: info.method.toUpperCase(),
            headers: request.headers,
            body: ['get', 'head'].includes(info.method) ? undefined : body,
            signal: AbortSignal.timeout(request.timeout ?? 180_000),
        });
        const content = await response.text();
        let data: unknown = null;
        if ((response.headers.get('content-type') ?? '').startsWith('application/json')) {
            try {
                data = JSON.parse(content);
            } catch {
                data = null;
            }
        }
        return { url: info.url, method: info.method as RequestMethod, statusCode: response.status, headers: headersOf(response), content, data };
    }
}

function headersOf(response: Response): Record<string, string> {
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
        out[name] = value;
    });
    return out;
}

/** Slash commands the app registered, executed by the rig's `runCommand`. */
export class RigCommandBridge extends CommandBridge {
    public readonly commands = new Map<string, ISlashCommand>();

    protected async doesCommandExist(command: string): Promise<boolean> {
        return this.commands.has(command);
    }

    protected async enableCommand(): Promise<void> {}

    protected async disableCommand(): Promise<void> {}

    protected async modifyCommand(command: ISlashCommand): Promise<void> {
        this.commands.set(command.command, command);
    }

    protected async registerCommand(command: ISlashCommand): Promise<void> {
        this.commands.set(command.command, command);
    }

    protected async unregisterCommand(command: string): Promise<void> {
        this.commands.delete(command);
    }
}

export class RigServerSettingBridge extends ServerSettingBridge {
    constructor(private readonly rig: RigServer) {
        super();
    }

    protected async getAll(): Promise<ISetting[]> {
        return [...this.rig.store.serverSettings.keys()].map((id) => this.setting(id));
    }

    protected async getOneById(id: string): Promise<ISetting> {
        this.rig.calls.record('read', 'serverSetting.getOneById');
        return this.setting(id);
    }

    protected async hideGroup(): Promise<void> {}

    protected async hideSetting(): Promise<void> {}

    protected async isReadableById(id: string): Promise<boolean> {
        return this.rig.store.serverSettings.has(id);
    }

    protected async updateOne(setting: ISetting): Promise<void> {
        this.rig.store.serverSettings.set(setting.id, setting.value);
    }

    protected async incrementValue(id: string, value: number): Promise<void> {
        this.rig.store.serverSettings.set(id, Number(this.rig.store.serverSettings.get(id) ?? 0) + value);
    }

    private setting(id: string): ISetting {
        const value = this.rig.store.serverSettings.get(id);
        return { id, type: typeof value === 'number' ? 'int' : 'string', packageValue: value, value, required: false, public: true, i18nLabel: id } as ISetting;
    }
}

export class RigEnvironmentalVariableBridge extends EnvironmentalVariableBridge {
    protected async getValueByName(): Promise<string | undefined> {
        return undefined;
    }

    protected async isReadable(): Promise<boolean> {
        return false;
    }

    protected async isSet(): Promise<boolean> {
        return false;
    }
}

export class RigActivationBridge extends AppActivationBridge {
    public readonly statuses: string[] = [];

    protected async appAdded(): Promise<void> {}

    protected async appUpdated(): Promise<void> {}

    protected async appRemoved(): Promise<void> {}

    protected async appStatusChanged(_app: unknown, status: string): Promise<void> {
        this.statuses.push(status);
    }

    protected async actionsChanged(): Promise<void> {}
}

/**
 * A setting changed on one instance reaches the others: the server's bridge has its notifier
 * broadcast `apps.settingUpdated` (apps/meteor/ee/server/apps/communication/websockets.ts
 * appSettingsChange), and every other instance updates its app's setting unless the value is
 * already the same (AppsEngineService's `apps.settingUpdated` handler; see RigServer).
 */
export class RigDetailChangesBridge extends AppDetailChangesBridge {
    constructor(private readonly rig: RigServer) {
        super();
    }

    protected onAppSettingsChange(appId: string, setting: ISetting): void {
        this.rig.events.emit('apps.settingUpdated', this.rig, appId, setting);
    }
}

export class RigInternalBridge implements IInternalBridge {
    constructor(private readonly rig: RigServer) {}

    public async doGetUsernamesOfRoomById(roomId: string): Promise<string[]> {
        return this.doGetUsernamesOfRoomByIdSync(roomId);
    }

    public doGetUsernamesOfRoomByIdSync(roomId: string): string[] {
        const room = this.rig.store.rooms.get(roomId);
        return [...(room?.members ?? [])].map((id) => this.rig.store.users.get(id)?.username ?? '').filter(Boolean);
    }

    public async doGetWorkspacePublicKey(): Promise<ISetting> {
        return { id: 'Cloud_Workspace_PublicKey', value: '' } as ISetting;
    }
}

/** The engine signs installed apps with RS512: a real key pair, made once per rig. */
export class RigFederationBridge implements IInternalFederationBridge {
    private readonly keys = generateKeyPairSync('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });

    public async getPrivateKey(): Promise<string | null> {
        return this.keys.privateKey;
    }

    public async getPublicKey(): Promise<string | null> {
        return this.keys.publicKey;
    }
}
