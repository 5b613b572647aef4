import AdmZip from 'adm-zip';
import { readFileSync } from 'fs';
import { IPermission } from '@rocket.chat/apps-engine/definition/permissions/IPermission';
import { AppStatusUtils } from '@rocket.chat/apps-engine/definition/AppStatus';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { AppInterface } from '@rocket.chat/apps-engine/definition/metadata';
import { SlashCommandContext } from '@rocket.chat/apps-engine/definition/slashcommands';
import { IUIActionButton } from '@rocket.chat/apps-engine/definition/ui';
import { engineEnvironment } from './environment';
import { uploadAsUser, UploadInput } from './fileUpload';
import { Ephemeral, RigServer, UiOutcome, UserInteraction } from './server';
import { randomId, RoomTypeCode, StoredAttachment, StoredFile, StoredMessage, StoredRoom, StoredUpload, StoredUser } from './store';
import { clickedAppId, findAction, OpenSurface, UiSurfaceRecord, UiView, viewState } from './uiClient';
import { kindOfStored } from './marks';
import { assertEncryptionAllows, canSendMessage } from './rules';
import { slashCommandLine } from './slashCommandLine';

export { RigServer } from './server';
export type { Ephemeral, UiOutcome } from './server';
export type { StoredMessage, StoredRoom, StoredUpload, StoredUser } from './store';
export type { OpenSurface, UiSurfaceRecord, UiView } from './uiClient';
export type { UploadInput } from './fileUpload';

/** A view to act on: a record from `views()`, an open surface from `openViews()`, the view itself, or its id. */
type ViewRef = UiSurfaceRecord | OpenSurface | UiView | string;

/** Values the user entered in a surface, as the client groups them: `{ [blockId]: { [actionId]: value } }`. */
type ViewValues = Record<string, Record<string, unknown>>;

export interface PostOptions {
    tmid?: string;
    /** "Also send to channel" for a thread reply. */
    tshow?: boolean;
    /** A system message type, e.g. 'uj' (user joined). */
    t?: string;
    attachments?: StoredAttachment[];
    file?: StoredFile;
    files?: StoredFile[];
    createdAt?: Date;
    customFields?: Record<string, unknown>;
    /** UIKit blocks, as an app would have posted them. */
    blocks?: unknown[];
    /** Store the message without firing the events (history written before the test). */
    silent?: boolean;
}

/**
 * The real Apps-Engine with the packaged app installed, on an in-memory Rocket.Chat.
 * One per test file: the engine allows one AppManager per process.
 */
export class Rig {
    public readonly admin: StoredUser;
    public bot!: StoredUser;
    public appId = '';
    public loadMs = 0;

    private constructor(public readonly server: RigServer) {
        // A second instance shares the first one's users (one database): the same admin.
        this.admin = server.store.userByUsername('admin') ?? server.store.addUser({ username: 'admin', roles: ['admin', 'user'] });
    }

    /**
     * `strict` (default true) makes the in-memory server apply the real server's rules
     * (RigServerOptions); `serverSettings` overrides Rocket.Chat settings from the start
     * (e.g. `{ Message_KeepHistory: true }`); `rig.server.setServerSetting` changes one later.
     */
    public static async start(opts: {
        zipPath: string;
        settings?: Record<string, unknown>;
        strict?: boolean;
        serverSettings?: Record<string, unknown>;
        /** Milliseconds each bridge call waits, like a database round trip (RigServerOptions.storeLatencyMs; default 0). */
        storeLatencyMs?: number;
    }): Promise<Rig> {
        Object.assign(process.env, engineEnvironment());
        // The engine grants every permission when NODE_ENV is 'test' (as jest sets it); the rig
        // must enforce app.json's permissions like a real server does.
        process.env.NODE_ENV = 'rig';
        const rig = new Rig(new RigServer({ strict: opts.strict, storeLatencyMs: opts.storeLatencyMs }));
        for (const [id, value] of Object.entries(opts.serverSettings ?? {})) {
            rig.server.setServerSetting(id, value);
        }
        await rig.boot(opts.zipPath, opts.settings ?? {});
        const bot = [...rig.server.store.users.values()].find((u) => u.type === 'app' && u.appId === rig.appId);
        if (!bot) {
            throw new Error('the engine created no app user');
        }
        rig.bot = bot;
        return rig;
    }

    /**
     * A second Rocket.Chat instance of the same deployment (rig/cluster.ts): its own engine and
     * app process, sharing `peer`'s messages, users, rooms, the app's persistence and the
     * scheduler's jobs. The app is installed there as a cluster loads it (the app user exists
     * already), with the same settings.
     */
    public static async join(peer: Rig, opts: { zipPath: string; settings?: Record<string, unknown> }): Promise<Rig> {
        const rig = new Rig(new RigServer({ peer: peer.server, strict: peer.server.strict, storeLatencyMs: peer.server.storeLatencyMs }));
        await rig.boot(opts.zipPath, opts.settings ?? {});
        rig.bot = peer.bot;
        return rig;
    }

    /** Serves the app endpoints, loads the engine, installs and enables the package. */
    private async boot(zipPath: string, settings: Record<string, unknown>): Promise<void> {
        await this.server.listen();
        const started = Date.now();
        await this.server.manager.load();
        const app = await this.install(zipPath, settings);
        this.appId = app.getID();
        this.server.instrumentApp(this.appId);
        const status = await app.getStatus();
        if (!AppStatusUtils.isEnabled(status)) {
            throw new Error(`app did not enable: status ${status}; logs: ${this.logText()}`);
        }
        this.loadMs = Date.now() - started;
    }

    /**
     * Updates the installed app from a package, as the admin's "update" (or `rc-apps deploy
     * --update`) does: AppManager.update with app.json's permissions; the app's storage
     * (settings, persistence) stays, the new code is loaded and enabled.
     */
    public async update(zipPath: string): Promise<void> {
        const zip = readFileSync(zipPath);
        const { permissions } = JSON.parse(new AdmZip(zip).readAsText('app.json')) as { permissions: IPermission[] };
        const result = await this.server.manager.update(zip, permissions, { loadApp: true, user: this.server.convert.user(this.admin) });
        if (!result.getApp() || result.hasStorageError()) {
            throw new Error(`app update failed: ${JSON.stringify({ storage: result.getStorageError() })}`);
        }
    }

    /** Installs and enables a packaged app (like the admin's upload, granting app.json's permissions), then applies settings. */
    public async install(zipPath: string, settings: Record<string, unknown> = {}) {
        const zip = readFileSync(zipPath);
        const { permissions } = JSON.parse(new AdmZip(zip).readAsText('app.json')) as { permissions: IPermission[] };
        const result = await this.server.manager.add(zip, { enable: true, user: this.server.convert.user(this.admin), permissionsGranted: permissions });
        const app = result.getApp();
        if (!app || result.hasStorageError() || result.hasAppUserError()) {
            throw new Error(
                `app install failed: ${JSON.stringify({ storage: result.getStorageError(), user: result.getAppUserError(), license: result.getLicenseValidationResult()?.getErrors?.() })}`,
            );
        }
        for (const [id, value] of Object.entries(settings)) {
            await this.server.updateAppSetting(app.getID(), id, value);
        }
        return app;
    }

    public async stop(): Promise<void> {
        await this.server.close();
    }

    public user(username: string, extra: Partial<StoredUser> = {}): StoredUser {
        return this.server.store.addUser({ username, ...extra });
    }

    /** A channel ('c') or private group ('p') with these members (the bot only if listed); `readOnly` sets the room's `ro` flag. */
    public room(name: string, members: StoredUser[], type: Extract<RoomTypeCode, 'c' | 'p'> = 'c', opts: { readOnly?: boolean } = {}): StoredRoom {
        return this.server.store.addRoom({
            type,
            name,
            creatorId: members[0]?.id ?? this.admin.id,
            memberIds: members.map((m) => m.id),
            readOnly: opts.readOnly,
        });
    }

    /** A direct room; with two members a 1:1 DM, with more a group DM. */
    public direct(members: StoredUser[]): StoredRoom {
        return this.server.store.addRoom({ type: 'd', creatorId: members[0].id, memberIds: members.map((m) => m.id) });
    }

    /** Removes a member from a room, as an owner's "Remove from room" does (their subscription goes: the server no longer lists the room for them). */
    public removeFromRoom(room: StoredRoom, user: StoredUser): void {
        room.members.delete(user.id);
    }

    /**
     * Posts as a user and fires what the server fires after saving it. Resolves once the event is dispatched, not handled (see settle).
     * Like the server, a reply to a reply lands in the root's thread and counts on the root.
     * It does not apply the rules for app messages (size, custom fields, room access): tests
     * use it to lay down history, including the bot's own earlier messages.
     */
    public async post(sender: StoredUser, room: StoredRoom, text: string, opts: PostOptions = {}): Promise<StoredMessage> {
        const parent = opts.tmid ? this.server.store.messages.get(opts.tmid) : undefined;
        const tmid = this.server.strict ? parent?.tmid || opts.tmid : opts.tmid;
        if (this.server.strict && sender.type !== 'app') {
            // A person's message goes through executeSendMessage → canSendMessageAsync
            // (apps/meteor/app/lib/server/methods/sendMessage.ts): only someone who may access and
            // post in the room posts there, so a message event is its own proof of membership.
            assertEncryptionAllows(this.server.store, canSendMessage(this.server.store, room.id, sender), opts.t);
        }
        const stored = this.server.store.postMessage({
            rid: room.id,
            senderId: sender.id,
            text,
            tmid,
            tshow: opts.tshow,
            t: opts.t,
            attachments: opts.attachments,
            file: opts.file,
            files: opts.files,
            createdAt: opts.createdAt,
            customFields: opts.customFields,
            blocks: opts.blocks,
        });
        if (!opts.silent) {
            await this.server.emitPosted(stored);
        }
        return stored;
    }

    /**
     * A person clicks a reaction on a message, as the web client's `setReaction` method does
     * (a click toggles; `on` forces). Throws what the server would refuse; resolves when the
     * app has handled the IPostMessageReacted event.
     */
    public async react(user: StoredUser, message: StoredMessage, emoji: string, on?: boolean): Promise<void> {
        this.server.setReaction(user.id, emoji, message.id, on);
        await this.settle();
    }

    /** The bot's reaction changes on one message, oldest first: `+:eyes:`, `-:eyes:`, … */
    public botReactions(message: StoredMessage): string[] {
        return this.server.reactions.filter((r) => r.messageId === message.id && r.userId === this.bot.id).map((r) => `${r.added ? '+' : '-'}${r.reaction}`);
    }

    /** A person edits their own message, as in the web client; resolves when the app has handled the update. */
    public async edit(editor: StoredUser, message: StoredMessage, text: string): Promise<StoredMessage> {
        const stored = this.server.editMessage(message.id, editor, text);
        await this.settle();
        return stored;
    }

    /**
     * Runs a slash command as the server does when a user types `/<command> args` in a room
     * (or thread). Resolves when the app has handled it.
     */
    public async command(sender: StoredUser, room: StoredRoom, line: string, opts: { tmid?: string } = {}): Promise<void> {
        // The arguments as the server hands them to apps: quoted spans joined, quotes removed (slashCommandLine.ts).
        const { command, args } = slashCommandLine(line.startsWith('/') ? line : `/${line}`);
        const context = new SlashCommandContext(this.server.convert.user(sender), this.server.convert.room(room), args, opts.tmid);
        // Resolves when the app's executor returned, like the server's call.
        await this.server.manager.getCommandManager().executeCommand(command, context);
    }

    /** Runs a slash command and returns the one private answer it gave that person (throws unless exactly one came). */
    public async commandAnswer(sender: StoredUser, room: StoredRoom, line: string, opts: { tmid?: string } = {}): Promise<string> {
        const before = this.ephemerals(sender, room).length;
        await this.command(sender, room, line, opts);
        const answers = this.ephemerals(sender, room);
        if (answers.length !== before + 1) {
            throw new Error(`${line}: expected one private answer, got ${answers.length - before}`);
        }
        return answers[answers.length - 1];
    }

    /**
     * Clicks a button under a message as `user`, the way the web client reports it
     * (useMessageBlockContextValue: container `message`, `rid`, `mid`); resolves when the app
     * handled it, with the answer. An app error comes back as status 500, it does not throw.
     * The blockId is the one of the block holding the button ('approval' when it has none, as
     * this helper always sent).
     */
    public async clickButton(user: StoredUser, message: StoredMessage, actionId: string, value: string): Promise<UiOutcome> {
        const found = findAction(message.blocks as UiView['blocks'] | undefined, actionId, value);
        return this.server.uiInteraction(user, clickedAppId(found), {
            type: 'blockAction',
            actionId,
            payload: { blockId: found?.block.blockId ?? 'approval', value },
            container: { type: 'message', id: message.id },
            rid: message.rid,
            mid: message.id,
        });
    }

    /**
     * The action buttons the installed apps registered (`configuration.ui.registerButton`), read
     * as the server's `GET /api/apps/actionButtons` does: UIActionButtonManager.getAllActionButtons,
     * enabled apps only, each with its appId. Without `ui.registerButtons` the engine drops a
     * registration silently.
     */
    public async actionButtons(): Promise<IUIActionButton[]> {
        return this.server.manager.getUIActionButtonManager().getAllActionButtons();
    }

    /**
     * Clicks an app's action button as the web client does: the button must be registered and,
     * in strict mode, shown to this user here (its `when.roomTypes`, `hasOneRole` /
     * `hasAllRoles` and `messageActionContext`; permissions are not modelled). The body follows
     * the button's context:
     * - messageAction: `rid`, `mid` and `tmid` from `message` (a message's menu);
     * - roomAction (room header kebab) and roomSideBarAction: `rid` only — no tmid exists there;
     * - messageBoxAction (composer "+" menu): `rid`, `tmid` (the thread's composer) and `text`;
     * - userDropdownAction: nothing but the button.
     * The server adds the converted room, message and user and a triggerId; resolves with the
     * app's answer and the views it opened with that triggerId. Rejects on a 500.
     */
    public async clickActionButton(
        user: StoredUser,
        opts: { actionId: string; room?: StoredRoom; message?: StoredMessage; tmid?: string; text?: string; appId?: string },
    ): Promise<UiOutcome> {
        const buttons = await this.actionButtons();
        const button = buttons.find((b) => b.actionId === opts.actionId && (!opts.appId || b.appId === opts.appId));
        if (!button) {
            throw new Error(
                `no action button "${opts.actionId}" is registered (registered: ${buttons.map((b) => `${b.actionId}/${b.context}`).join(', ') || 'none'}); ` +
                    'without the ui.registerButtons permission the engine drops registerButton silently',
            );
        }
        const room = opts.message ? this.server.store.rooms.get(opts.message.rid) : opts.room;
        if (this.server.strict) {
            const hidden = buttonHiddenBecause(button, user, room, opts.message);
            if (hidden) {
                throw new Error(`the web client does not show action button "${button.actionId}" to ${user.username} here: ${hidden}`);
            }
        }
        const context = String(button.context);
        let body: UserInteraction;
        if (context === 'messageAction') {
            if (!opts.message) {
                throw new Error(`a messageAction button is clicked on a message: pass { message }`);
            }
            body = {
                type: 'actionButton',
                actionId: button.actionId,
                rid: opts.message.rid,
                tmid: opts.message.tmid,
                mid: opts.message.id,
                payload: { context },
            };
        } else if (context === 'messageBoxAction') {
            body = { type: 'actionButton', actionId: button.actionId, rid: room?.id, tmid: opts.tmid, payload: { context, message: opts.text ?? '' } };
        } else if (context === 'userDropdownAction') {
            body = { type: 'actionButton', actionId: button.actionId, payload: { context } };
        } else {
            if (opts.tmid) {
                throw new Error(`the web client sends no tmid with a ${context} button (only messageAction and messageBoxAction carry one)`);
            }
            if (!room) {
                throw new Error(`a ${context} button is clicked in a room: pass { room }`);
            }
            body = { type: 'actionButton', actionId: button.actionId, rid: room.id, payload: { context } };
        }
        return this.answered(await this.server.uiInteraction(user, button.appId, body));
    }

    /** Every UIKit surface interaction that reached `user` (open, update, errors…), oldest first, with whether the client showed it. */
    public views(user: StoredUser): UiSurfaceRecord[] {
        return [...this.server.uiClient(user.id).records];
    }

    /** The surfaces open on `user`'s client now: at most one modal and one contextual bar, each with its latest view. */
    public openViews(user: StoredUser): OpenSurface[] {
        return this.server.uiClient(user.id).open();
    }

    /**
     * Submits a surface as the web client does (UiKitModal / UiKitContextualBar handleSubmit): the
     * view as the client holds it, with `state` = the initial values of its fields overlaid with
     * `values`, grouped `{ [blockId]: { [actionId]: value } }`. In strict mode the view must be
     * open on the user's client. Resolves with the app's answer; a `viewErrorResponse` comes
     * back as `response: { success: false, type: 'errors', viewId, errors, … }` and keeps the
     * view open (any other answer closes it). Rejects on a 500.
     */
    public async submitView(user: StoredUser, view: ViewRef, values: ViewValues = {}): Promise<UiOutcome> {
        const current = this.surfaceFor(user, view);
        return this.answered(
            await this.server.uiInteraction(user, current.appId, {
                type: 'viewSubmit',
                viewId: current.id,
                payload: { view: { ...current, id: current.id, state: viewState(current, values) } },
            }),
        );
    }

    /** Closes a surface (Cancel: `isCleared` false; the X or Esc: true) with its state, as `viewClosed`. Rejects on a 500. */
    public async closeView(user: StoredUser, view: ViewRef, opts: { isCleared?: boolean; values?: ViewValues } = {}): Promise<UiOutcome> {
        const current = this.surfaceFor(user, view);
        return this.answered(
            await this.server.uiInteraction(user, current.appId, {
                type: 'viewClosed',
                payload: {
                    viewId: current.id,
                    view: { ...current, id: current.id, state: viewState(current, opts.values) },
                    isCleared: opts.isCleared ?? false,
                },
            }),
        );
    }

    /**
     * Clicks a button (or picks a value) inside an open modal or contextual bar: a `blockAction`
     * with container `{ type: 'view', id }` and no room or message (useModalContextValue /
     * useContextualBarContextValue). `value` defaults to the element's value, `blockId` to its
     * block's. Rejects on a 500.
     */
    public async clickViewButton(user: StoredUser, view: ViewRef, actionId: string, value?: unknown, blockId?: string): Promise<UiOutcome> {
        const current = this.surfaceFor(user, view);
        const found = findAction(current.blocks, actionId);
        if (!found && this.server.strict) {
            throw new Error(`view ${current.id} has no element with actionId "${actionId}"`);
        }
        return this.answered(
            await this.server.uiInteraction(user, found?.block.appId ?? current.appId, {
                type: 'blockAction',
                actionId,
                container: { type: 'view', id: current.id },
                payload: { blockId: blockId ?? found?.block.blockId, value: value === undefined ? found?.element.value : value },
            }),
        );
    }

    /**
     * `user` uploads a file to `room` (or a thread, `tmid`) from the web client: the upload is
     * stored as the server stores it (rocketchat_uploads document, bytes in the file store) and
     * its file message is posted (`file`, `files`, an attachment per type, `groupable: false`,
     * `msg` = `text`), firing IPostMessageSent like any message. Resolves once the event is
     * dispatched (see settle). Refused as the server refuses (settings, type lists, access).
     */
    public async upload(
        user: StoredUser,
        room: StoredRoom,
        input: UploadInput,
    ): Promise<{ upload: StoredUpload; thumbnail?: StoredUpload; message: StoredMessage }> {
        return uploadAsUser(this.server, user, room, input);
    }

    /** The view as `user`'s client holds it now (strict: it must be open there). */
    private surfaceFor(user: StoredUser, ref: ViewRef): UiView {
        const given: UiView | undefined = typeof ref === 'string' ? undefined : 'blocks' in ref ? (ref as UiView) : (ref as { view?: UiView }).view;
        const id = typeof ref === 'string' ? ref : (given?.id ?? (ref as { viewId?: string }).viewId ?? '');
        const open = this.server.uiClient(user.id).openById(id);
        if (open) {
            return open.view;
        }
        if (this.server.strict || !given) {
            const seen = this.views(user).filter((r) => r.viewId === id);
            throw new Error(
                `view ${id} is not open on ${user.username}'s client` +
                    (seen.length ? ` (its interactions: ${seen.map((r) => `${r.interaction} via ${r.via}${r.shown ? '' : ' (not shown)'}`).join(', ')})` : ''),
            );
        }
        return given;
    }

    private answered(outcome: UiOutcome): UiOutcome {
        if (outcome.status !== 200) {
            throw Object.assign(new Error(`ui.interaction answered ${outcome.status}: ${JSON.stringify(outcome.response)}; app log:\n${this.logText()}`), {
                outcome,
            });
        }
        return outcome;
    }

    /**
     * Clicks a button under a private notice (`notifyUser`) as the web client does: the notice
     * is not stored, so the server finds no message by its id, and the click goes to the app
     * named on the element or its block (no name: `core`, which answers 500).
     */
    public async clickNotice(user: StoredUser, notice: Ephemeral, actionId: string, value: string): Promise<UiOutcome> {
        const pseudo = { id: `notice-${randomId()}`, rid: notice.roomId, tmid: notice.tmid, blocks: notice.blocks } as unknown as StoredMessage;
        return this.clickButton(user, pseudo, actionId, value);
    }

    /** Messages only `user` saw (ephemeral notifications), oldest first. */
    public ephemerals(user: StoredUser, room?: StoredRoom): string[] {
        return this.server.ephemerals.filter((e) => e.userId === user.id && (!room || e.roomId === room.id)).map((e) => e.text);
    }

    /** Re-delivers a message's event, as a second server instance or a replay would. */
    public async replay(message: StoredMessage): Promise<void> {
        await this.server.fire(AppInterface.IPostMessageSent, this.server.convert.message(message) as IMessage);
    }

    /** Resolves with the first stored message (already there, coming, or edited into a match) that matches; fails after the deadline. */
    /** Resolves when a private (ephemeral) message matching `pred` reaches someone: at once if one already has. */
    public waitForEphemeral(pred: (e: Ephemeral) => boolean, timeoutMs = 15_000): Promise<Ephemeral> {
        return new Promise((resolve, reject) => {
            const found = this.server.ephemerals.find(pred);
            if (found) {
                return resolve(found);
            }
            const on = (e: Ephemeral) => {
                if (pred(e)) {
                    clearTimeout(timer);
                    this.server.events.off('ephemeral', on);
                    resolve(e);
                }
            };
            const timer = setTimeout(() => {
                this.server.events.off('ephemeral', on);
                reject(new Error(`no matching private message in ${timeoutMs} ms; app log:\n${this.logText()}`));
            }, timeoutMs);
            this.server.events.on('ephemeral', on);
        });
    }

    public waitForMessage(match: (m: StoredMessage) => boolean, timeoutMs = 10_000, what = 'a matching message'): Promise<StoredMessage> {
        // Edit-history copies are stored documents but no one sees them as messages.
        const existing = [...this.server.store.messages.values()].find((m) => !m._hidden && match(m));
        if (existing) {
            return Promise.resolve(existing);
        }
        return new Promise((resolve, reject) => {
            const onMessage = (m: StoredMessage) => {
                if (match(m)) {
                    cleanup();
                    resolve(m);
                }
            };
            const timer = setTimeout(() => {
                cleanup();
                reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; app log:\n${this.logText()}`));
            }, timeoutMs);
            const cleanup = () => {
                clearTimeout(timer);
                this.server.events.off('message', onMessage);
                this.server.events.off('update', onMessage);
            };
            this.server.events.on('message', onMessage);
            this.server.events.on('update', onMessage);
        });
    }

    /**
     * The bot's next answer or notice in a room (and thread, when given) posted after
     * `after` — not its progress or approval messages.
     */
    public waitForBotReply(room: StoredRoom, opts: { after?: StoredMessage; tmid?: string; timeoutMs?: number } = {}): Promise<StoredMessage> {
        const since = opts.after?.createdAt.getTime() ?? 0;
        return this.waitForMessage(
            (m) =>
                m.rid === room.id &&
                m.senderId === this.bot.id &&
                m.createdAt.getTime() > since &&
                (opts.tmid === undefined || m.tmid === opts.tmid) &&
                !['status', 'approval'].includes(kindOfStored(m)),
            opts.timeoutMs,
            `the bot's reply in room ${room.name ?? room.id}`,
        );
    }

    /** Posts `text` and waits for the bot's answer (or notice) in the same place and for the app to settle. */
    public async ask(
        who: StoredUser,
        room: StoredRoom,
        text: string,
        opts: { tmid?: string; timeoutMs?: number } = {},
    ): Promise<{ question: StoredMessage; reply: StoredMessage }> {
        const question = await this.post(who, room, text, { tmid: opts.tmid });
        const reply = await this.waitForBotReply(room, { after: question, tmid: opts.tmid, timeoutMs: opts.timeoutMs ?? 15_000 });
        await this.settle();
        return { question, reply };
    }

    /**
     * The bot's messages still in the room as users see them: removed status messages are
     * gone, as on the server, and edit-history copies (`_hidden`) and deletion stubs
     * (`t: 'rm'`, kept for thread roots or with Message_ShowDeletedStatus) are left out.
     */
    public botMessages(room: StoredRoom): StoredMessage[] {
        return (this.server.store.roomMessages.get(room.id) ?? []).filter((m) => m.senderId === this.bot.id && !m._hidden && m.t !== 'rm');
    }

    /** The bot's messages of one kind (answer, notice, status, command, approval). */
    public botMessagesOfKind(room: StoredRoom, kind: string): StoredMessage[] {
        return this.botMessages(room).filter((m) => kindOfStored(m) === kind);
    }

    public async setting(id: string, value: unknown): Promise<void> {
        await this.server.updateAppSetting(this.appId, id, value);
    }

    /**
     * Waits for the app's settings report (the job a batch of setting changes schedules: one
     * "settings applied" line, the warnings, one Hermes probe), then for the app to settle.
     */
    public async settingsReported(): Promise<void> {
        while (this.server.bridges.scheduler.pendingOf('hermes-settings-report') > 0) {
            await this.server.bridges.scheduler.nextRun();
        }
        await this.settle();
    }

    /** Waits until the app has finished every call the rig made into it so far. */
    public async settle(): Promise<void> {
        await this.server.idle();
    }

    /**
     * The admin-visible app log, one line per entry. `appLinesOnly` keeps the lines the app
     * wrote (plain strings) and drops the engine's own structured traces of each call.
     */
    public logText(opts: { appLinesOnly?: boolean } = {}): string {
        return this.server
            .appLogs(this.appId)
            .flatMap((e) =>
                e.entries
                    .filter((x) => !opts.appLinesOnly || x.args.every((a) => typeof a === 'string'))
                    .map((x) => `${x.severity} ${e.method}: ${x.args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}`),
            )
            .join('\n');
    }
}

/**
 * Why the web client would not list this button for this user here, or undefined when it
 * would (the client's applyButtonFilters / useApplyButtonFilters: roomTypes, roles; and the messageAction
 * menus' messageActionContext). Permissions (`hasOnePermission`, `hasAllPermissions`) are not
 * modelled.
 */
function buttonHiddenBecause(button: IUIActionButton, user: StoredUser, room: StoredRoom | undefined, message?: StoredMessage): string | undefined {
    const when = button.when ?? {};
    if (room && when.roomTypes?.length) {
        const matches: Record<string, (r: StoredRoom) => boolean> = {
            public_channel: (r) => r.type === 'c',
            private_channel: (r) => r.type === 'p',
            direct: (r) => r.type === 'd',
            direct_multiple: (r) => r.type === 'd' && r.members.size > 2,
            livechat: (r) => r.type === 'l',
        };
        if (!when.roomTypes.some((t) => matches[t]?.(room))) {
            return `when.roomTypes ${JSON.stringify(when.roomTypes)} does not match room type '${room.type}'`;
        }
    }
    const roles = new Set(user.roles);
    if (room && room.creatorId === user.id && room.members.has(user.id)) {
        roles.add('owner');
    }
    if (when.hasOneRole?.length && !when.hasOneRole.some((r) => roles.has(r))) {
        return `when.hasOneRole ${JSON.stringify(when.hasOneRole)}`;
    }
    if (when.hasAllRoles?.length && !when.hasAllRoles.every((r) => roles.has(r))) {
        return `when.hasAllRoles ${JSON.stringify(when.hasAllRoles)}`;
    }
    if (message && String(button.context) === 'messageAction' && when.messageActionContext?.length) {
        const shownIn = message.tmid ? (message.tshow ? ['threads', 'message'] : ['threads']) : ['message'];
        if (!shownIn.some((c) => (when.messageActionContext as string[]).includes(c))) {
            return `when.messageActionContext ${JSON.stringify(when.messageActionContext)} (the message shows in ${shownIn.join(', ')})`;
        }
    }
    return undefined;
}
