/**
 * The fake Hermes under `/p/<profile>/…`: same answers as at the root, and each run / chat completion recorded with
 * the profile it came through and the body's `model`, so a test can say "this turn reached profile X with model Y".
 */
import { DEFAULT_OPTIONS } from '../../../src/settings/config';
import { HermesClient } from '../../../src/hermes/client';
import { FetchTransport } from '../../../src/hermes/fetchTransport';
import { FakeHermes, startFakeHermes } from '../../../fake-hermes';

const KEY = 'k'.repeat(32);
const JSON_AUTH = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };

let hermes: FakeHermes;

beforeAll(async () => {
    hermes = await startFakeHermes({ apiKey: KEY, slowIntervalMs: 1 });
});
afterEach(() => hermes.reset());
afterAll(() => hermes.close());

const post = (path: string, body: unknown, headers: Record<string, string> = JSON_AUTH) =>
    fetch(`${hermes.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
const get = (path: string, headers: Record<string, string> = JSON_AUTH) => fetch(`${hermes.url}${path}`, { headers });

/** Status, content type and body: what must match between the root and a profile. */
async function shape(res: Response) {
    return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

describe('fake Hermes profiles', () => {
    it('records the profile and model of a run posted through /p/research', async () => {
        const res = await post('/p/research/v1/runs', { model: 'fast', input: 'hello', session_id: 's1' });
        expect(res.status).toBe(202);
        const { run_id: runId } = (await res.json()) as { run_id: string };
        expect(hermes.turns).toEqual([{ kind: 'run', profile: 'research', model: 'fast', sessionId: 's1', runId, at: expect.any(Number) }]);
        expect(hermes.requests.map((r) => [r.method, r.path, r.profile, r.url])).toEqual([['POST', '/v1/runs', 'research', '/p/research/v1/runs']]);

        // The run's other endpoints answer under the same prefix.
        const done = await hermes.waitForRunStatus(runId, 'completed');
        expect(done.output).toBe('ECHO: hello | user_turns=1 | prev=-');
        const status = await get(`/p/research/v1/runs/${runId}`);
        expect([status.status, ((await status.json()) as { status: string }).status]).toEqual([200, 'completed']);
    });

    it('records chat completions at the root and under a profile, model undefined when the body has none', async () => {
        const messages = [{ role: 'user', content: 'hi' }];
        expect((await post('/v1/chat/completions', { model: 'hermes-agent', messages }, { ...JSON_AUTH, 'X-Hermes-Session-Id': 'a' })).status).toBe(200);
        expect((await post('/p/ops/v1/chat/completions', { messages }, { ...JSON_AUTH, 'X-Hermes-Session-Id': 'b' })).status).toBe(200);
        expect(hermes.turns).toEqual([
            { kind: 'chat', profile: undefined, model: 'hermes-agent', sessionId: 'a' },
            { kind: 'chat', profile: 'ops', model: undefined, sessionId: 'b' },
        ]);
    });

    it('does not record refused turns', async () => {
        expect((await post('/p/research/v1/runs', { model: 'fast' })).status).toBe(400);
        expect((await post('/p/research/v1/chat/completions', { model: 'fast', messages: [] })).status).toBe(400);
        expect(hermes.turns).toEqual([]);
    });

    it('answers unknown paths, wrong methods and missing keys under /p/ exactly as at the root', async () => {
        const pairs: Array<[Promise<Response>, Promise<Response>]> = [
            [get('/v1/nope'), get('/p/research/v1/nope')],
            [get('/v1/runs'), get('/p/research/v1/runs')],
            [get('/v1/models', {}), get('/p/research/v1/models', {})],
        ];
        const seen = [];
        for (const [root, profiled] of pairs) {
            seen.push([await shape(await root), await shape(await profiled)]);
        }
        expect(seen.map(([root]) => [root.status, root.type])).toEqual([
            [404, 'text/plain; charset=utf-8'],
            [405, 'text/plain; charset=utf-8'],
            [401, 'application/json; charset=utf-8'],
        ]);
        expect(seen.map(([root]) => root.body)).toEqual([
            '404: Not Found',
            '405: Method Not Allowed',
            '{"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}',
        ]);
        for (const [root, profiled] of seen) {
            expect(profiled).toEqual(root);
        }
    });

    it('serves health only at the root', async () => {
        expect((await get('/health', {})).status).toBe(200);
        expect(await shape(await get('/p/research/health', {}))).toEqual({ status: 404, type: 'text/plain; charset=utf-8', body: '404: Not Found' });
        expect((await get('/p/research/v1/health', {})).status).toBe(404);
        expect([(await get('/p/research')).status, (await get('/p/research/')).status, (await get('/p//v1/models')).status]).toEqual([404, 404, 404]);
    });

    it('applies scripted rules by route path, and a rule can pick a profile', async () => {
        hermes.script({ path: '/v1/runs', match: (r) => r.profile === 'ops', error: 'gateway_draining' });
        expect((await post('/p/research/v1/runs', { input: 'x' })).status).toBe(202);
        expect((await post('/v1/runs', { input: 'x' })).status).toBe(202);
        expect((await post('/p/ops/v1/runs', { input: 'x' })).status).toBe(503);
        expect(hermes.turns.map((t) => t.profile)).toEqual(['research', undefined]);
    });

    it('clears turns on reset', async () => {
        await post('/p/research/v1/runs', { input: 'x' });
        expect(hermes.turns).toHaveLength(1);
        hermes.reset();
        expect(hermes.turns).toEqual([]);
    });

    it('sees the route of a real HermesClient turn: profile, model and every run endpoint under the prefix', async () => {
        const config = { ...DEFAULT_OPTIONS, hermesUrl: hermes.url, hermesApiKey: KEY, hermesTimeoutSeconds: 5 };
        const client = new HermesClient(new FetchTransport(), config).withRoute({ profile: 'research', model: 'fast' });
        const runId = await client.createRun({ input: 'hello', instructions: 'sys', sessionId: 's9', sessionKey: 'k9', idempotencyKey: 'M9' });
        const events: string[] = [];
        await client.runEvents(runId, (e) => events.push(e.event));
        expect((await client.runStatus(runId)).status).toBe('completed');
        await client.chat({ sessionId: 's9', sessionKey: 'k9', system: 'sys', user: 'again', idempotencyKey: 'M10' });
        expect(events.at(-1)).toBe('run.completed');
        expect(hermes.turns).toEqual([
            { kind: 'run', profile: 'research', model: 'fast', sessionId: 's9', runId, at: expect.any(Number) },
            { kind: 'chat', profile: 'research', model: 'fast', sessionId: 's9' },
        ]);
        expect(hermes.requests.map((r) => `${r.method} ${r.profile} ${r.path}`)).toEqual([
            'POST research /v1/runs',
            `GET research /v1/runs/${runId}/events`,
            `GET research /v1/runs/${runId}`,
            'POST research /v1/chat/completions',
        ]);
    });
});
