import AdmZip from 'adm-zip';
import { readFileSync } from 'fs';
import { IPermission } from '@rocket.chat/apps-engine/definition/permissions/IPermission';
import { AppStatusUtils } from '@rocket.chat/apps-engine/definition/AppStatus';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { AppInterface } from '@rocket.chat/apps-engine/definition/metadata';
import { SlashCommandContext } from '@rocket.chat/apps-engine/definition/slashcommands';
import { engineEnvironment } from './environment';
import { RigServer } from './server';
import { RoomTypeCode, StoredAttachment, StoredMessage, StoredRoom, StoredUser } from './store';
import { kindOfStored } from '../support/marks';

export { RigServer } from './server';
export type { StoredMessage, StoredRoom, StoredUser } from './store';

export interface PostOptions {
    tmid?: string;
    /** "Also send to channel" for a thread reply. */
    tshow?: boolean;
    /** A system message type, e.g. 'uj' (user joined). */
    t?: string;
    attachments?: StoredAttachment[];
    file?: { name: string; type: string };
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
        this.admin = server.store.addUser({ username: 'admin', roles: ['admin', 'user'] });
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
    }): Promise<Rig> {
        Object.assign(process.env, engineEnvironment());
        // The engine grants every permission when NODE_ENV is 'test' (as jest sets it); the rig
        // must enforce app.json's permissions like a real server does.
        process.env.NODE_ENV = 'rig';
        const rig = new Rig(new RigServer({ strict: opts.strict }));
        for (const [id, value] of Object.entries(opts.serverSettings ?? {})) {
            rig.server.setServerSetting(id, value);
        }
        await rig.server.listen();
        const started = Date.now();
        await rig.server.manager.load();
        const app = await rig.install(opts.zipPath, opts.settings ?? {});
        rig.appId = app.getID();
        rig.server.instrumentApp(rig.appId);
        const status = await app.getStatus();
        if (!AppStatusUtils.isEnabled(status)) {
            throw new Error(`app did not enable: status ${status}; logs: ${rig.logText()}`);
        }
        rig.loadMs = Date.now() - started;
        const bot = [...rig.server.store.users.values()].find((u) => u.type === 'app' && u.appId === rig.appId);
        if (!bot) {
            throw new Error('the engine created no app user');
        }
        rig.bot = bot;
        return rig;
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

    /**
     * Posts as a user and fires what the server fires after saving it. Resolves once the event is dispatched, not handled (see settle).
     * Like the server, a reply to a reply lands in the root's thread and counts on the root.
     * It does not apply the rules for app messages (size, custom fields, room access): tests
     * use it to lay down history, including the bot's own earlier messages.
     */
    public async post(sender: StoredUser, room: StoredRoom, text: string, opts: PostOptions = {}): Promise<StoredMessage> {
        const parent = opts.tmid ? this.server.store.messages.get(opts.tmid) : undefined;
        const tmid = this.server.strict ? parent?.tmid || opts.tmid : opts.tmid;
        const stored = this.server.store.postMessage({
            rid: room.id,
            senderId: sender.id,
            text,
            tmid,
            tshow: opts.tshow,
            t: opts.t,
            attachments: opts.attachments,
            file: opts.file,
            createdAt: opts.createdAt,
            customFields: opts.customFields,
            blocks: opts.blocks,
        });
        if (!opts.silent) {
            await this.server.emitPosted(stored);
        }
        return stored;
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
        const [command, ...args] = line.replace(/^\//, '').split(/\s+/).filter(Boolean);
        const context = new SlashCommandContext(this.server.convert.user(sender), this.server.convert.room(room), args, opts.tmid);
        // Resolves when the app's executor returned, like the server's call.
        await this.server.manager.getCommandManager().executeCommand(command, context);
    }

    /** Clicks a button under a message as `user`, the way the Rocket.Chat client reports it; resolves when the app handled it. */
    public async clickButton(user: StoredUser, message: StoredMessage, actionId: string, value: string): Promise<void> {
        const room = this.server.store.rooms.get(message.rid) as StoredRoom;
        await this.server.fire(AppInterface.IUIKitInteractionHandler, {
            type: 'blockAction',
            appId: this.appId,
            actionId,
            triggerId: `trigger-${Date.now()}`,
            user: this.server.convert.user(user),
            room: this.server.convert.room(room),
            message: this.server.convert.message(message),
            container: { type: 'message', id: message.id },
            payload: { blockId: 'approval', value },
        });
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
