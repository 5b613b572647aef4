/**
 * HermesClient.withRoute: one turn sent to a Hermes profile (`/p/<profile>/…`) with a `model_routes` alias as the body's
 * `model`, over the same transport. Every request but `/health` carries the prefix; without a route nothing changes.
 */
import { DEFAULT_OPTIONS } from '../../../src/settings/config';
import { HermesClient } from '../../../src/hermes/client';
import { HermesError } from '../../../src/hermes/errors';
import { HermesTransport, HttpRequest, HttpResult, TransportError } from '../../../src/hermes/transport';

const BASE = 'http://hermes.test:8642';
const config = { ...DEFAULT_OPTIONS, hermesUrl: BASE, hermesApiKey: 'sk-test-0123456789abcdef', hermesTimeoutSeconds: 30 };

const json = (body: unknown): HttpResult => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Answers each Hermes endpoint with a minimal valid body (whatever the prefix) and keeps every request. */
function answer(req: HttpRequest): HttpResult {
    const path = new URL(req.url).pathname.replace(/^\/p\/[^/]+/, '');
    if (path === '/health') return json({ status: 'ok', version: '0.18.2' });
    if (path === '/v1/capabilities') return json({ object: 'hermes.api_server.capabilities', features: {} });
    if (path === '/v1/chat/completions' && req.body?.includes('"stream":true')) {
        return { status: 200, headers: {}, body: 'data: {"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' };
    }
    if (path === '/v1/chat/completions') return json({ choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }] });
    if (path === '/v1/runs') return json({ run_id: 'run_1', status: 'started' });
    if (path === '/v1/runs/run_1') return json({ status: 'running' });
    if (path === '/v1/runs/run_1/events') return { status: 200, headers: {}, body: 'data: {"event":"run.completed"}\n\n' };
    if (path.startsWith('/api/sessions/')) return json({ data: [] });
    return json({});
}

class RecordingTransport implements HermesTransport {
    public readonly requests: HttpRequest[] = [];
    public failWith?: Error;
    public async send(req: HttpRequest): Promise<HttpResult> {
        this.requests.push(req);
        if (this.failWith) throw this.failWith;
        return answer(req);
    }
    public async stream(req: HttpRequest, onText: (text: string) => void) {
        const r = await this.send(req);
        onText(r.body);
        return { status: r.status, headers: r.headers, body: '' };
    }
    /** "METHOD path" of each request, without the base URL. */
    public lines(): string[] {
        return this.requests.map((r) => `${r.method} ${r.url.slice(BASE.length)}`);
    }
    public models(): unknown[] {
        return this.requests.filter((r) => r.body !== undefined).map((r) => (JSON.parse(r.body as string) as { model?: unknown }).model);
    }
}

const turn = { sessionId: 'rc_abc_g0', sessionKey: 'agent:main:rocketchat:dm:R', system: 'sys', user: 'hello', idempotencyKey: 'MSG1' };
const run = { input: 'hello', instructions: 'sys', sessionId: 'rc_abc_g0', sessionKey: 'agent:main:rocketchat:dm:R', idempotencyKey: 'MSG1' };

/** One call of every client method that talks to Hermes. */
async function everyCall(client: HermesClient): Promise<void> {
    await client.chat(turn);
    await client.chatStream(turn, () => undefined);
    await client.createRun(run);
    await client.runStatus('run_1');
    await client.runEvents('run_1', () => undefined);
    await client.approve('run_1', 'once');
    await client.stopRun('run_1');
    await client.sessionMessages('rc_abc_g0');
    await client.capabilities();
    await client.health();
}

const ENDPOINTS = [
    'POST /v1/chat/completions',
    'POST /v1/chat/completions',
    'POST /v1/runs',
    'GET /v1/runs/run_1',
    'GET /v1/runs/run_1/events',
    'POST /v1/runs/run_1/approval',
    'POST /v1/runs/run_1/stop',
    'GET /api/sessions/rc_abc_g0/messages',
];

describe('HermesClient.withRoute', () => {
    it('without a route: every request on the root, model hermes-agent', async () => {
        const transport = new RecordingTransport();
        await everyCall(new HermesClient(transport, config));
        expect(transport.lines()).toEqual([...ENDPOINTS, 'GET /health', 'GET /v1/capabilities', 'GET /health']);
        // chat, chatStream, createRun, approve carry a body; approve has no model.
        expect(transport.models()).toEqual(['hermes-agent', 'hermes-agent', 'hermes-agent', undefined]);
    });

    it('with a profile and a model: every request but /health under /p/<profile>, the alias as model', async () => {
        const transport = new RecordingTransport();
        await everyCall(new HermesClient(transport, config).withRoute({ profile: 'research', model: 'fast' }));
        expect(transport.lines()).toEqual([
            ...ENDPOINTS.map((line) => line.replace(' /', ' /p/research/')),
            'GET /health',
            'GET /p/research/v1/capabilities',
            'GET /health',
        ]);
        expect(transport.models()).toEqual(['fast', 'fast', 'fast', undefined]);
        expect(transport.requests.map((r) => r.headers.Authorization)).toEqual(transport.requests.map(() => 'Bearer sk-test-0123456789abcdef'));
    });

    it('a profile alone keeps hermes-agent; a model alone keeps the root', async () => {
        const profiled = new RecordingTransport();
        const client = new HermesClient(profiled, config).withRoute({ profile: 'ops' });
        await client.createRun(run);
        await client.chat(turn);
        expect(profiled.lines()).toEqual(['POST /p/ops/v1/runs', 'POST /p/ops/v1/chat/completions']);
        expect(profiled.models()).toEqual(['hermes-agent', 'hermes-agent']);

        const aliased = new RecordingTransport();
        const other = new HermesClient(aliased, config).withRoute({ model: 'anthropic/claude:fast' });
        await other.createRun(run);
        await other.chat(turn);
        expect(aliased.lines()).toEqual(['POST /v1/runs', 'POST /v1/chat/completions']);
        expect(aliased.models()).toEqual(['anthropic/claude:fast', 'anthropic/claude:fast']);
    });

    it('empty fields mean no route', async () => {
        const transport = new RecordingTransport();
        await new HermesClient(transport, config).withRoute({ profile: '', model: '' }).createRun(run);
        expect(transport.lines()).toEqual(['POST /v1/runs']);
        expect(transport.models()).toEqual(['hermes-agent']);
    });

    it('encodes the profile as one path segment', async () => {
        const transport = new RecordingTransport();
        await new HermesClient(transport, config).withRoute({ profile: '../a b/c' }).stopRun('run_1');
        expect(transport.lines()).toEqual(['POST /p/..%2Fa%20b%2Fc/v1/runs/run_1/stop']);
    });

    it('leaves the original client unrouted, and a new route replaces the old one', async () => {
        const transport = new RecordingTransport();
        const root = new HermesClient(transport, config);
        const routed = root.withRoute({ profile: 'research', model: 'fast' });
        await root.createRun(run);
        await routed.withRoute({ model: 'slow' }).createRun(run);
        await routed.createRun(run);
        expect(transport.lines()).toEqual(['POST /v1/runs', 'POST /v1/runs', 'POST /p/research/v1/runs']);
        expect(transport.models()).toEqual(['hermes-agent', 'slow', 'fast']);
    });

    it('names the profiled path in transport errors, for the log', async () => {
        const transport = new RecordingTransport();
        transport.failWith = new TransportError('unreachable', 'ECONNREFUSED');
        const client = new HermesClient(transport, config).withRoute({ profile: 'research' });
        const sent = (await client.createRun(run).catch((e: unknown) => e)) as HermesError;
        const streamed = (await client.runEvents('run_1', () => undefined).catch((e: unknown) => e)) as HermesError;
        expect([sent.kind, sent.detail]).toEqual(['unreachable', 'POST /p/research/v1/runs: ECONNREFUSED']);
        expect([streamed.kind, streamed.detail]).toEqual(['unreachable', 'GET /p/research/v1/runs/run_1/events: ECONNREFUSED']);
    });
});
