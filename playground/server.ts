/**
 * The playground's web server: the page (playground/page/, plain files), a JSON API that acts
 * as a person on the rig (post, run a command, click, submit a view, change the app's
 * settings), and one Server-Sent Events stream that carries every change the page shows live
 * (messages posted, edited or deleted, private messages, typing, surfaces opened or closed).
 */
import AdmZip from 'adm-zip';
import { existsSync, readFileSync } from 'fs';
import { createServer, IncomingMessage, ServerResponse } from 'http';
import { AddressInfo } from 'net';
import { extname, join, resolve } from 'path';
import { Rig, StoredMessage, StoredUser } from '../rig';
import type { Ephemeral } from '../rig/server';
import { ITypingDescriptor } from '@rocket.chat/apps-engine/server/bridges/MessageBridge';
import { adminView, saveSettings } from './admin';
import type { PlaygroundHermes } from './demo';
import { ephemeralId, ephemeralJson, isVisible, messageJson, messagesFor, personJson, roomJson } from './wire';
import { buildWorld, World } from './world';

export interface PlaygroundOptions {
    zipPath: string;
    hermes: PlaygroundHermes;
    /** 0 picks a free port. */
    port?: number;
    host?: string;
}

export interface Playground {
    url: string;
    rig: Rig;
    world: World;
    close(): Promise<void>;
}

class HttpError extends Error {
    constructor(
        public readonly status: number,
        message: string,
    ) {
        super(message);
    }
}

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.png': 'image/png', '.svg': 'image/svg+xml' };

/** playground/page next to this file, or from build/ (where start.mjs bundles this) the one in the repo. */
function pageDir(): string {
    const beside = resolve(__dirname, 'page');
    return existsSync(beside) ? beside : resolve(__dirname, '..', 'playground', 'page');
}

export async function startPlayground(opts: PlaygroundOptions): Promise<Playground> {
    const rig = await Rig.start({
        zipPath: opts.zipPath,
        settings: {
            hermes_url: opts.hermes.url,
            hermes_api_key: opts.hermes.apiKey,
            hermes_timeout_seconds: 120,
            // The status message shows after 1 s, so a tool's progress is seen.
            status_delay_seconds: 1,
        },
    });
    const world = await buildWorld(rig);
    // The admin is also the app's admin ("Always approve" in their DM, every command).
    await rig.setting('admin_user_ids', rig.admin.id);
    await rig.settingsReported();
    // The labels the app declares in its package, as the admin UI reads them.
    const i18n = JSON.parse(new AdmZip(opts.zipPath).readAsText('i18n/en.json')) as Record<string, string>;
    const api = new PlaygroundApi(rig, world, i18n, opts.hermes);
    const server = createServer((req, res) => void api.handle(req, res));
    await new Promise<void>((done) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', done));
    const address = server.address() as AddressInfo;
    return {
        url: `http://${address.address}:${address.port}`,
        rig,
        world,
        close: async () => {
            api.closeStreams();
            server.closeAllConnections();
            await new Promise<void>((done) => server.close(() => done()));
            await rig.stop();
        },
    };
}

class PlaygroundApi {
    private readonly streams = new Set<ServerResponse>();
    private readonly page = pageDir();

    constructor(
        private readonly rig: Rig,
        private readonly world: World,
        private readonly i18n: Record<string, string>,
        private readonly hermes: PlaygroundHermes,
    ) {
        const events = rig.server.events;
        const upsert = (m: StoredMessage) => {
            this.broadcast(isVisible(m) ? { type: 'message', message: messageJson(rig, m) } : { type: 'delete', id: m.id, rid: m.rid });
            // A reply changes its root's reply count.
            const root = m.tmid ? rig.server.store.messages.get(m.tmid) : undefined;
            if (root) {
                this.broadcast({ type: 'message', message: messageJson(rig, root) });
            }
        };
        events.on('message', upsert);
        events.on('update', upsert);
        events.on('delete', (m: StoredMessage) =>
            this.broadcast(
                rig.server.store.messages.has(m.id) && isVisible(m)
                    ? { type: 'message', message: messageJson(rig, m) }
                    : { type: 'delete', id: m.id, rid: m.rid },
            ),
        );
        events.on('ephemeral', (e: Ephemeral) => this.broadcast({ type: 'message', message: ephemeralJson(rig, e, rig.server.ephemerals.indexOf(e)) }));
        // The server pushes a message whose reactions changed, as any change of it.
        events.on('reaction', (change: { message: StoredMessage }) => upsert(change.message));
        events.on('typing', (t: ITypingDescriptor) => this.broadcast({ type: 'typing', rid: t.id, username: t.username, isTyping: t.isTyping }));
        events.on('ui', (userId: string) => this.broadcast({ type: 'ui', userId, surfaces: rig.server.uiClient(userId).open() }));
    }

    public async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
        const url = new URL(req.url ?? '/', 'http://playground');
        try {
            if (url.pathname === '/api/events') {
                return this.openStream(res);
            }
            if (url.pathname.startsWith('/api/')) {
                const body = req.method === 'POST' ? await readJson(req) : {};
                const result = await this.route(req.method ?? 'GET', url.pathname, url.searchParams, body);
                return send(res, 200, 'application/json', JSON.stringify(result ?? { ok: true }));
            }
            return this.serveFile(url.pathname, res);
        } catch (error) {
            const status = error instanceof HttpError ? error.status : 500;
            send(res, status, 'application/json', JSON.stringify({ error: error instanceof Error ? error.message : String(error) }));
        }
    }

    public closeStreams(): void {
        for (const stream of this.streams) {
            stream.end();
        }
        this.streams.clear();
    }

    private async route(method: string, path: string, query: URLSearchParams, body: Record<string, unknown>): Promise<unknown> {
        const rig = this.rig;
        const who = () => this.person(String(body.user ?? query.get('user') ?? ''));
        switch (`${method} ${path}`) {
            case 'GET /api/state':
                return this.state(who());
            case 'GET /api/messages':
                return messagesFor(rig, who());
            case 'POST /api/post':
                return this.post(who(), body);
            case 'POST /api/button':
                return this.clickMessageButton(who(), body);
            case 'POST /api/action': {
                const room = this.room(String(body.rid ?? ''));
                const message = body.mid ? rig.server.store.messages.get(String(body.mid)) : undefined;
                await rig.clickActionButton(who(), { actionId: String(body.actionId), room, message });
                return { ok: true };
            }
            case 'POST /api/react':
                return this.react(who(), body);
            case 'POST /api/view':
                return this.view(who(), body);
            case 'GET /api/admin':
                return adminView(rig, this.i18n);
            case 'POST /api/admin':
                return saveSettings(rig, (body.values ?? {}) as Record<string, unknown>);
            default:
                throw new HttpError(404, `no such API: ${method} ${path}`);
        }
    }

    private async state(user: StoredUser) {
        const rig = this.rig;
        const commands = [...rig.server.bridges.commands.commands.values()].map((c) => {
            const usage = this.i18n[c.i18nParamsExample] ?? c.i18nParamsExample;
            return { command: c.command, usage, description: this.i18n[c.i18nDescription] ?? c.i18nDescription, subcommands: subcommandsOf(c.command, usage) };
        });
        return {
            me: personJson(user),
            people: this.world.people.map(personJson),
            bot: personJson(rig.bot),
            rooms: this.world.rooms.filter((r) => r.members.has(user.id)).map((r) => roomJson(rig, r)),
            commands,
            hermes: { label: this.hermes.label, keywords: this.hermes.keywords },
            siteUrl: String(rig.server.store.serverSettings.get('Site_Url') ?? ''),
            surfaces: rig.server.uiClient(user.id).open(),
            // The app's buttons in message menus and the room header, with their labels and where they show.
            actions: (await rig.actionButtons())
                .filter((b) => b.appId === rig.appId)
                .map((b) => ({ actionId: b.actionId, context: String(b.context), label: this.i18n[b.labelI18n] ?? b.labelI18n, when: b.when ?? {} })),
        };
    }

    /** A message, or a slash command when it starts with `/` and names one (as the web client decides). */
    private async post(user: StoredUser, body: Record<string, unknown>) {
        const room = this.room(String(body.rid ?? ''));
        if (!room.members.has(user.id)) {
            throw new HttpError(403, `${user.username} is not in this room`);
        }
        const text = String(body.text ?? '').trim();
        const tmid = body.tmid ? String(body.tmid) : undefined;
        if (!text) {
            throw new HttpError(400, 'the message is empty');
        }
        const command = /^\/(\S+)/.exec(text)?.[1];
        if (command && this.rig.server.bridges.commands.commands.has(command)) {
            await this.rig.command(user, room, text, { tmid });
            return { ok: true, command };
        }
        if (command) {
            throw new HttpError(400, `no such command: /${command}`);
        }
        const message = await this.rig.post(user, room, text, { tmid, tshow: tmid ? body.tshow === true : undefined });
        return { ok: true, id: message.id };
    }

    /** A click on a reaction (or the toolbar's 👍 / 👎): toggles it, under the server's rules (rig/reactions.ts). */
    private async react(user: StoredUser, body: Record<string, unknown>) {
        const message = this.rig.server.store.messages.get(String(body.mid ?? ''));
        if (!message) {
            throw new HttpError(404, 'no such message');
        }
        try {
            await this.rig.react(user, message, String(body.emoji ?? ''));
        } catch (e) {
            throw new HttpError(400, e instanceof Error ? e.message : String(e));
        }
        return { ok: true };
    }

    /** A button under a message, or under a private message (which has no id on the server: the web client sends its own). */
    private async clickMessageButton(user: StoredUser, body: Record<string, unknown>) {
        const mid = String(body.mid ?? '');
        const index = this.rig.server.ephemerals.findIndex((_e, i) => ephemeralId(i) === mid);
        const ephemeral = index >= 0 ? this.rig.server.ephemerals[index] : undefined;
        const message = ephemeral
            ? ({ id: mid, rid: ephemeral.roomId, tmid: ephemeral.tmid, blocks: ephemeral.blocks } as unknown as StoredMessage)
            : this.rig.server.store.messages.get(mid);
        if (!message) {
            throw new HttpError(404, 'no such message');
        }
        const outcome = await this.rig.clickButton(user, message, String(body.actionId ?? ''), String(body.value ?? ''));
        if (outcome.status !== 200) {
            throw new HttpError(500, `the app failed: ${JSON.stringify(outcome.response)}`);
        }
        return { ok: true };
    }

    /** Submit, close, or click inside a modal or contextual bar open on this person's client. */
    private async view(user: StoredUser, body: Record<string, unknown>) {
        const viewId = String(body.viewId ?? '');
        const values = (body.values ?? {}) as Record<string, Record<string, unknown>>;
        switch (body.op) {
            case 'submit': {
                const outcome = await this.rig.submitView(user, viewId, values);
                return { ok: true, response: outcome.response };
            }
            case 'close':
                await this.rig.closeView(user, viewId, { isCleared: true, values });
                // The web client closes the surface whatever the app answers.
                this.rig.server.uiClient(user.id).dispose(viewId);
                return { ok: true };
            case 'click':
                await this.rig.clickViewButton(user, viewId, String(body.actionId ?? ''), body.value, body.blockId ? String(body.blockId) : undefined);
                return { ok: true };
            default:
                throw new HttpError(400, `unknown view operation ${String(body.op)}`);
        }
    }

    private person(id: string): StoredUser {
        const user = this.world.people.find((p) => p.id === id || p.username === id) ?? this.world.people[0];
        return user;
    }

    private room(id: string) {
        const room = this.rig.server.store.rooms.get(id);
        if (!room) {
            throw new HttpError(404, 'no such room');
        }
        return room;
    }

    private openStream(res: ServerResponse): void {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
        res.write('retry: 1000\n\n');
        this.streams.add(res);
        res.on('close', () => this.streams.delete(res));
    }

    private broadcast(event: Record<string, unknown>): void {
        const frame = `data: ${JSON.stringify(event)}\n\n`;
        for (const stream of this.streams) {
            stream.write(frame);
        }
    }

    private serveFile(path: string, res: ServerResponse): void {
        const name = path === '/' ? 'index.html' : path.slice(1);
        // Only plain file names of the page's own folder.
        const file = /^[\w-]+\.(html|js|css|png|svg)$/.test(name) ? join(this.page, name) : '';
        if (!file || !existsSync(file)) {
            return send(res, 404, 'text/plain', 'Not found');
        }
        send(res, 200, TYPES[extname(file)] ?? 'application/octet-stream', readFileSync(file));
    }
}

/**
 * The sub-commands a command's usage line names, for the composer's completion: the app's
 * "Usage: `/hermes new | reset | title [text] | …`" gives new, reset, title (with its arguments).
 */
function subcommandsOf(command: string, usage: string): Array<{ name: string; usage: string }> {
    const line = new RegExp(`/${command} ([^\`]+)`).exec(usage)?.[1] ?? '';
    return line
        .split(/\s\|\s/)
        .map((part) => part.trim())
        .filter((part) => /^[\w-]+/.test(part))
        .map((part) => ({ name: /^[\w-]+/.exec(part)?.[0] ?? part, usage: part }));
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
    res.writeHead(status, {
        'Content-Type': `${type}${type.startsWith('text/') || type.endsWith('json') ? '; charset=utf-8' : ''}`,
        'Cache-Control': 'no-store',
    });
    res.end(body);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
        chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    try {
        return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
        throw new HttpError(400, 'the body is not JSON');
    }
}
