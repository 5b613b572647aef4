import { EventEmitter } from 'events';
import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { RequestMethod } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage, Reaction } from '@rocket.chat/apps-engine/definition/messages';
import { AppInterface } from '@rocket.chat/apps-engine/definition/metadata';
import { ISetting } from '@rocket.chat/apps-engine/definition/settings';
import { ITypingDescriptor } from '@rocket.chat/apps-engine/server/bridges/MessageBridge';
import { AppManager } from '@rocket.chat/apps-engine/server/AppManager';
import { ILoggerStorageEntry } from '@rocket.chat/apps-engine/server/logging';
import { RigAppBridges } from './appBridges';
import { CallLog } from './callLog';
import { Converters } from './converters';
import { MemoryLogStorage, MemoryMetadataStorage, MemorySourceStorage } from './storages';
import { RocketChatStore, StoredMessage } from './store';

export interface Ephemeral {
    userId: string;
    roomId: string;
    text: string;
    at: number;
}

/**
 * An in-memory Rocket.Chat server around the real Apps-Engine: the store, the bridges the
 * engine calls, the events the server fires, and the HTTP listener that serves app endpoints.
 */
export class RigServer {
    public readonly store = new RocketChatStore();
    public readonly convert = new Converters(this.store);
    public readonly calls = new CallLog();
    public readonly events = new EventEmitter();
    public readonly typing: Array<ITypingDescriptor & { at: number }> = [];
    public readonly reactions: Array<{ messageId: string; userId: string; reaction: Reaction; added: boolean }> = [];
    public readonly ephemerals: Ephemeral[] = [];
    public readonly logStorage = new MemoryLogStorage();
    public readonly bridges = new RigAppBridges(this);
    public readonly manager: AppManager;
    /** Set by a test to make room reads fail, as a server under load or a permission change would. */
    public failRoomReads = false;
    /** Set by a test to make the server refuse some messages the app posts (returns true to refuse). */
    public refuseMessage?: (text: string) => boolean;
    /**
     * Calls into the app (events, commands, endpoints, jobs) still running. The server fires
     * IPostMessageSent without waiting, so this is how a test knows the app has finished.
     */
    public readonly inFlight = new Set<Promise<unknown>>();
    /** How long each call into the app took, by engine method (e.g. `app:executePostMessageSent`). */
    public readonly callDurations: Array<{ method: string; ms: number }> = [];
    private apiServer?: Server;
    public apiUrl = '';

    constructor() {
        this.events.setMaxListeners(1000);
        this.manager = new AppManager({
            metadataStorage: new MemoryMetadataStorage(),
            logStorage: this.logStorage,
            bridges: this.bridges,
            sourceStorage: new MemorySourceStorage(),
            tempFilePath: tmpdir(),
        });
    }

    public assertMessageSize(text: string): void {
        const max = Number(this.store.serverSettings.get('Message_MaxAllowedSize') ?? 5000);
        if (text.length > max) {
            throw new Error('error-message-size-exceeded');
        }
    }

    /** What the server does after saving a message: tell the apps (the sender's app included). */
    public emitPosted(message: StoredMessage, _fromAppId?: string): void {
        this.events.emit('message', message);
        if (message.t) {
            return;
        }
        this.fire(AppInterface.IPostMessageSent, this.convert.message(message));
    }

    public emitUpdated(message: StoredMessage): void {
        this.events.emit('update', message);
    }

    public deleteMessage(id: string): void {
        const message = this.store.messages.get(id);
        if (!message) {
            return;
        }
        this.store.messages.delete(id);
        const list = this.store.roomMessages.get(message.rid);
        list?.splice(list.indexOf(message), 1);
        this.events.emit('delete', message);
    }

    public recordEphemeral(userId: string, message: IMessage): void {
        const entry = { userId, roomId: message.room?.id ?? '', text: message.text ?? '', at: Date.now() };
        this.ephemerals.push(entry);
        this.events.emit('ephemeral', entry);
    }

    /** Fires a listener the way the server does; for IPostMessageSent the engine itself does not wait for the app. */
    public fire(event: AppInterface, payload: unknown): Promise<unknown> {
        return this.track(
            this.manager
                .getListenerManager()
                .executeListener(event as never, payload as never)
                .catch((error: unknown) => this.events.emit('listener-error', error)),
        );
    }

    /**
     * Counts every request the engine sends to the app's Deno process until it is answered,
     * and every listener dispatch (the engine runs IPostMessageSent detached from the caller,
     * with gaps between its calls into the app, so the dispatch itself is tracked too).
     */
    public instrumentApp(appId: string): void {
        const listeners = this.manager.getListenerManager() as unknown as Record<string, unknown>;
        const proto = Object.getPrototypeOf(listeners) as Record<string, unknown>;
        for (const name of Object.getOwnPropertyNames(proto)) {
            if (/^execute[A-Z]/.test(name) && name !== 'executeListener' && typeof proto[name] === 'function') {
                const original = (proto[name] as (...args: unknown[]) => unknown).bind(listeners);
                listeners[name] = (...args: unknown[]) => {
                    const result = original(...args);
                    return result instanceof Promise ? this.track(result) : result;
                };
            }
        }
        const runtime = this.manager.getOneById(appId).getRuntimeController() as unknown as { sendRequest: (...args: unknown[]) => Promise<unknown> };
        const send = runtime.sendRequest.bind(runtime);
        runtime.sendRequest = (...args: unknown[]) => {
            const started = Date.now();
            const method = String((args[0] as { method?: string })?.method ?? 'unknown');
            const call = this.track(send(...args));
            const record = () => this.callDurations.push({ method, ms: Date.now() - started });
            call.then(record, record);
            return call;
        };
    }

    /**
     * Kills the app's Deno process the way a crash or the OOM killer would. The engine
     * notices the exit and starts a new process; resolves when the app answers again.
     */
    public async killAppProcess(appId: string): Promise<void> {
        const runtime = this.manager.getOneById(appId).getRuntimeController() as unknown as { deno?: { pid?: number; kill: (signal: string) => void }; getStatus: () => Promise<string> };
        const before = runtime.deno?.pid;
        // Calls the dead process was serving only end at the engine's 30 s timeout: stop waiting for them.
        this.inFlight.clear();
        runtime.deno?.kill('SIGKILL');
        const deadline = Date.now() + 20_000;
        while (Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 50));
            const now = runtime.deno?.pid;
            if (now && now !== before) {
                try {
                    if (String(await runtime.getStatus()).includes('enabled')) {
                        // Anything sent while the process was down waits for the engine's timeout too.
                        this.inFlight.clear();
                        return;
                    }
                } catch {
                    // not ready yet
                }
            }
        }
        throw new Error('the app process did not come back within 20 s');
    }

    /**
     * Resolves when no call into the app is running and no one-time job is waiting to run
     * (a turn's ticks reschedule themselves until the turn is done).
     */
    public async idle(): Promise<void> {
        for (;;) {
            if (this.inFlight.size > 0) {
                await Promise.allSettled([...this.inFlight]);
            } else if (this.bridges.scheduler.pendingOnce() > 0) {
                await this.bridges.scheduler.nextRun();
            } else {
                return;
            }
        }
    }

    private track<T>(promise: Promise<T>): Promise<T> {
        this.inFlight.add(promise);
        const done = () => this.inFlight.delete(promise);
        promise.then(done, done);
        return promise;
    }

    public async updateAppSetting(appId: string, id: string, value: unknown): Promise<void> {
        const item = await this.manager.getStorage().retrieveOne(appId);
        const current = item?.settings[id];
        if (!current) {
            throw new Error(`app ${appId} has no setting ${id}`);
        }
        const next: ISetting = { ...current, value, updatedAt: new Date() };
        await this.manager.getSettingsManager().updateAppSetting(appId, next);
    }

    public appLogs(appId: string): ILoggerStorageEntry[] {
        return this.logStorage.entries.filter((e) => e.appId === appId);
    }

    /** Serves `/api/apps/public/<appId>/<path>` on 127.0.0.1 like the server's router. */
    public async listen(): Promise<string> {
        this.apiServer = createServer((req, res) => void this.serveApi(req, res));
        await new Promise<void>((resolve) => this.apiServer!.listen(0, '127.0.0.1', resolve));
        this.apiUrl = `http://127.0.0.1:${(this.apiServer.address() as AddressInfo).port}`;
        return this.apiUrl;
    }

    public async close(): Promise<void> {
        this.bridges.scheduler.stopAll();
        await this.manager.unload(true).catch(() => undefined);
        await new Promise<void>((resolve) => (this.apiServer ? this.apiServer.close(() => resolve()) : resolve()));
    }

    private async serveApi(req: IncomingMessage, res: ServerResponse): Promise<void> {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const match = /^\/api\/apps\/public\/([^/]+)\/(.+)$/.exec(url.pathname);
        const chunks: Buffer[] = [];
        for await (const chunk of req) {
            chunks.push(chunk as Buffer);
        }
        if (!match) {
            res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ success: false, error: 'Not found' }));
            return;
        }
        const [, appId, path] = match;
        const raw = Buffer.concat(chunks).toString('utf8');
        let content: unknown = raw;
        if ((req.headers['content-type'] ?? '').startsWith('application/json') && raw.length > 0) {
            try {
                content = JSON.parse(raw);
            } catch {
                res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ success: false, error: 'Invalid JSON' }));
                return;
            }
        }
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]));
        try {
            const response = await this.manager.getApiManager().executeApi(appId, path, {
                method: (req.method ?? 'GET').toLowerCase() as RequestMethod,
                headers,
                query: Object.fromEntries(url.searchParams),
                params: {},
                content,
            });
            const body = response.content === undefined ? '' : typeof response.content === 'string' ? response.content : JSON.stringify(response.content);
            res.writeHead(response.status, { 'Content-Type': typeof response.content === 'string' ? 'text/plain' : 'application/json', ...(response.headers ?? {}) });
            res.end(body);
        } catch (error) {
            res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ success: false, error: error instanceof Error ? error.message : String(error) }));
        }
    }
}
