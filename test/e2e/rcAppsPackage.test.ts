import AdmZip from 'adm-zip';
import { spawn, spawnSync } from 'child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { createServer, IncomingMessage } from 'http';
import { AddressInfo } from 'net';
import { sign } from 'jsonwebtoken';
import { tmpdir } from 'os';
import { join, relative, sep } from 'path';
import { Rig, StoredRoom, StoredUser } from '../../rig';
import { FakeHermes, SECRETS_IN_TESTS, useRigAndHermes } from '../support/e2e';

/**
 * The package the official CLI builds: `npm run rc-apps -- package` lays out the app's files
 * (what `.rcappsconfig` does not ignore) and runs the project's `rc-apps package` (apps-cli
 * 1.9.0) on them. That zip, not the esbuild one, is installed in the real engine here and has
 * to behave like it: a DM turn, a room mention, and `/history` (zod parses the request,
 * jsonwebtoken verifies the caller, both from src/generated/).
 */
const ROOT = join(__dirname, '..', '..');
const ENDPOINT_SECRET = 'endpoint-secret-0123456789abcdef-0123456789';
const ASKER_KEY = 'asker-key-0123456789abcdef-0123456789abcdef';
SECRETS_IN_TESTS.add(ASKER_KEY);

const work = mkdtempSync(join(tmpdir(), 'hermes-rc-apps-'));
const stage = join(work, 'app');
const zipPath = join(stage, 'dist', 'hermes_0.1.0.zip');
let packaged: { status: number | null; output: string };

beforeAll(() => {
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'rc-apps.mjs'), `--stage=${stage}`, 'package'], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 170_000,
        env: { ...process.env, FORCE_COLOR: '0' },
    });
    packaged = { status: run.status, output: `${run.stdout}${run.stderr}${run.error ?? ''}` };
    if (run.status !== 0 || !existsSync(zipPath)) {
        throw new Error(`npm run rc-apps -- package failed (exit ${run.status}):\n${packaged.output}`);
    }
}, 180_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = useRigAndHermes(
    { hermes_transport: 'chat', endpoint_secret: ENDPOINT_SECRET, asker_key: ASKER_KEY, progress_in_channel: 'off' },
    { zipPath: () => zipPath },
);
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
});

afterEach(async () => {
    await rig.settle();
});

const chats = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions');
const person = (name: string) => rig.user(`${name}${++n}`);
const lastUserContent = (request: { json?: unknown }) =>
    (request.json as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'user').pop()?.content;
const entries = (zip: string) =>
    new AdmZip(zip)
        .getEntries()
        .filter((e) => !e.isDirectory)
        .map((e) => e.entryName)
        .sort();

describe('the zip `rc-apps package` writes', () => {
    it('holds the app and nothing else: compiled app sources, app.json, icon, i18n (no tests, tools or TypeScript)', () => {
        const names = entries(zipPath);
        const sources = names.filter((name) => name.endsWith('.js'));
        // Every compiled file comes from HermesApp.ts or src/, and every one of those is there.
        const expected = ['HermesApp.ts', ...listTs(join(ROOT, 'src'))].map((p) => p.replace(/\.ts$/, '.js')).sort();
        expect(sources).toEqual(expected);
        expect(names.filter((name) => !name.endsWith('.js'))).toEqual(
            ['.packagedby', 'app.json', 'icon.png', 'package.json', ...listFiles(join(ROOT, 'i18n')).map((f) => `i18n/${f}`)].sort(),
        );
        expect(names.filter((name) => /^(test|scripts|bench|build|docs|dist)\//.test(name) || name.endsWith('.ts'))).toEqual([]);
        expect(sources).toEqual(expect.arrayContaining(['src/generated/zodBundle.js', 'src/generated/jsonwebtokenBundle.js', 'src/generated/enCatalog.js']));
    });

    it('`npm run package` holds one ASCII-only source file (the engine keeps it as a string: one byte a character)', () => {
        const ours = new AdmZip(process.env.HERMES_APP_ZIP as string);
        const source = ours.getEntry('HermesApp.js')?.getData().toString('utf8') ?? '';
        expect(source.length).toBeGreaterThan(100_000);
        expect(source.match(/[^\x00-\x7f]/g)).toBeNull();
    });

    it('carries the same manifest, icon and catalogs as `npm run package`, and rc-apps left app.json as it was', () => {
        const ours = new AdmZip(process.env.HERMES_APP_ZIP as string);
        const theirs = new AdmZip(zipPath);
        for (const name of entries(process.env.HERMES_APP_ZIP as string).filter((e) => !e.endsWith('.js') && e !== 'app.json')) {
            expect([name, theirs.readFile(name)?.equals(ours.readFile(name) as Buffer)]).toEqual([name, true]);
        }
        // rc-apps rewrites app.json (implements from the class's `implements`, requiredApiVersion from
        // devDependencies, its own layout): nothing may change in substance.
        const manifest = JSON.parse(readFileSync(join(ROOT, 'app.json'), 'utf8'));
        expect(JSON.parse(theirs.readAsText('app.json'))).toEqual(manifest);
        expect(JSON.parse(ours.readAsText('app.json'))).toEqual(manifest);
        expect(JSON.parse(readFileSync(join(stage, 'app.json'), 'utf8'))).toEqual(manifest);
    });
});

describe('installed in the real engine', () => {
    it('answers a DM', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const { reply } = await rig.ask(alice, dm, 'hello from the rc-apps package');
        // The scripted model echoes the message on one line; the layout the app sent is in the request.
        expect(reply.text).toMatch(
            /^ECHO: \[Rocket\.Chat room_id: \w+\] \[Rocket\.Chat asker: v1\.[^\]]+\] \[New message\] hello from the rc-apps package \| user_turns=1 \| prev=-$/,
        );
        expect(chats()).toHaveLength(1);
        expect(lastUserContent(chats()[0])).toMatch(
            /^\[Rocket\.Chat room_id: \w+\]\n\[Rocket\.Chat asker: v1\.[^\]]+\]\n\n\[New message\]\nhello from the rc-apps package$/,
        );
    });

    it('answers a room mention', async () => {
        const carol = person('carol');
        const room = rig.room(`rcapps${n}`, [carol, rig.bot]);
        const { question, reply } = await rig.ask(carol, room, `@${rig.bot.username} what is the status?`);
        expect(reply.text).toContain(`?msg=${question.id}) @${carol.username} ECHO: [Rocket.Chat room_id: ${room.id}]`);
        expect(reply.text).toContain('what is the status? | user_turns=1');
        expect(chats()[0].headers['x-hermes-session-key']).toBe(`agent:main:rocketchat:channel:${room.id}:${carol.id}`);
    });

    it('serves /history: zod validates the body, jsonwebtoken verifies the caller', async () => {
        const bob = person('bob');
        const room = rig.room(`rchist${n}`, [bob, rig.bot]);
        await rig.post(bob, room, 'first note', { silent: true, createdAt: new Date(Date.now() - 60_000) });
        await rig.post(bob, room, 'second note', { silent: true, createdAt: new Date(Date.now() - 59_000) });
        const asker = await askerTokenFrom(bob, rig.direct([bob, rig.bot]));

        const ok = await history({ asker, room_id: room.id, limit: 2 }, jwt(ENDPOINT_SECRET));
        expect(ok.status).toBe(200);
        expect(((await ok.json()) as { messages: Array<{ text: string }> }).messages.map((m) => m.text)).toEqual(['first note', 'second note']);
        // zod refuses a bad body; jsonwebtoken refuses a token signed with another secret.
        expect((await history({ asker, room_id: room.id, limit: 0 }, jwt(ENDPOINT_SECRET))).status).toBe(400);
        expect((await history({ asker, room_id: room.id }, jwt('another-secret-0123456789abcdef-0123456789'))).status).toBe(401);
    });
});

describe('`npm run rc-apps -- deploy`', () => {
    it("uploads the same package through Rocket.Chat's REST API as rc-apps does, and that package runs", async () => {
        const uploads: Array<{ app: Buffer; permissions: string }> = [];
        const calls: string[] = [];
        const server = createServer(async (req, res) => {
            calls.push(`${req.method} ${req.url}`);
            const json = (status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
            if (req.method === 'GET' && req.url === '/api/info') {
                return json(200, { version: '7.13.0', success: true });
            }
            if (req.method === 'POST' && req.url === '/api/v1/login') {
                return json(200, { status: 'success', data: { userId: 'admin-id', authToken: 'admin-token' } });
            }
            if (req.headers['x-auth-token'] !== 'admin-token') {
                return json(401, { success: false });
            }
            if (req.method === 'GET' && req.url === `/api/apps/${rig.appId}`) {
                return json(404, { success: false });
            }
            if (req.method === 'POST' && req.url === '/api/apps') {
                const form = await new Request('http://upload', {
                    method: 'POST',
                    headers: { 'content-type': String(req.headers['content-type']) },
                    body: await bodyOf(req),
                }).formData();
                uploads.push({ app: Buffer.from(await (form.get('app') as Blob).arrayBuffer()), permissions: String(form.get('permissions')) });
                return json(200, { success: true });
            }
            return json(404, { success: false });
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        try {
            const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
            const run = await runNode([
                join(ROOT, 'scripts', 'rc-apps.mjs'),
                `--stage=${join(work, 'deploy')}`,
                'deploy',
                '--url',
                url,
                '--username',
                'admin',
                '--password',
                'pw',
            ]);
            expect([run.status, run.output]).toEqual([0, expect.anything()]);
        } finally {
            server.close();
        }
        expect(calls).toEqual(['GET /api/info', 'POST /api/v1/login', 'POST /api/v1/login', `GET /api/apps/${rig.appId}`, 'POST /api/apps']);
        expect(uploads).toHaveLength(1);
        expect(JSON.parse(uploads[0].permissions)).toEqual(JSON.parse(readFileSync(join(ROOT, 'app.json'), 'utf8')).permissions);
        // The same compiled files as `rc-apps package` wrote (only the packager's timestamp differs).
        const uploaded = new AdmZip(uploads[0].app);
        const packagedZip = new AdmZip(zipPath);
        const names = entries(zipPath).filter((name) => name !== '.packagedby');
        expect(
            uploaded
                .getEntries()
                .filter((e) => !e.isDirectory)
                .map((e) => e.entryName)
                .sort(),
        ).toEqual(entries(zipPath));
        for (const name of names) {
            expect([name, uploaded.readFile(name)?.equals(packagedZip.readFile(name) as Buffer)]).toEqual([name, true]);
        }
        // Installed as an update of the running app, the uploaded package answers.
        const file = join(work, 'uploaded.zip');
        writeFileSync(file, uploads[0].app);
        await rig.update(file);
        const dave = person('dave');
        const { reply } = await rig.ask(dave, rig.direct([dave, rig.bot]), 'hello from rc-apps deploy');
        expect(reply.text).toContain('[New message] hello from rc-apps deploy | user_turns=1 | prev=-');
    }, 180_000);
});

describe('`rc-apps package` in the project folder itself', () => {
    it('fails with apps-cli 1.9.0, because that packager compiles every .ts file there, tests included (README: Install)', () => {
        const copy = join(work, 'project');
        cpSync(ROOT, copy, {
            recursive: true,
            filter: (src) => !/^(node_modules|\.git|\.cache|\.stryker-tmp|dist|build|coverage|reports)(\/|$)/.test(relative(ROOT, src).split(sep).join('/')),
        });
        symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
        const run = spawnSync(join(ROOT, 'node_modules', '.bin', 'rc-apps'), ['package'], {
            cwd: copy,
            encoding: 'utf8',
            timeout: 120_000,
            env: { ...process.env, FORCE_COLOR: '0' },
        });
        expect(run.status).not.toBe(0);
        expect(`${run.stdout}${run.stderr}`).toContain('There must be an exported class "HermesApp"');
        expect(existsSync(join(copy, 'dist'))).toBe(false);
    }, 130_000);
});

/** Files directly in `dir`, sorted. */
function listFiles(dir: string): string[] {
    return readdirSync(dir)
        .filter((name) => !name.startsWith('.'))
        .sort();
}

/** The .ts files under `dir`, as paths starting with `base`. */
function listTs(dir: string, base = 'src'): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? listTs(join(dir, entry.name), `${base}/${entry.name}`) : entry.name.endsWith('.ts') ? [`${base}/${entry.name}`] : [],
    );
}

function jwt(secret: string): string {
    return sign({ sub: 'history-tool' }, secret, { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 60 });
}

function history(body: unknown, token: string) {
    return fetch(`${rig.server.apiUrl}/api/apps/public/${rig.appId}/history`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
    });
}

/** A DM turn; returns the asker token the app put in the turn it sent to Hermes. */
async function askerTokenFrom(who: StoredUser, dm: StoredRoom): Promise<string> {
    await rig.ask(who, dm, 'what did I write?');
    const messages = (chats().at(-1)?.json as { messages: Array<{ role: string; content: string }> }).messages;
    const m = /^\[Rocket\.Chat asker: (v1\.[A-Za-z0-9]+\.[A-Za-z0-9]+\.\d+\.[A-Za-z0-9_-]{22})\]$/m.exec(
        messages.filter((x) => x.role === 'user').at(-1)?.content ?? '',
    );
    if (!m) {
        throw new Error('the turn carried no asker token');
    }
    return m[1];
}

function bodyOf(req: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => resolve(Buffer.concat(chunks)));
        req.on('error', reject);
    });
}

/** `node <args>` without blocking this process (the fake server above must answer it). */
function runNode(args: string[]): Promise<{ status: number | null; output: string }> {
    return new Promise((resolve) => {
        const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, FORCE_COLOR: '0' } });
        let output = '';
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (output += d));
        const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
        child.on('close', (status) => {
            clearTimeout(timer);
            resolve({ status, output });
        });
    });
}
