import { DEFAULT_OPTIONS } from '../../../src/settings/config';
import { HermesClient } from '../../../src/hermes/client';
import { HermesError } from '../../../src/hermes/errors';
import { HermesTransport, HttpRequest, HttpResult, TransportError } from '../../../src/hermes/transport';

const KEY = 'sk-test-0123456789abcdef';
const config = { ...DEFAULT_OPTIONS, hermesUrl: 'http://hermes.test:8642', hermesApiKey: KEY, hermesTimeoutSeconds: 30 };

/** A transport that answers from a script and keeps every request it was given. */
class ScriptedTransport implements HermesTransport {
    public readonly requests: HttpRequest[] = [];
    constructor(private readonly answer: (req: HttpRequest) => HttpResult | Error) {}
    public async send(req: HttpRequest): Promise<HttpResult> {
        this.requests.push(req);
        const a = this.answer(req);
        if (a instanceof Error) {
            throw a;
        }
        return a;
    }
    /** The whole scripted body arrives as one chunk. */
    public async stream(req: HttpRequest, onText: (text: string) => void) {
        const r = await this.send(req);
        const ok = r.status >= 200 && r.status < 300;
        if (ok) {
            onText(r.body);
        }
        return { status: r.status, headers: r.headers, body: ok ? '' : r.body };
    }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): HttpResult => ({
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
});

const turn = { sessionId: 'rc_abc_g0', sessionKey: 'agent:main:rocketchat:dm:R', system: 'sys', user: 'hello', idempotencyKey: 'MSG1' };

describe('HermesClient.chat', () => {
    it('sends one chat completion with the key, session headers and idempotency key', async () => {
        const transport = new ScriptedTransport(() =>
            json(
                200,
                { choices: [{ index: 0, message: { role: 'assistant', content: 'hi!' }, finish_reason: 'stop' }] },
                { 'x-hermes-session-id': 'rc_abc_g0' },
            ),
        );
        const answer = await new HermesClient(transport, config).chat(turn);
        expect(answer).toEqual({ text: 'hi!', sessionId: 'rc_abc_g0', finishReason: 'stop', truncated: false });
        const [req] = transport.requests;
        expect(req.method).toBe('POST');
        expect(req.url).toBe('http://hermes.test:8642/v1/chat/completions');
        expect(req.timeoutMs).toBe(30_000);
        expect(req.headers).toMatchObject({
            Authorization: `Bearer ${KEY}`,
            'X-Hermes-Session-Id': 'rc_abc_g0',
            'X-Hermes-Session-Key': 'agent:main:rocketchat:dm:R',
            'Idempotency-Key': 'MSG1',
            'Content-Type': 'application/json',
        });
        expect(JSON.parse(req.body!)).toEqual({
            model: 'hermes-agent',
            stream: false,
            messages: [
                { role: 'system', content: 'sys' },
                { role: 'user', content: 'hello' },
            ],
        });
    });

    it('returns the rotated session id Hermes answered with', async () => {
        const transport = new ScriptedTransport(() =>
            json(200, { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }] }, { 'x-hermes-session-id': 'rotated-1' }),
        );
        expect((await new HermesClient(transport, config).chat(turn)).sessionId).toBe('rotated-1');
    });

    it.each([
        [
            json(401, { error: { message: 'Invalid API key', type: 'invalid_request_error', code: 'invalid_api_key' } }),
            'unauthorized',
            'HTTP 401 invalid_api_key: Invalid API key',
        ],
        [
            json(429, { error: { message: 'Too many concurrent runs', code: 'rate_limit_exceeded' } }, { 'retry-after': '1' }),
            'rate-limited',
            'HTTP 429 rate_limit_exceeded',
        ],
        [json(503, { error: { message: 'draining', code: 'gateway_draining' } }, { 'retry-after': '1' }), 'draining', 'HTTP 503 gateway_draining'],
        [json(413, { error: { message: 'too large', code: 'body_too_large' } }), 'too-large', 'HTTP 413 body_too_large'],
        [json(502, { error: { message: 'no output', code: 'agent_incomplete' } }), 'incomplete', 'HTTP 502 agent_incomplete'],
        [json(500, '500 Internal Server Error'), 'server-error', 'HTTP 500'],
        [{ status: 302, headers: { location: 'http://evil.test/steal' }, body: '' }, 'redirect', 'redirect to http://evil.test/steal (not followed'],
        [json(200, '{"choices": [{"message": '), 'malformed', 'response is not JSON'],
        [json(200, { choices: [] }), 'malformed', 'without choices[0].message.content'],
        [new TransportError('unreachable', 'ECONNREFUSED connect ECONNREFUSED 127.0.0.1:1'), 'unreachable', 'ECONNREFUSED'],
        [new TransportError('timeout', 'no complete answer within 30 s'), 'timeout', 'within 30 s'],
    ] as Array<[HttpResult | Error, string, string]>)('classifies %#: %s', async (answer, kind, detail) => {
        const client = new HermesClient(new ScriptedTransport(() => answer), config);
        const error = await client.chat(turn).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(HermesError);
        expect((error as HermesError).kind).toBe(kind);
        expect((error as HermesError).message).toContain(detail);
        expect((error as HermesError).message).not.toContain(KEY);
    });

    it('keeps Retry-After for the retry logic', async () => {
        const client = new HermesClient(new ScriptedTransport(() => json(429, { error: { code: 'rate_limit_exceeded' } }, { 'retry-after': '3' })), config);
        const error = (await client.chat(turn).catch((e: unknown) => e)) as HermesError;
        expect(error.retryAfterSeconds).toBe(3);
    });
});

describe('HermesClient.health', () => {
    it('reads status and version', async () => {
        const transport = new ScriptedTransport(() => json(200, { status: 'ok', platform: 'hermes-agent', version: '0.18.2' }));
        expect(await new HermesClient(transport, config).health()).toEqual({ status: 'ok', version: '0.18.2' });
        expect(transport.requests[0].url).toBe('http://hermes.test:8642/health');
    });
});
