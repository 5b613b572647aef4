import { EventEmitter } from 'events';
import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import { AddressInfo } from 'net';
import { tmpdir } from 'os';
import { RequestMethod } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage, Reaction } from '@rocket.chat/apps-engine/definition/messages';
import { setReaction } from './reactions';
import { AppInterface } from '@rocket.chat/apps-engine/definition/metadata';
import { ISetting } from '@rocket.chat/apps-engine/definition/settings';
import { ITypingDescriptor } from '@rocket.chat/apps-engine/server/bridges/MessageBridge';
import { AppManager } from '@rocket.chat/apps-engine/server/AppManager';
import { DenoRuntimeSubprocessController } from '@rocket.chat/apps-engine/server/runtime/deno/AppsEngineDenoRuntime';
import { ILoggerStorageEntry } from '@rocket.chat/apps-engine/server/logging';
import { RigAppBridges } from './appBridges';
import { CallLog } from './callLog';
import { attachmentFromApp, Converters } from './converters';
import { readUploadBuffer } from './fileUpload';
import { assertEncryptionAllows, canSendMessage, meteorError, validateAttachments, validateCustomMessageFields } from './rules';
import { MemoryLogStorage, MemoryMetadataStorage, MemorySourceStorage } from './storages';
import { RocketChatStore, StoredMessage, StoredUpload, StoredUser } from './store';
import { isServerInteraction, overJson, TRIGGER_TIMEOUT_MS, UiClient, UiSurfaceRecord, UiView } from './uiClient';

export interface RigServerOptions {
    /**
     * Apply the real server's rules (default true): custom-field validation, the editor and
     * thread rules, canSendMessage, edit history and deletion stubs, exact persistence
     * association matching. `false` gives the old kind rig, so a test can show the difference.
     */
    strict?: boolean;
    /**
     * Milliseconds every store bridge call waits before it runs (default 0), as each waits for
     * MongoDB on a real server (about 1 ms on a LAN). See RigAppBridges; can be changed later
     * through `storeLatencyMs`.
     */
    storeLatencyMs?: number;
    /**
     * Another instance of the same deployment (a second Rocket.Chat instance on the same
     * MongoDB): this server shares its messages, users and rooms, the apps' persistence, the
     * scheduler's jobs (each job runs on exactly one instance; per processor name one at a time
     * in each instance, as Agenda with `defaultConcurrency: 1` and its Mongo lock) and the event
     * stream tests wait on. Its own: the engine (AppManager and the app's Deno process), the
     * app's settings copy, its users' web clients. See rig/cluster.ts.
     */
    peer?: RigServer;
}

/** express-rate-limit's default answer over the limit (status 429). */
const UI_RATE_LIMITED = 'Too many requests, please try again later.';

/**
 * What a web client posts to `/api/apps/ui.interaction/:appId` (core-typings UiKit.UserInteraction),
 * without the triggerId, which the client adds (see RigServer.uiInteraction).
 */
export type UserInteraction =
    | {
          type: 'blockAction';
          actionId: string;
          payload: { blockId?: string; value?: unknown };
          container: { type: 'message' | 'view'; id: string };
          mid?: string;
          rid?: string;
          tmid?: string;
      }
    | { type: 'viewSubmit'; viewId: string; payload: { view: UiView & { state: Record<string, Record<string, unknown>> } } }
    | { type: 'viewClosed'; payload: { viewId: string; view: UiView & { state: Record<string, Record<string, unknown>> }; isCleared?: boolean } }
    | { type: 'actionButton'; actionId: string; payload: { context: string; message?: string }; rid?: string; mid?: string; tmid?: string };

/** The answer to one user interaction, as the client got it. */
export interface UiOutcome {
    /**
     * 200 with the app's IUIKitResponse (or nothing), 500 `{ error }` when the app's handler
     * failed, 429 (the route's rate limiter's text) when the interaction never reached the app.
     */
    status: 200 | 429 | 500;
    response: unknown;
    /** The triggerId the client generated for this interaction (the app's context carries it). */
    triggerId: string;
    /** Every server interaction that reached this user with that triggerId so far (bridge or response). */
    views: UiSurfaceRecord[];
    /** The answer took longer than the client's 5 s: it showed a timeout toast and dropped the answer. */
    timedOut: boolean;
}

export interface Ephemeral {
    userId: string;
    roomId: string;
    text: string;
    at: number;
    /** The notification's thread and UIKit blocks (buttons under a private answer). */
    tmid?: string;
    blocks?: unknown[];
}

/**
 * An in-memory Rocket.Chat server around the real Apps-Engine: the store, the bridges the
 * engine calls, the events the server fires, and the HTTP listener that serves app endpoints.
 */
/**
 * The engine's liveness ping (LivenessManager) keeps writing to an app's Deno process after
 * that process was replaced (an app update, a kill). The child's stdin has no 'error' listener,
 * so the failed write (EPIPE) becomes an unhandled 'error' event that ends the test run. Each
 * spawned child gets a listener that drops it (on a server, the same event reaches Meteor's
 * own handler); nothing else changes in the engine.
 */
const controller = DenoRuntimeSubprocessController.prototype as unknown as {
    spawnProcess: () => unknown;
    deno?: { stdin?: { on: (e: string, f: () => void) => void } };
};
const spawnProcess = controller.spawnProcess;
controller.spawnProcess = function (this: typeof controller) {
    const result = spawnProcess.call(this);
    this.deno?.stdin?.on('error', () => undefined);
    return result;
};

export class RigServer {
    /** The instance this one shares its data with (RigServerOptions.peer), if any. */
    public readonly peer?: RigServer;
    public readonly store: RocketChatStore;
    public readonly convert: Converters;
    public readonly calls: CallLog;
    public readonly events: EventEmitter;
    /** Typing notifications the app sent, oldest first; each is also emitted as a 'typing' event (the playground shows it live). */
    public readonly typing: Array<ITypingDescriptor & { at: number }>;
    /** Every change of reactions the server made, oldest first (the message holds the current state). */
    public readonly reactions: Array<{ messageId: string; userId: string; reaction: Reaction; added: boolean; at: number }> = [];
    public readonly ephemerals: Ephemeral[] = [];
    public readonly logStorage = new MemoryLogStorage();
    public readonly bridges: RigAppBridges;
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
    /** Each user's web client, for UIKit surfaces (triggerIds, open modals and contextual bars). */
    public readonly uiClients = new Map<string, UiClient>();
    private apiServer?: Server;
    public apiUrl = '';
    /** Behave like the real server where it is stricter than a kind fake (see RigServerOptions). */
    public strict: boolean;
    /** The store latency every bridge call waits (RigServerOptions.storeLatencyMs); read at each call. */
    public storeLatencyMs: number;
    /**
     * A test's extra wait for chosen store calls (by the bridge method and its arguments), on top
     * of `storeLatencyMs`: one event's round trips slower than another's, as on a busy server.
     */
    public extraLatency?: (method: string, args: unknown[]) => number;

    constructor(options: RigServerOptions = {}) {
        this.peer = options.peer;
        this.store = options.peer?.store ?? new RocketChatStore();
        this.convert = new Converters(this.store);
        this.calls = options.peer?.calls ?? new CallLog();
        this.events = options.peer?.events ?? new EventEmitter();
        this.typing = emitOnPush((entry) => this.events.emit('typing', entry));
        this.strict = options.strict ?? true;
        this.storeLatencyMs = options.storeLatencyMs ?? 0;
        this.events.setMaxListeners(1000);
        // Another instance's app setting change (RigDetailChangesBridge): applied here too, once.
        this.events.on('apps.settingUpdated', (origin: RigServer, appId: string, setting: ISetting) => {
            if (origin !== this) {
                // A stopped or killed instance's app cannot take it; the server only logs that.
                void this.track(this.settingFromPeer(appId, setting).catch(() => undefined));
            }
        });
        this.bridges = new RigAppBridges(this);
        // The engine keeps one AppManager per process in a static (only for permission lookups by
        // app id, the same for every instance of one app): a second instance's engine may be built.
        (AppManager as unknown as { Instance?: AppManager }).Instance = undefined;
        this.manager = new AppManager({
            metadataStorage: new MemoryMetadataStorage(),
            logStorage: this.logStorage,
            bridges: this.bridges,
            sourceStorage: new MemorySourceStorage(),
            tempFilePath: tmpdir(),
        });
    }

    /** Changes a server setting (e.g. Message_KeepHistory, Message_CustomFields_Enabled) for the rest of the test. */
    public setServerSetting(id: string, value: unknown): void {
        this.store.serverSettings.set(id, value);
    }

    /** executeSendMessage's size check (apps/meteor/app/lib/server/methods/sendMessage.ts): on create only. */
    public assertMessageSize(text: string): void {
        const max = Number(this.store.serverSettings.get('Message_MaxAllowedSize') ?? 0);
        if (text && text.length > max) {
            throw meteorError('error-message-size-exceeded', 'Message size exceeds Message_MaxAllowedSize');
        }
    }

    /**
     * An app's message, the way the server's message bridge sends it: convertAppMessage,
     * then executeSendMessage (apps/meteor/app/lib/server/methods/sendMessage.ts: Threads_enabled,
     * size, sender, tmid → thread root, canSendMessage), then sendMessage's validateMessage
     * (attachments, custom fields), the insert, and the post-send event.
     */
    public sendAppMessage(message: IMessage): StoredMessage {
        const text = message.text ?? '';
        const attachments = Array.isArray(message.attachments) ? message.attachments.map(attachmentFromApp) : undefined;
        if (!this.strict) {
            this.assertMessageSize(text);
            if (this.refuseMessage?.(text)) {
                throw new Error('error-action-not-allowed');
            }
            if (!message.room?.id || !this.store.rooms.has(message.room.id)) {
                throw new Error('error-invalid-room');
            }
            const posted = this.store.postMessage({
                rid: message.room.id,
                senderId: message.sender.id,
                text,
                tmid: message.threadId,
                attachments,
                customFields: message.customFields,
                groupable: message.groupable,
                blocks: message.blocks as unknown[] | undefined,
            });
            void this.emitPosted(posted);
            return posted;
        }
        // convertAppMessage (apps/meteor/app/apps/server/converters/messages.ts)
        if (!message.room?.id || !this.store.rooms.has(message.room.id)) {
            throw new Error('Invalid room provided on the message.');
        }
        const senderId = message.sender.id;
        let tmid = message.threadId;
        if (tmid && !this.store.flag('Threads_enabled')) {
            throw meteorError('error-not-allowed', 'not-allowed');
        }
        this.assertMessageSize(text);
        if (this.refuseMessage?.(text)) {
            throw new Error('error-action-not-allowed');
        }
        const sender = this.store.users.get(senderId);
        if (!sender?.username) {
            throw meteorError('error-invalid-user', 'Invalid user');
        }
        // "do not allow nested threads": a reply to a reply goes to the root, in the root's room.
        let rid = message.room.id;
        if (tmid) {
            const parent = this.store.messages.get(tmid);
            tmid = parent?.tmid || tmid;
            if (parent?.rid) {
                rid = parent.rid;
            }
        }
        assertEncryptionAllows(this.store, canSendMessage(this.store, rid, sender), undefined);
        // sendMessage → validateMessage
        if (attachments?.length) {
            validateAttachments(attachments);
        }
        if (message.customFields) {
            validateCustomMessageFields(
                message.customFields,
                this.store.serverSettings.get('Message_CustomFields_Enabled'),
                this.store.serverSettings.get('Message_CustomFields'),
            );
        }
        const unmapped = (message as { _unmappedProperties_?: Record<string, unknown> })._unmappedProperties_ ?? {};
        const stored = this.store.postMessage({
            rid,
            senderId,
            text,
            tmid,
            // prepareMessageObject keeps tshow only when it is exactly true; apps can only set it through _unmappedProperties_.
            tshow: unmapped.tshow === true ? true : undefined,
            attachments,
            customFields: message.customFields,
            groupable: message.groupable,
            blocks: message.blocks as unknown[] | undefined,
        });
        void this.emitPosted(stored);
        return stored;
    }

    /**
     * An app's edit, the way the server's message bridge does it (editor required, message
     * must exist) and then apps/meteor/app/lib/server/functions/updateMessage.ts: the app's
     * message is merged over the stored one, an edit-history copy is kept first when
     * Message_KeepHistory is on, the message is marked edited by the editor, custom fields are
     * validated (the merged ones, so a stored custom field is checked again), and
     * IPostMessageUpdated fires. There is no size check and no canSendMessage on this path,
     * and nothing refuses an edit that empties the text.
     */
    public updateAppMessage(message: IMessage): StoredMessage {
        if (!this.strict) {
            const stored = message.id ? this.store.messages.get(message.id) : undefined;
            if (!stored) {
                throw new Error('A message must exist to update.');
            }
            stored.text = message.text ?? '';
            stored.blocks = message.blocks as unknown[] | undefined;
            stored.attachments = message.attachments?.map(attachmentFromApp);
            stored.editedAt = this.store.nextDate();
            stored.updatedAt = stored.editedAt;
            stored.editorId = message.editor?.id ?? message.sender?.id;
            this.emitUpdated(stored);
            return stored;
        }
        if (!message.editor) {
            throw new Error('Invalid editor assigned to the message for the update.');
        }
        const stored = message.id ? this.store.messages.get(message.id) : undefined;
        if (!stored) {
            throw new Error('A message must exist to update.');
        }
        if (!message.room?.id || !this.store.rooms.has(message.room.id)) {
            throw new Error('Invalid room provided on the message.');
        }
        const editor = this.store.users.get(message.editor.id);
        if (!editor) {
            throw new Error('Invalid editor assigned to the message for the update.');
        }
        // messageData = { ...originalMessage, ...convertAppMessage(message) }: keys the app left out keep their stored value.
        const has = (key: string) => key in message && (message as unknown as Record<string, unknown>)[key] !== undefined;
        const unmapped = (message as { _unmappedProperties_?: Record<string, unknown> })._unmappedProperties_ ?? {};
        const next: StoredMessage = {
            ...stored,
            rid: message.room.id,
            senderId: message.sender?.id ?? stored.senderId,
            text: message.text ?? '',
            ...(has('threadId') && { tmid: message.threadId }),
            ...(has('customFields') && { customFields: message.customFields }),
            ...(has('groupable') && { groupable: message.groupable }),
            ...(has('blocks') && { blocks: message.blocks as unknown[] }),
            ...(Array.isArray(message.attachments) && { attachments: message.attachments.map(attachmentFromApp) }),
            ...(typeof unmapped.tshow === 'boolean' && { tshow: unmapped.tshow }),
            ...(typeof unmapped._hidden === 'boolean' && { _hidden: unmapped._hidden }),
            ...(typeof unmapped.t === 'string' && { t: unmapped.t }),
        };
        // The history copy is written before the custom fields are checked: a refused edit still leaves one, as on the server.
        if (this.store.flag('Message_KeepHistory')) {
            this.keepHistoryCopy(stored, editor);
        }
        next.editedAt = this.store.nextDate();
        next.editorId = editor.id;
        next.updatedAt = next.editedAt;
        if (!this.store.rooms.has(next.rid)) {
            // updateMessage returns without saving when the room is gone.
            return stored;
        }
        if (next.customFields) {
            validateCustomMessageFields(
                next.customFields,
                this.store.serverSettings.get('Message_CustomFields_Enabled'),
                this.store.serverSettings.get('Message_CustomFields'),
            );
        }
        Object.assign(stored, next);
        this.emitUpdated(stored);
        return stored;
    }

    /**
     * A person edits their message (apps/meteor/app/lib/server/functions/updateMessage.ts): the
     * history copy first (Message_KeepHistory), then text, editedAt and editedBy are set and
     * saved, then IPostMessageUpdated fires (not awaited by the server).
     */
    public editMessage(id: string, editor: StoredUser, text: string): StoredMessage {
        const stored = this.store.messages.get(id);
        if (!stored) {
            throw new Error('A message must exist to update.');
        }
        if (this.store.flag('Message_KeepHistory')) {
            this.keepHistoryCopy(stored, editor);
        }
        stored.text = text;
        stored.editedAt = this.store.nextDate();
        stored.editorId = editor.id;
        stored.updatedAt = stored.editedAt;
        this.emitUpdated(stored);
        return stored;
    }

    /** Messages.cloneAndSaveAsHistoryByRecord: the stored message as it was, under a new id, hidden, pointing at its original. */
    private keepHistoryCopy(original: StoredMessage, by: StoredUser): StoredMessage {
        const { id: _id, updatedAt: _updatedAt, ...rest } = structuredClone(original);
        const copy = this.store.insertMessage({
            ...rest,
            createdAt: original.createdAt,
            _hidden: true,
            parent: original.id,
            editedAt: this.store.nextDate(),
            editorId: by.id,
        });
        copy.updatedAt = copy.editedAt as Date;
        return copy;
    }

    /**
     * What the server does after saving a message: tell the apps, the sender's app included
     * (the engine asks each app's checkPostMessageSent first). System messages go to
     * IPostSystemMessageSent instead (apps/meteor/app/lib/server/functions/sendMessage.ts).
     */
    public emitPosted(message: StoredMessage, _fromAppId?: string): Promise<unknown> {
        this.events.emit('message', message);
        return this.fire(message.t ? AppInterface.IPostSystemMessageSent : AppInterface.IPostMessageSent, this.convert.message(message));
    }

    /**
     * executeSetReaction (apps/meteor/app/reactions/server/setReaction.ts, see rig/reactions.ts),
     * for an app's bridge call and a person's click alike; a change fires IPostMessageReacted
     * without awaiting it, the app's own reactions included.
     */
    public setReaction(userId: string, reaction: string, messageId: string, shouldReact?: boolean): void {
        const change = setReaction(this.store, userId, reaction, messageId, shouldReact);
        if (!change) {
            return;
        }
        this.reactions.push({ messageId, userId, reaction: change.reaction as Reaction, added: change.isReacted, at: Date.now() });
        this.events.emit('reaction', change);
        void this.fire(AppInterface.IPostMessageReacted, {
            message: this.convert.message(change.message),
            user: this.convert.user(change.user),
            reaction: change.reaction,
            isReacted: change.isReacted,
        });
    }

    /** After every saved edit, the app's own included (updateMessage.ts fires IPostMessageUpdated). */
    public emitUpdated(message: StoredMessage): void {
        this.events.emit('update', message);
        void this.fire(AppInterface.IPostMessageUpdated, this.convert.message(message));
    }

    /**
     * apps/meteor/app/lib/server/functions/deleteMessage.ts: a thread root with replies is
     * always kept (history and deleted status forced on); otherwise Message_KeepHistory and
     * Message_ShowDeletedStatus decide:
     * - neither: the document is removed;
     * - KeepHistory only: it stays, hidden (`_hidden: true`);
     * - ShowDeletedStatus only: it stays as a `t: 'rm'` stub with no text, attachments or blocks;
     * - both (or a root with replies): a hidden copy of it as it was, and the stub.
     * A deleted reply lowers its root's reply count. IPostMessageDeleted fires afterwards.
     */
    public deleteMessage(id: string, by?: StoredUser): void {
        const message = this.store.messages.get(id);
        if (!message) {
            return;
        }
        if (!this.strict) {
            this.store.removeMessage(id);
            this.events.emit('delete', message);
            return;
        }
        const before = { ...message };
        const user = by ?? (this.store.users.get(message.senderId) as StoredUser);
        const isThread = (message.tcount ?? 0) > 0;
        const keepHistory = this.store.flag('Message_KeepHistory') || isThread;
        const showDeletedStatus = this.store.flag('Message_ShowDeletedStatus') || isThread;
        const root = message.tmid ? this.store.messages.get(message.tmid) : undefined;
        if (root) {
            root.tcount = (root.tcount ?? 0) - 1;
        }
        if (keepHistory) {
            if (showDeletedStatus) {
                this.keepHistoryCopy(message, user);
            } else {
                message._hidden = true;
            }
        } else if (!showDeletedStatus) {
            this.store.removeMessage(id);
        }
        if (showDeletedStatus) {
            // Messages.setAsDeletedByIdAndUser
            Object.assign(message, { text: '', t: 'rm', attachments: [], editedAt: this.store.nextDate(), editorId: user.id });
            message.updatedAt = message.editedAt as Date;
            delete message.blocks;
            delete message.tshow;
        }
        this.events.emit('delete', message);
        void this.fire(AppInterface.IPostMessageDeleted, { message: this.convert.message(before), user: this.convert.user(user) });
    }

    public uiClient(userId: string): UiClient {
        let client = this.uiClients.get(userId);
        if (!client) {
            // 'ui' (userId) after every change of the surfaces open on this client, for the playground's live view.
            client = new UiClient(
                () => this.strict,
                () => this.events.emit('ui', userId),
            );
            this.uiClients.set(userId, client);
        }
        return client;
    }

    /**
     * A user's web client posts an interaction to `/api/apps/ui.interaction/:appId`: the client
     * generates the triggerId (ActionManager.emitInteraction), the body crosses as JSON, and the
     * server builds the engine's payload as AppUIKitInteractionApi.routeHandler does
     * (apps/meteor/ee/server/apps/communication/uikit.ts) and answers with what
     * IUIKitInteractionHandler returned, or 500 `{ error }`. The client then acts on the answer
     * (a `modal.open`, `errors`, … response) and closes a submitted or closed view.
     */
    public async uiInteraction(user: StoredUser, appId: string, interaction: UserInteraction): Promise<UiOutcome> {
        const client = this.uiClient(user.id);
        const triggerId = client.generateTriggerId(appId);
        if (this.uiRateLimited(user.id)) {
            return { status: 429, response: UI_RATE_LIMITED, triggerId, timedOut: false, views: [] };
        }
        const body = overJson({ ...interaction, triggerId });
        const action = this.uiKitAction(user, appId, body);
        const started = Date.now();
        let status: 200 | 500 = 200;
        let response: unknown;
        try {
            const result = await this.track(this.manager.getListenerManager().executeListener(AppInterface.IUIKitInteractionHandler, action as never));
            response = overJson(result);
        } catch (error) {
            status = 500;
            response = { error: error instanceof Error ? error.message : error };
        }
        const timedOut = this.strict && Date.now() - started > TRIGGER_TIMEOUT_MS;
        if (status === 200 && isServerInteraction(response)) {
            client.receive(response as Record<string, unknown>, 'response');
        }
        const viewId = body.type === 'viewSubmit' ? body.viewId : body.type === 'viewClosed' ? body.payload.viewId : undefined;
        client.settle(body.type, viewId, status === 200 ? response : undefined, timedOut);
        return { status, response, triggerId, timedOut, views: client.records.filter((r) => r.triggerId === triggerId) };
    }

    /** Each client address's window of the UIKit route's limiter: when it opened, how many calls it took. */
    private readonly uiWindows = new Map<string, { from: number; calls: number }>();

    /**
     * The limiter in front of `/api/apps/ui.interaction/` (AppUIKitInteractionApi,
     * apps/meteor/ee/server/apps/communication/uikit.ts: express-rate-limit with `windowMs`
     * API_Enable_Rate_Limiter_Limit_Time_Default and `max` API_Enable_Rate_Limiter_Limit_Calls_Default
     * × 60, skipped when API_Enable_Rate_Limiter is off), keyed by the client's address: here each
     * user's client is one address (behind a proxy that hides them, a whole server shares one). A
     * call over the limit is answered 429 and never reaches the app. Peers keep their own windows,
     * as each instance's limiter keeps its own memory store.
     */
    private uiRateLimited(address: string): boolean {
        const settings = this.store.serverSettings;
        if (settings.get('API_Enable_Rate_Limiter') !== true) {
            return false;
        }
        const windowMs = Number(settings.get('API_Enable_Rate_Limiter_Limit_Time_Default'));
        const max = Number(settings.get('API_Enable_Rate_Limiter_Limit_Calls_Default')) * 60;
        const now = Date.now();
        const open = this.uiWindows.get(address);
        const current = open && now - open.from < windowMs ? open : { from: now, calls: 0 };
        current.calls++;
        this.uiWindows.set(address, current);
        return current.calls > max;
    }

    /** routeHandler's `action` for each interaction type: rooms and messages converted by id, the user from the session. */
    private uiKitAction(user: StoredUser, appId: string, body: UserInteraction & { triggerId: string }): Record<string, unknown> {
        const appUser = this.convert.user(user);
        switch (body.type) {
            case 'blockAction': {
                const stored = body.mid ? this.store.messages.get(body.mid) : undefined;
                return {
                    type: body.type,
                    container: body.container,
                    appId,
                    actionId: body.actionId,
                    message: stored ? this.convert.message(stored) : undefined,
                    triggerId: body.triggerId,
                    payload: body.payload,
                    user: appUser,
                    visitor: undefined,
                    room: body.rid ? this.convert.roomById(body.rid) : undefined,
                };
            }
            case 'viewClosed':
                return { type: body.type, appId, user: appUser, payload: { view: body.payload.view, isCleared: body.payload.isCleared } };
            case 'viewSubmit':
                return { type: body.type, appId, actionId: undefined, triggerId: body.triggerId, payload: body.payload, user: appUser };
            case 'actionButton': {
                const stored = body.mid ? this.store.messages.get(body.mid) : undefined;
                return {
                    type: body.type,
                    appId,
                    actionId: body.actionId,
                    triggerId: body.triggerId,
                    user: appUser,
                    room: body.rid ? this.convert.roomById(body.rid) : undefined,
                    message: stored ? this.convert.message(stored) : undefined,
                    tmid: body.tmid,
                    payload: { context: body.payload.context, ...(body.payload.message ? { message: body.payload.message } : {}) },
                };
            }
        }
    }

    /** FileUpload.getBuffer for an upload document (see fileUpload.ts readUploadBuffer). */
    public fileBuffer(file: Partial<StoredUpload> | undefined): Promise<Buffer> {
        return readUploadBuffer(this, file);
    }

    public recordEphemeral(userId: string, message: IMessage): void {
        const entry = {
            userId,
            roomId: message.room?.id ?? '',
            text: message.text ?? '',
            at: Date.now(),
            tmid: message.threadId,
            blocks: message.blocks as unknown[] | undefined,
        };
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
        const runtime = this.manager.getOneById(appId).getRuntimeController() as unknown as {
            deno?: { pid?: number; kill: (signal: string) => void };
            getStatus: () => Promise<string>;
        };
        const before = runtime.deno?.pid;
        // Calls the dead process was serving only end at the engine's 30 s timeout: stop waiting for them
        // (a test that must see what the engine does then awaits orphansSettled).
        this.orphans.push(...this.inFlight);
        this.inFlight.clear();
        runtime.deno?.kill('SIGKILL');
        // A loaded machine starts Deno slowly, and a status request sent too early waits for the
        // engine's 30 s timeout: each ask is cut short, and the whole wait is a minute.
        const deadline = Date.now() + 60_000;
        while (Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 50));
            const now = runtime.deno?.pid;
            if (now && now !== before) {
                try {
                    const status = await Promise.race([runtime.getStatus(), new Promise<string>((r) => setTimeout(() => r('no answer yet'), 2_000))]);
                    if (String(status).includes('enabled')) {
                        // Anything sent while the process was down waits for the engine's timeout too.
                        this.inFlight.clear();
                        return;
                    }
                } catch {
                    // not ready yet
                }
            }
        }
        throw new Error('the app process did not come back within 60 s');
    }

    /** Calls into the app (listener dispatches included) that were running when its process was killed. */
    private readonly orphans: Array<Promise<unknown>> = [];

    /**
     * Resolves when every call that was running when the app's process was killed has ended: the
     * engine gives up on each at its runtime timeout (30 s) and goes on (a DM's message event then
     * sends executePostMessageSent to the new process: AppListenerManager.executePostMessageSent).
     */
    public async orphansSettled(): Promise<void> {
        await Promise.allSettled(this.orphans.splice(0));
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

    /**
     * AppsEngineService's `apps.settingUpdated` handler: an app this instance runs gets the
     * setting unless its value is already that (the check that keeps the broadcast from looping).
     */
    private async settingFromPeer(appId: string, setting: ISetting): Promise<void> {
        const app = this.manager.getOneById(appId);
        const old = app?.getStorageItem().settings[setting.id]?.value;
        if (!app || JSON.stringify(old) === JSON.stringify(setting.value)) {
            return;
        }
        await this.manager.getSettingsManager().updateAppSetting(appId, setting);
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
        // The server's JSON body parser (body-parser `json()` defaults, in front of every app
        // endpoint): a JSON body over 100 kB is refused with 413 before the app sees it, a body
        // of any other type is not parsed and reaches the app as `{}`, malformed JSON is a 400.
        const raw = Buffer.concat(chunks);
        let content: unknown = {};
        if ((req.headers['content-type'] ?? '').startsWith('application/json') && raw.length > 0) {
            if (raw.length > ENDPOINT_BODY_LIMIT) {
                res.writeHead(413, { 'Content-Type': 'text/plain' }).end('request entity too large');
                return;
            }
            try {
                content = JSON.parse(raw.toString('utf8'));
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
            // The server's bridge hands `content` to Express's res.send (apps/meteor/app/apps/server/bridges/api.ts):
            // undefined and null (what an app's undefined becomes on its way out of the Deno runtime) send no body.
            const body =
                response.content === undefined || response.content === null
                    ? ''
                    : typeof response.content === 'string'
                      ? response.content
                      : JSON.stringify(response.content);
            res.writeHead(response.status, {
                'Content-Type': typeof response.content === 'string' ? 'text/plain' : 'application/json',
                ...(response.headers ?? {}),
            });
            res.end(body);
        } catch (error) {
            res.writeHead(500, { 'Content-Type': 'application/json' }).end(
                JSON.stringify({ success: false, error: error instanceof Error ? error.message : String(error) }),
            );
        }
    }
}

/** body-parser's default `limit` for `json()`: 100 kB. */
const ENDPOINT_BODY_LIMIT = 100 * 1024;

/** An array whose `push` also reports each new entry (the message bridge only pushes). */
function emitOnPush<T>(onPush: (entry: T) => void): T[] {
    const list: T[] = [];
    list.push = (...entries: T[]) => {
        const length = Array.prototype.push.apply(list, entries);
        entries.forEach(onPush);
        return length;
    };
    return list;
}
