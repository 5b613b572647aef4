import { AppBridges } from '@rocket.chat/apps-engine/server/bridges';
import type { RigServer } from './server';
import { RigMessageBridge } from './bridges/messages';
import { RigPersistenceBridge } from './bridges/persistence';
import {
    RigActivationBridge,
    RigApiBridge,
    RigCommandBridge,
    RigDetailChangesBridge,
    RigEnvironmentalVariableBridge,
    RigFederationBridge,
    RigHttpBridge,
    RigInternalBridge,
    RigServerSettingBridge,
} from './bridges/platform';
import { RigRoomBridge, RigThreadBridge } from './bridges/rooms';
import { RigSchedulerBridge } from './bridges/scheduler';
import { RigUiInteractionBridge } from './bridges/ui';
import { unsupportedBridge } from './bridges/unsupported';
import { RigUploadBridge } from './bridges/uploads';
import { RigUserBridge } from './bridges/users';

const APP_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The one place the rig's store latency lives. Each `do*` entry point of a bridge (what the
 * engine calls for an app, from the app's Deno process or from its accessors) runs on behalf of
 * the app whose id it was given, so CallLog can count per app, and, when `delayed`, waits
 * `rig.storeLatencyMs` first, as each call waits for MongoDB on a real server (the message,
 * room, user, persistence, scheduler, settings and upload bridges all end in a query). The
 * HTTP bridge has no store behind it: attributed, never delayed. At 0 ms the call runs at once,
 * exactly as before (no extra tick).
 */
function throughStore(bridge: object, rig: RigServer, delayed: boolean): void {
    const target = bridge as Record<string, unknown>;
    const names = new Set<string>();
    for (
        let proto = Object.getPrototypeOf(bridge) as Record<string, unknown> | null;
        proto && proto !== Object.prototype;
        proto = Object.getPrototypeOf(proto)
    ) {
        for (const name of Object.getOwnPropertyNames(proto)) {
            // The engine's few synchronous entry points (…Sync) must stay synchronous.
            if (/^do[A-Z]/.test(name) && !name.endsWith('Sync') && typeof proto[name] === 'function') {
                names.add(name);
            }
        }
    }
    for (const name of names) {
        const original = target[name] as (...args: unknown[]) => unknown;
        target[name] = (...args: unknown[]) => {
            const appId = [...args].reverse().find((a): a is string => typeof a === 'string' && APP_ID.test(a));
            const run = () => rig.calls.onBehalfOf(appId, () => original.apply(bridge, args));
            const ms = delayed ? rig.storeLatencyMs + (rig.extraLatency?.(name, args) ?? 0) : 0;
            return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)).then(run) : run();
        };
    }
}

/** Every bridge the engine asks for: in-memory Rocket.Chat where the app depends on it, a loud failure elsewhere. */
export class RigAppBridges extends AppBridges {
    public readonly messages: RigMessageBridge;
    public readonly rooms: RigRoomBridge;
    public readonly threads: RigThreadBridge;
    public readonly users: RigUserBridge;
    public readonly persistence: RigPersistenceBridge;
    public readonly api = new RigApiBridge();
    public readonly http: RigHttpBridge;
    public readonly commands = new RigCommandBridge();
    public readonly scheduler: RigSchedulerBridge;
    public readonly serverSettings: RigServerSettingBridge;
    public readonly activation = new RigActivationBridge();
    public readonly detailChanges: RigDetailChangesBridge;
    public readonly env = new RigEnvironmentalVariableBridge();
    public readonly ui: RigUiInteractionBridge;
    public readonly uploads: RigUploadBridge;
    public readonly internal: RigInternalBridge;
    public readonly federation = new RigFederationBridge();

    constructor(rig: RigServer) {
        super();
        this.messages = new RigMessageBridge(rig);
        this.rooms = new RigRoomBridge(rig);
        this.threads = new RigThreadBridge(rig);
        this.users = new RigUserBridge(rig);
        this.persistence = new RigPersistenceBridge(rig);
        this.http = new RigHttpBridge(rig);
        this.scheduler = new RigSchedulerBridge(rig);
        this.serverSettings = new RigServerSettingBridge(rig);
        this.internal = new RigInternalBridge(rig);
        this.ui = new RigUiInteractionBridge(rig);
        this.uploads = new RigUploadBridge(rig);
        this.detailChanges = new RigDetailChangesBridge(rig);
        for (const store of [
            this.messages,
            this.rooms,
            this.threads,
            this.users,
            this.persistence,
            this.scheduler,
            this.serverSettings,
            this.internal,
            this.ui,
            this.uploads,
        ]) {
            throughStore(store, rig, true);
        }
        throughStore(this.http, rig, false);
    }

    getCommandBridge = () => this.commands;
    getApiBridge = () => this.api;
    getAppDetailChangesBridge = () => this.detailChanges;
    getEnvironmentalVariableBridge = () => this.env;
    getHttpBridge = () => this.http;
    getMessageBridge = () => this.messages;
    getPersistenceBridge = () => this.persistence;
    getAppActivationBridge = () => this.activation;
    getRoomBridge = () => this.rooms;
    getInternalBridge = () => this.internal;
    getInternalFederationBridge = () => this.federation;
    getServerSettingBridge = () => this.serverSettings;
    getUserBridge = () => this.users;
    getUiInteractionBridge = () => this.ui;
    getSchedulerBridge = () => this.scheduler;
    getThreadBridge = () => this.threads;
    getListenerBridge = () => unsupportedBridge<ReturnType<AppBridges['getListenerBridge']>>('listener');
    getContactBridge = () => unsupportedBridge<ReturnType<AppBridges['getContactBridge']>>('contact');
    getLivechatBridge = () => unsupportedBridge<ReturnType<AppBridges['getLivechatBridge']>>('livechat');
    getUploadBridge = () => this.uploads;
    getEmailBridge = () => unsupportedBridge<ReturnType<AppBridges['getEmailBridge']>>('email');
    getCloudWorkspaceBridge = () => unsupportedBridge<ReturnType<AppBridges['getCloudWorkspaceBridge']>>('cloud workspace');
    getVideoConferenceBridge = () => unsupportedBridge<ReturnType<AppBridges['getVideoConferenceBridge']>>('video conference');
    getOAuthAppsBridge = () => unsupportedBridge<ReturnType<AppBridges['getOAuthAppsBridge']>>('OAuth apps');
    getModerationBridge = () => unsupportedBridge<ReturnType<AppBridges['getModerationBridge']>>('moderation');
    getRoleBridge = () => unsupportedBridge<ReturnType<AppBridges['getRoleBridge']>>('role');
    getOutboundMessageBridge = () => unsupportedBridge<ReturnType<AppBridges['getOutboundMessageBridge']>>('outbound message');
    getExperimentalBridge = () => unsupportedBridge<ReturnType<AppBridges['getExperimentalBridge']>>('experimental');
}
