import { generateKeyPairSync } from 'crypto';
import { IHttpResponse, RequestMethod } from '@rocket.chat/apps-engine/definition/accessors';
import { IOnetimeSchedule, IProcessor, IRecurringSchedule } from '@rocket.chat/apps-engine/definition/scheduler';
import { ISetting } from '@rocket.chat/apps-engine/definition/settings';
import { ISlashCommand } from '@rocket.chat/apps-engine/definition/slashcommands';
import { IUIKitInteraction } from '@rocket.chat/apps-engine/definition/uikit';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
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
    SchedulerBridge,
    ServerSettingBridge,
    UiInteractionBridge,
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

interface RegisteredProcessor {
    id: string;
    processor: (jobContext: Record<string, unknown>) => Promise<void>;
}

/** A scheduler on real timers, like Agenda without the database: jobs run once or on an interval. */
export class RigSchedulerBridge extends SchedulerBridge {
    private readonly processors = new Map<string, RegisteredProcessor>();
    private readonly timers = new Map<string, { timer: NodeJS.Timeout; appId: string }>();
    public readonly runs: Array<{ id: string; at: number; error?: string }> = [];

    constructor(private readonly rig: RigServer) {
        super();
    }

    protected async registerProcessors(processors: IProcessor[]): Promise<void | string[]> {
        for (const p of processors as unknown as RegisteredProcessor[]) {
            this.processors.set(p.id, p);
        }
        return processors.map((p) => p.id);
    }

    protected async scheduleOnce(job: IOnetimeSchedule, appId: string): Promise<void | string> {
        this.rig.calls.record('write', 'scheduler.scheduleOnce');
        const jobId = `${job.id}-${Math.random().toString(36).slice(2)}`;
        const when = typeof job.when === 'string' ? parseWhen(job.when) : job.when.getTime();
        const timer = setTimeout(() => {
            this.timers.delete(jobId);
            void this.run(job.id, { ...(job.data ?? {}), jobId });
        }, Math.max(0, when - Date.now()));
        this.timers.set(jobId, { timer, appId });
        return jobId;
    }

    protected async scheduleRecurring(job: IRecurringSchedule, appId: string): Promise<void | string> {
        this.rig.calls.record('write', 'scheduler.scheduleRecurring');
        const jobId = `${job.id}-recurring`;
        const ms = typeof job.interval === 'number' ? job.interval * 1000 : parseWhen(`in ${job.interval}`) - Date.now();
        if (!job.skipImmediate) {
            void this.run(job.id, { ...(job.data ?? {}), jobId });
        }
        const timer = setInterval(() => void this.run(job.id, { ...(job.data ?? {}), jobId }), ms);
        this.timers.get(jobId) && clearInterval(this.timers.get(jobId)!.timer);
        this.timers.set(jobId, { timer, appId });
        return jobId;
    }

    protected async cancelJob(jobId: string): Promise<void> {
        for (const [id, entry] of this.timers) {
            if (id === jobId || id.startsWith(`${jobId}-`)) {
                clearTimeout(entry.timer);
                clearInterval(entry.timer);
                this.timers.delete(id);
            }
        }
    }

    protected async cancelAllJobs(appId: string): Promise<void> {
        for (const [id, entry] of this.timers) {
            if (entry.appId === appId) {
                clearTimeout(entry.timer);
                clearInterval(entry.timer);
                this.timers.delete(id);
            }
        }
    }

    /** Runs a registered processor now, as a second scheduler firing would. */
    public fireNow(processorId: string, data: Record<string, unknown>): Promise<void> {
        return this.run(processorId, { ...data, jobId: `manual-${Math.random().toString(36).slice(2)}` });
    }

    /** One-time jobs waiting for their time (recurring ones are not counted). */
    public pendingOnce(): number {
        return [...this.timers.keys()].filter((id) => !id.endsWith('-recurring')).length;
    }

    /** Resolves when a scheduled one-time job has run (or right away when none is waiting). */
    public nextRun(): Promise<void> {
        return new Promise((resolve) => {
            if (this.pendingOnce() === 0) {
                return resolve();
            }
            this.waiters.push(resolve);
        });
    }

    private readonly waiters: Array<() => void> = [];

    public stopAll(): void {
        for (const entry of this.timers.values()) {
            clearTimeout(entry.timer);
            clearInterval(entry.timer);
        }
        this.timers.clear();
    }

    private async run(processorId: string, context: Record<string, unknown>): Promise<void> {
        this.waiters.splice(0).forEach((w) => w());
        const processor = [...this.processors.values()].find((p) => p.id === processorId || p.id.endsWith(`_${processorId}`) || p.id === `${processorId}`);
        const record: { id: string; at: number; error?: string } = { id: processorId, at: Date.now() };
        this.runs.push(record);
        try {
            if (!processor) {
                throw new Error(`no processor ${processorId}`);
            }
            await processor.processor(context);
        } catch (error) {
            record.error = error instanceof Error ? error.message : String(error);
        }
    }
}

/** Agenda's human intervals, the few forms apps use: "in 5 seconds", "2 minutes". */
function parseWhen(when: string): number {
    const m = /(\d+(?:\.\d+)?)\s*(ms|millisecond|second|minute|hour)s?/i.exec(when);
    if (!m) {
        const date = Date.parse(when);
        if (Number.isNaN(date)) {
            throw new Error(`rig scheduler cannot parse "${when}"`);
        }
        return date;
    }
    const n = Number(m[1]);
    const unit = m[2].toLowerCase();
    const ms = unit.startsWith('ms') || unit.startsWith('milli') ? n : unit.startsWith('second') ? n * 1000 : unit.startsWith('minute') ? n * 60_000 : n * 3_600_000;
    return Date.now() + ms;
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

export class RigDetailChangesBridge extends AppDetailChangesBridge {
    protected onAppSettingsChange(): void {}
}

export class RigUiInteractionBridge extends UiInteractionBridge {
    public readonly interactions: Array<{ userId: string; interaction: IUIKitInteraction }> = [];

    protected async notifyUser(user: IUser, interaction: IUIKitInteraction): Promise<void> {
        this.interactions.push({ userId: user.id, interaction });
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
