import { createServer } from 'http';
import { AddressInfo } from 'net';
import { sign } from 'jsonwebtoken';
import { Rig } from '../../rig';
import { API_KEY, expectLogged, FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * The first conversations, end to end: the packaged zip in the real Apps-Engine (Deno
 * runtime), an in-memory Rocket.Chat behind its bridges, and the fake Hermes over real HTTP.
 */
const ENDPOINT_SECRET = 'endpoint-secret-0123456789abcdef-0123456789';

const env = useRigAndHermes({ endpoint_secret: ENDPOINT_SECRET, hermes_transport: 'chat' });
let hermes: FakeHermes;
let rig: Rig;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
});

/** A loopback port with nothing listening (Deno refuses some low ports outright, so ask the OS for one). */
async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
}

const chatRequests = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions');

describe('a 1:1 DM to the bot', () => {
    it('reaches Hermes once with the key and session headers, and the answer appears in the DM as the bot', async () => {
        const alice = rig.user('alice');
        const dm = rig.direct([alice, rig.bot]);
        const question = await rig.post(alice, dm, 'hello there');

        const reply = await rig.waitForBotReply(dm, { after: question });
        await rig.settle();

        expect(reply.text).toBe('ECHO: hello there | user_turns=1 | prev=-');
        expect(reply.tmid).toBeUndefined();
        const requests = chatRequests();
        expect(requests).toHaveLength(1);
        const [req] = requests;
        expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
        expect(req.headers['x-hermes-session-key']).toBe(`agent:main:rocketchat:dm:${dm.id}`);
        expect(req.headers['x-hermes-session-id']).toMatch(/^rc_[0-9a-f]{32}_g0$/);
        expect(req.headers['idempotency-key']).toBe(question.id);
        const body = req.json as { messages: Array<{ role: string; content: string }>; stream: boolean };
        expect(body.stream).toBe(true);
        expect(body.messages[0].role).toBe('system');
        expect(body.messages[0].content).toContain('Markdown');
        expect(body.messages[1]).toEqual({ role: 'user', content: 'hello there' });
        // Both DM events fired (IPostMessageSentToBot and IPostMessageSent); still one answer.
        expect(rig.botMessages(dm)).toHaveLength(1);
    });

    it('continues the same Hermes session on the next DM', async () => {
        const bob = rig.user('bob');
        const dm = rig.direct([bob, rig.bot]);
        const first = await rig.post(bob, dm, 'my name is Bob');
        await rig.waitForBotReply(dm, { after: first });
        const second = await rig.post(bob, dm, 'what is my name?');
        const reply = await rig.waitForBotReply(dm, { after: second });
        expect(reply.text).toBe('ECHO: what is my name? | user_turns=2 | prev=my name is Bob');
        const [a, b] = chatRequests();
        expect(a.headers['x-hermes-session-id']).toBe(b.headers['x-hermes-session-id']);
    });
});

describe('a channel mention', () => {
    it('answers a message that mentions @<bot username>, in that room', async () => {
        const carol = rig.user('carol');
        const room = rig.room('general', [carol, rig.bot]);
        const question = await rig.post(carol, room, `@${rig.bot.username} what is the status?`);

        const reply = await rig.waitForBotReply(room, { after: question });
        await rig.settle();

        // The first answer message quotes the question and mentions the asker; Hermes got the room block.
        expect(reply.text).toBe(
            `[ ](http://127.0.0.1:3000/channel/general?msg=${question.id}) @carol ECHO: [Rocket.Chat room_id: ${room.id}] [New message] what is the status? | user_turns=1 | prev=-`,
        );
        const requests = chatRequests();
        expect(requests).toHaveLength(1);
        // The scripted model echoes on one line; the block as sent:
        expect((requests[0].json as { messages: Array<{ content: string }> }).messages[1].content).toBe(
            `[Rocket.Chat room_id: ${room.id}]\n\n[New message]\nwhat is the status?`,
        );
        expect(requests[0].headers['x-hermes-session-key']).toBe(`agent:main:rocketchat:channel:${room.id}:${carol.id}`);
        expect(rig.botMessages(room)).toHaveLength(1);
    });

    it('answers a thread mention in the thread', async () => {
        const dave = rig.user('dave');
        const room = rig.room('dev', [dave, rig.bot]);
        const root = await rig.post(dave, room, 'deploy broke');
        const question = await rig.post(dave, room, `@${rig.bot.username} can you look?`, { tmid: root.id });
        const reply = await rig.waitForBotReply(room, { after: question });
        expect(reply.tmid).toBe(root.id);
        expect((chatRequests()[0].json as { messages: Array<{ content: string }> }).messages[1].content.endsWith('\n[New message]\n[dave] can you look?')).toBe(
            true,
        );
    });

    it('ignores @<bot>-beta, messages without a mention, the bot itself, and rooms it is not in', async () => {
        const erin = rig.user('erin');
        const room = rig.room('random', [erin, rig.bot]);
        const outside = rig.room('secret', [erin]);
        await rig.post(erin, room, `@${rig.bot.username}-beta please answer`);
        await rig.post(erin, room, 'no mention here');
        const own = await rig.post(rig.bot, room, `@${rig.bot.username} talking to myself`);
        await rig.post(erin, outside, `@${rig.bot.username} are you here?`);
        // A control turn proves the app was listening the whole time.
        const control = await rig.post(erin, room, `@${rig.bot.username} control`);
        const reply = await rig.waitForBotReply(room, { after: control });
        await rig.settle();

        expect(reply.text).toContain('[New message] control | user_turns=1');
        expect(chatRequests()).toHaveLength(1);
        expect((chatRequests()[0].json as { messages: Array<{ content: string }> }).messages[1].content.endsWith('\n[New message]\ncontrol')).toBe(true);
        expect(rig.botMessages(room).map((m) => m.id)).toEqual([own.id, reply.id]);
        expect(rig.botMessages(outside)).toHaveLength(0);
    });
});

describe('when Hermes fails', () => {
    const cases: Array<[string, () => void, string, string]> = [
        [
            '401',
            () =>
                hermes.script({
                    method: 'POST',
                    path: /^\/v1\/chat\/completions$/,
                    status: 401,
                    body: { error: { message: 'Invalid API key', type: 'invalid_request_error', code: 'invalid_api_key' } },
                }),
            "Hermes rejected the app's credentials — ask an administrator",
            'HTTP 401 invalid_api_key',
        ],
        [
            '500',
            () => hermes.script({ method: 'POST', path: /^\/v1\/chat\/completions$/, status: 500, body: '500 Internal Server Error' }),
            'Hermes ran into an error',
            'HTTP 500',
        ],
    ];

    it.each(cases)('%s: the asker sees one short notice where the answer would have gone; the log names the cause', async (_name, script, notice, cause) => {
        script();
        const frank = rig.user(`frank${_name}`);
        const room = rig.room(`ops${_name}`, [frank, rig.bot]);
        const question = await rig.post(frank, room, `@${rig.bot.username} status?`);
        const reply = await rig.waitForBotReply(room, { after: question });
        await rig.settle();
        expect(reply.text).toContain(notice);
        expect(rig.botMessages(room)).toHaveLength(1);
        expectLogged(rig.logText()).toContain(cause);
        expectLogged(rig.logText()).toContain(question.id);
    });

    it('unreachable: a notice, and the log says the connection failed', async () => {
        const gina = rig.user('gina');
        const dm = rig.direct([gina, rig.bot]);
        await rig.setting('hermes_url', `http://127.0.0.1:${await closedPort()}`);
        try {
            const question = await rig.post(gina, dm, 'anyone there?');
            const reply = await rig.waitForBotReply(dm, { after: question });
            await rig.settle();
            expect(reply.text).toContain('Hermes could not be reached');
            expectLogged(rig.logText()).toMatch(/unreachable: (GET|POST) \/[\w/.]+: .*(refused|ECONNREFUSED)/i);
        } finally {
            await rig.setting('hermes_url', hermes.url);
        }
    });

    it("never writes the API key, the endpoint secret or DM text in the app's own log lines", async () => {
        // The engine's own debug traces echo setting values (PASSWORD ones too) and cannot be
        // silenced by an app; the README says so. The app's lines are the plain strings.
        const log = rig.logText({ appLinesOnly: true });
        expect(log.length).toBeGreaterThan(0);
        expect(log).not.toContain(API_KEY);
        expect(log).not.toContain(ENDPOINT_SECRET);
        expect(log).not.toContain('hello there');
        expect(log).not.toContain('my name is Bob');
    });
});

describe('libraries inside the Deno app runtime', () => {
    // zod parses the settings on every change (the turns above ran on a parsed config);
    // jsonwebtoken verifies the caller token of the ping endpoint, inside the sandbox.
    const ping = (token?: string) =>
        fetch(`${rig.server.apiUrl}/api/apps/public/${rig.appId}/ping`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

    it('jsonwebtoken verifies an HS256 token with our audience inside the app', async () => {
        const token = sign({ sub: 'history-tool' }, ENDPOINT_SECRET, { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 60 });
        const response = await ping(token);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ ok: true, app: 'hermes', version: '0.1.0' });
    });

    it.each([
        ['no token', undefined],
        ['wrong secret', () => sign({}, 'x'.repeat(40), { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 60 })],
        ['wrong audience', () => sign({}, ENDPOINT_SECRET, { algorithm: 'HS256', audience: 'other', expiresIn: 60 })],
        ['expired', () => sign({ exp: Math.floor(Date.now() / 1000) - 10 }, ENDPOINT_SECRET, { algorithm: 'HS256', audience: 'rocketchat-hermes-app' })],
        ['too long-lived', () => sign({}, ENDPOINT_SECRET, { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 3600 })],
        [
            'alg none',
            () =>
                `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ aud: 'rocketchat-hermes-app', exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url')}.`,
        ],
    ] as Array<[string, (() => string) | undefined]>)('refuses %s with 401', async (_name, make) => {
        const response = await ping(make?.());
        expect(response.status).toBe(401);
    });

    it('answers 503 while no endpoint secret is set', async () => {
        await rig.setting('endpoint_secret', '');
        try {
            const token = sign({}, ENDPOINT_SECRET, { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 60 });
            expect((await ping(token)).status).toBe(503);
        } finally {
            await rig.setting('endpoint_secret', ENDPOINT_SECRET);
        }
    });
});
