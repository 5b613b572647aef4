import { execFile } from 'child_process';
import { promisify } from 'util';
import { mkdirSync, readFileSync, writeFileSync } from 'fs';
import { createServer, request as httpRequest, Server } from 'http';
import { join } from 'path';
import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { kindOfStored, turnOfStored } from '../../rig/marks';
import { startRecorder } from './recorder';
import { realHermesTarget } from './target';

/**
 * The packaged app in the real engine against a REAL Hermes `api_server` (v0.18.2 with the
 * scripted model of the Hermes test set-up: ECHO / RUN_TOOL / DANGER / SLOW), on both
 * transports. Not part of `npm test` (CI has no Hermes): `npm run test:real-hermes`, with
 * HERMES_REAL_URL and HERMES_REAL_KEY (or HERMES_REAL_KEY_FILE) naming the server.
 *
 * Expected texts are the scripted model's own (its `ECHO: <msg> | user_turns=<n> | prev=<m>`
 * shows which history the run saw), never computed with the app's code.
 *
 * The app talks to Hermes through a recording proxy; HERMES_REAL_RECORD=1 writes what each
 * test exchanged to test/fixtures/real-hermes-app/ (the Hermes home path, HERMES_REAL_HOME,
 * replaced by `<HERMES_TEST_HOME>` as in the curl transcripts), and
 * test/unit/fake-hermes/fakeHermesAppExchanges.test.ts replays those exchanges against the fake.
 */
const target = realHermesTarget();
const run = promisify(execFile);
const FIXTURES = join(__dirname, '..', 'fixtures', 'real-hermes-app');
let recorder: Awaited<ReturnType<typeof startRecorder>>;
let rig: Rig;
let n = 0;

beforeAll(async () => {
    const home = process.env.HERMES_REAL_HOME;
    recorder = await startRecorder(target.url, home ? { [home]: '<HERMES_TEST_HOME>' } : {});
    rig = await Rig.start({
        zipPath: process.env.HERMES_APP_ZIP as string,
        settings: { hermes_url: recorder.url, hermes_api_key: target.key, hermes_timeout_seconds: 30, status_delay_seconds: 1 },
    });
}, 60_000);

/** The test now running, and what Hermes asked the app's MCP server in it (the MCP block's relay). */
let scenario = '';
const mcpExchanges: Array<{ scenario: string; request: string; status: number; response: string }> = [];

beforeEach(() => {
    scenario = expect.getState().currentTestName ?? 'unnamed';
    recorder.begin(scenario);
});

afterAll(async () => {
    const log = rig?.logText({ appLinesOnly: true }) ?? '';
    await rig?.stop();
    await recorder?.close();
    if (log.includes(target.key)) throw new Error('the app log contains the Hermes key');
    if (process.env.HERMES_REAL_RECORD === '1') saveRecordings();
});

/** One JSON file per test: the exchanges in the order they ended (the way they were recorded). */
function saveRecordings(): void {
    mkdirSync(FIXTURES, { recursive: true });
    const names = [...new Set(recorder.exchanges.map((x) => x.scenario))].filter((name) => name !== '' && name !== 'unnamed');
    for (const name of names) {
        const slug = name
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '-')
            .replace(/^-|-$/g, '')
            .slice(0, 90);
        const exchanges = recorder.exchanges.filter((x) => x.scenario === name && !x.path.includes('health') && !x.path.endsWith('/capabilities'));
        // `home`: the stand-in cuts a tool result at 200 characters, so a replay needs the path's real length.
        const mcp = mcpExchanges.filter((x) => x.scenario === name).map(({ request, status, response }) => ({ request, status, response }));
        const record = {
            scenario: name,
            hermes: 'v0.18.2 (306e2d23), scripted model',
            home: process.env.HERMES_REAL_HOME ?? null,
            exchanges,
            ...(mcp.length > 0 ? { mcp } : {}),
        };
        writeFileSync(join(FIXTURES, `${slug}.json`), JSON.stringify(record, null, 2) + '\n');
    }
}

afterEach(async () => {
    await rig.settle();
});

const person = (name: string) => rig.user(`${name}${++n}${Date.now().toString(36)}`);
const bot = () => rig.bot.username;

function approvalIn(room: StoredRoom): Promise<StoredMessage> {
    return rig.waitForMessage((m) => m.rid === room.id && kindOfStored(m) === 'approval', 30_000, 'the approval message');
}

async function approve(user: StoredUser, message: StoredMessage, choice: 'once' | 'deny'): Promise<void> {
    await rig.clickButton(user, message, 'hermes-approval', `${turnOfStored(message)}|${choice}`);
}

async function onTransport(transport: 'runs' | 'chat'): Promise<void> {
    await rig.setting('hermes_transport', transport);
    await rig.settingsReported();
}

describe.each(['runs', 'chat'] as const)('real Hermes over %s', (transport) => {
    beforeAll(() => onTransport(transport));

    it('answers in a DM and keeps the conversation: the second run sees the first', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const first = await rig.ask(alice, dm, 'my name is Alice', { timeoutMs: 30_000 });
        expect(first.reply.text).toBe('ECHO: my name is Alice | user_turns=1 | prev=-');
        const second = await rig.ask(alice, dm, 'what is my name?', { timeoutMs: 30_000 });
        expect(second.reply.text).toBe('ECHO: what is my name? | user_turns=2 | prev=my name is Alice');
    });

    it('answers a mention in a channel, in the thread of the question', async () => {
        const alice = person('alice');
        const room = rig.room(`real-${transport}-${n}`, [alice, rig.bot]);
        const question = await rig.post(alice, room, `@${bot()} hello from the channel`);
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 30_000 });
        expect(reply.text).toContain('ECHO:');
        expect(reply.text).toContain('hello from the channel');
    });

    it('a tool that needs no approval runs, and the answer is what the model made of its result', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const { reply } = await rig.ask(alice, dm, 'RUN_TOOL please', { timeoutMs: 30_000 });
        // Trimmed: over chat completions v0.18.2 starts the text after a tool call with blank lines.
        expect(reply.text).toMatch(/^TOOL_RESULT_SEEN: .*RUN_TOOL_OK/s);
    });

    it('a MEDIA: tag in the answer comes from Hermes as written and is left out of the posted answer', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const { reply } = await rig.ask(alice, dm, 'draw MEDIA:/tmp/hermes-chart.png', { timeoutMs: 30_000 });
        // The api_server hands the tag over in its answer (no file route, no data URL on this path).
        const answered = recorder.exchanges.filter((x) => x.method === 'POST' || x.path.includes('/events'));
        expect(answered.some((x) => x.response.includes('ECHO: draw MEDIA:/tmp/hermes-chart.png'))).toBe(true);
        expect(reply.text).toBe('ECHO: draw | user_turns=1 | prev=-\n\n_(Hermes attached files that its API server cannot send here: `hermes-chart.png`.)_');
    });

    it('stop ends a slow answer with the stop notice', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const question = await rig.post(alice, dm, 'SLOW please');
        // The scripted model streams a word a second: wait until the turn is under way.
        await rig.waitForMessage((m) => m.rid === dm.id && kindOfStored(m) === 'status', 30_000, 'the status message');
        await rig.command(alice, dm, '/hermes stop');
        const reply = await rig.waitForBotReply(dm, { after: question, timeoutMs: 30_000 });
        expect(reply.text).toContain(`Stopped by @${alice.username}`);
    }, 60_000);
});

describe('retry and undo (runs: the app sends the history)', () => {
    beforeAll(() => onTransport('runs'));

    it('a retry asks the last question again with the history before it; later runs never see the replaced exchange', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.ask(alice, dm, 'my name is Alice', { timeoutMs: 30_000 });
        const second = await rig.ask(alice, dm, 'I like tea', { timeoutMs: 30_000 });
        expect(second.reply.text).toBe('ECHO: I like tea | user_turns=2 | prev=my name is Alice');
        await rig.command(alice, dm, '/hermes retry');
        const again = await rig.waitForMessage(
            (m) => m.rid === dm.id && m.senderId === rig.bot.id && m.id !== second.reply.id && m.text.startsWith('ECHO: I like tea'),
            30_000,
            'the retried answer',
        );
        // Hermes saw the first exchange only, as the first time.
        expect(again.text).toBe('ECHO: I like tea | user_turns=2 | prev=my name is Alice');
        await rig.settle();
        // Hermes's transcript holds both tries; the app sends one.
        const third = await rig.ask(alice, dm, 'what do I like?', { timeoutMs: 30_000 });
        expect(third.reply.text).toBe('ECHO: what do I like? | user_turns=3 | prev=I like tea');
    }, 90_000);

    it('an undo takes the last exchange out of what the next run sees', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.ask(alice, dm, 'my name is Alice', { timeoutMs: 30_000 });
        await rig.ask(alice, dm, 'call me Bob instead', { timeoutMs: 30_000 });
        expect(await rig.commandAnswer(alice, dm, '/hermes undo')).toBe(
            ':leftwards_arrow_with_hook: Undone: Hermes no longer has the last exchange of this conversation.',
        );
        const next = await rig.ask(alice, dm, 'what is my name?', { timeoutMs: 30_000 });
        expect(next.reply.text).toBe('ECHO: what is my name? | user_turns=2 | prev=my name is Alice');
    }, 90_000);
});

describe('background tasks (runs)', () => {
    beforeAll(() => onTransport('runs'));

    it('a background task runs in a session of its own: no history; the conversation never sees it', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.ask(alice, dm, 'my name is Alice', { timeoutMs: 30_000 });
        await rig.command(alice, dm, '/hermes background what is my name?');
        const answer = await rig.waitForMessage((m) => m.rid === dm.id && m.text.includes('ECHO: what is my name?'), 30_000, 'the background answer');
        // Its own session: the model saw one user message, not the DM's.
        expect(answer.text).toMatch(new RegExp(`@${alice.username} ECHO: what is my name\\? \\| user_turns=1 \\| prev=-$`));
        await rig.settle();
        const next = await rig.ask(alice, dm, 'and now?', { timeoutMs: 30_000 });
        expect(next.reply.text).toBe('ECHO: and now? | user_turns=2 | prev=my name is Alice');
    }, 90_000);
});

describe('follow-ups (busy_input_mode auto: merge on v0.18.2)', () => {
    beforeAll(() => onTransport('runs'));

    it('two messages sent during a slow run reach Hermes as one next turn, each its own message', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const slow = await rig.post(alice, dm, 'SLOW report please');
        await rig.waitForMessage((m) => m.rid === dm.id && kindOfStored(m) === 'status', 30_000, 'the status message');
        await rig.post(alice, dm, 'also the budget');
        await rig.post(alice, dm, 'and the risks');
        const answers = () => rig.botMessagesOfKind(dm, 'answer').filter((m) => m.createdAt > slow.createdAt);
        await rig.waitForMessage(() => answers().length >= 2, 90_000, 'two answers');
        await rig.settle();
        expect(answers().map((m) => m.text)).toEqual([
            `SLOW: ${'tick '.repeat(30).trim()}`,
            'ECHO: also the budget [New message] and the risks | user_turns=2 | prev=SLOW report please',
        ]);
    }, 120_000);
});

describe('approvals', () => {
    /** A DANGER mention in a new room on runs, answered with `choice` at its approval message. */
    async function dangerAnswered(choice: 'once' | 'deny') {
        await onTransport('runs');
        const alice = person('alice');
        const room = rig.room(`real-${choice}-${n}`, [alice, rig.bot]);
        const question = await rig.post(alice, room, `@${bot()} DANGER tidy the scratch dir`);
        const approval = await approvalIn(room);
        expect(approval.text).toContain('rm -rf');
        await approve(alice, approval, choice);
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 30_000 });
        return { alice, reply, decided: rig.server.store.messages.get(approval.id)?.text };
    }

    it('runs: a command that needs approval waits for the button; approved, it runs', async () => {
        const { alice, reply, decided } = await dangerAnswered('once');
        expect(reply.text).toContain('TOOL_RESULT_SEEN:');
        expect(decided).toContain(`Approve once by @${alice.username}`);
    }, 60_000);

    it('runs: denied, the command does not run and the answer says so', async () => {
        const { alice, reply, decided } = await dangerAnswered('deny');
        expect(reply.text).toContain('TOOL_RESULT_SEEN:');
        expect(reply.text).toMatch(/denied|BLOCKED/i);
        expect(decided).toContain(`denied by @${alice.username}`);
    }, 60_000);

    it('chat: a command that needs approval is told as such with the command, never as JSON', async () => {
        await onTransport('chat');
        const alice = person('alice');
        const room = rig.room(`real-chat-approve-${n}`, [alice, rig.bot]);
        const question = await rig.post(alice, room, `@${bot()} DANGER clean up`);
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 30_000 });
        expect(reply.text).not.toMatch(/approval_pending|TOOL_RESULT_SEEN|\{"/);
        expect(reply.text).toContain('Hermes wanted to run a command that needs approval, and did not run it');
        expect(reply.text).toMatch(/```\nrm -rf \S+\/scratch\n```/);
        expect(reply.text).toContain('Approvals need the runs transport');
    }, 60_000);
});

/**
 * Issue 37: Hermes's own MCP client (with the MCP SDK it pins, 1.26.0) configured with the app's
 * `/mcp`. The scripted model, asked `MCP_READ <room id>`, calls `mcp_rocketchat_read_messages`
 * with the asker token of the turn's context block and answers `TOOL_RESULT_SEEN: <the first 200
 * characters of the result>`. Hermes connects to its MCP servers when it starts, so this block
 * restarts the set-up's Hermes (HERMES_REAL_HOME: its `stop.sh`, `start.sh`, `home/config.yaml`,
 * and the MCP client's Python packages in `mcplib/`: test/fixtures/real-hermes-app/README.md)
 * with the server in its config, behind a relay on a fixed port, and puts it back afterwards.
 */
describe('the MCP server (runs): Hermes reads another room through the app, for the asker only', () => {
    const home = process.env.HERMES_REAL_HOME as string;
    const SECRET = 'mcp-real-secret-0123456789abcdef-0123456789';
    const RELAY_PORT = 8653;
    let relay: Server;
    let config = '';
    // Asynchronously: Hermes connects to the app (in this process) while it starts.
    const restart = async (mcp: boolean) => {
        const env = { ...process.env, HERMES_TEST_HOME: home, ...(mcp ? { PYTHONPATH: join(home, 'mcplib') } : {}) };
        await run('bash', [join(home, 'stop.sh')], { env });
        await run('bash', [join(home, 'start.sh')], { env, timeout: 120_000 });
    };

    beforeAll(async () => {
        if (!home) throw new Error('Set HERMES_REAL_HOME: this block restarts that Hermes with the app as its MCP server');
        // Hermes's MCP requests and the app's answers are recorded too: the fixture's `mcp`, which the fake's replay serves.
        relay = createServer((req, res) => {
            const to = new URL(req.url ?? '/', rig.server.apiUrl);
            const sent: Buffer[] = [];
            req.on('data', (c: Buffer) => sent.push(c));
            req.on('end', () => {
                const out = httpRequest(to, { method: req.method, headers: { ...req.headers, host: to.host } }, (back) => {
                    const got: Buffer[] = [];
                    back.on('data', (c: Buffer) => got.push(c));
                    back.on('end', () => {
                        const response = Buffer.concat(got);
                        if (req.method === 'POST') {
                            mcpExchanges.push({
                                scenario,
                                request: Buffer.concat(sent).toString('utf8'),
                                status: back.statusCode ?? 0,
                                response: response.toString('utf8'),
                            });
                        }
                        res.writeHead(back.statusCode ?? 502, back.headers);
                        res.end(response);
                    });
                });
                out.end(Buffer.concat(sent));
            });
        });
        await new Promise<void>((ok) => relay.listen(RELAY_PORT, '127.0.0.1', ok));
        await rig.setting('asker_key', 'asker-real-0123456789abcdef-0123456789abcdef');
        await rig.setting('mcp_secret', SECRET);
        await rig.setting('mcp_enabled', true);
        await onTransport('runs');
        const file = join(home, 'home', 'config.yaml');
        config = readFileSync(file, 'utf8');
        const url = `http://127.0.0.1:${RELAY_PORT}/api/apps/public/${rig.appId}/mcp`;
        writeFileSync(
            file,
            `${config.trimEnd()}\nmcp_servers:\n  rocketchat:\n    url: "${url}"\n    headers:\n      Authorization: "Bearer ${SECRET}"\n    timeout: 30\n`,
        );
        await restart(true);
    }, 180_000);

    afterAll(async () => {
        if (config) {
            writeFileSync(join(home, 'home', 'config.yaml'), config);
            await restart(false);
        }
        await new Promise((ok) => relay?.close(ok));
    }, 180_000);

    it('the answer holds a message of a room the asker shares with the bot, and nothing of one they do not', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const eng = rig.room(`real-eng-${n}`, [alice, bob, rig.bot]);
        const secret = rig.room(`real-secret-${n}`, [bob, rig.bot], 'p');
        await rig.post(bob, eng, 'the release moved to Friday', { silent: true });
        await rig.post(bob, secret, 'the budget is cut by half', { silent: true });
        const dm = rig.direct([alice, rig.bot]);

        const shared = await rig.ask(alice, dm, `MCP_READ ${eng.id}`, { timeoutMs: 60_000 });
        expect(shared.reply.text).toMatch(/^TOOL_RESULT_SEEN: /);
        expect(shared.reply.text).toContain(`${bob.username}: the release moved to Friday`);

        const refused = await rig.ask(alice, dm, `MCP_READ ${secret.id}`, { timeoutMs: 60_000 });
        expect(refused.reply.text).toMatch(/^TOOL_RESULT_SEEN: /);
        expect(refused.reply.text).toContain('Not allowed: the person who asked cannot read that room with the bot.');
        expect(refused.reply.text).not.toContain('budget');

        // Bob shares the private group with the bot: the same call in his DM reads it.
        const bobs = await rig.ask(bob, rig.direct([bob, rig.bot]), `MCP_READ ${secret.id}`, { timeoutMs: 60_000 });
        expect(bobs.reply.text).toContain(`${bob.username}: the budget is cut by half`);
        expect(rig.logText({ appLinesOnly: true })).toContain(`MCP read_messages of room ${secret.id} refused for user ${alice.id}`);
    }, 180_000);
});
