/**
 * The fake Hermes must answer exactly like the real Hermes v0.18.2: each test
 * replays a recorded request from test/fixtures/hermes-transcripts (verbatim exchanges with a real Hermes v0.18.2, copied into the project) against the fake
 * and compares status, headers and body byte for byte after normalising the
 * volatile parts (ids, timestamps, durations, Date).
 */
import * as fs from 'fs';
import * as http from 'http';
import * as path from 'path';
import { FakeHermes, pyFloat, pyJson, startFakeHermes } from '../../../fake-hermes';

const TRANSCRIPTS = path.resolve(__dirname, '../../fixtures/hermes-transcripts');
const KEY = 'k'.repeat(32);
const AUTH = { Authorization: `Bearer ${KEY}` };
const JSON_AUTH = { ...AUTH, 'Content-Type': 'application/json' };

// ---------------------------------------------------------------- transcript parsing

interface Recorded {
    status: number;
    reason: string;
    headers: Array<[string, string]>;
    body: string;
}
interface Exchange {
    method: string;
    path: string;
    requestHeaders: Array<[string, string]>;
    requestBody: string;
    response: Recorded;
}

function splitHead(part: string): { lines: string[]; rest: Buffer } {
    const buf = Buffer.from(part, 'utf8');
    const end = buf.indexOf('\r\n\r\n');
    return { lines: buf.subarray(0, end).toString('utf8').split('\r\n'), rest: buf.subarray(end + 4) };
}

function headerList(lines: string[]): Array<[string, string]> {
    return lines.map((line) => {
        const i = line.indexOf(':');
        return [line.slice(0, i), line.slice(i + 1).trim()] as [string, string];
    });
}

function headerValue(headers: Array<[string, string]>, name: string): string | undefined {
    return headers.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}

function transcript(name: string): Exchange {
    const file = fs.readdirSync(TRANSCRIPTS).find((f) => f.startsWith(`${name}_`));
    if (!file) throw new Error(`no transcript ${name} in ${TRANSCRIPTS}`);
    const text = fs.readFileSync(path.join(TRANSCRIPTS, file), 'utf8');
    const [reqPart, respPart] = text.split('=== REQUEST ===\n')[1].split('=== RESPONSE ===\n');

    const req = splitHead(reqPart);
    const [method, target] = req.lines[0].split(' ');
    const requestHeaders = headerList(req.lines.slice(1));
    const reqLength = Number(headerValue(requestHeaders, 'Content-Length') ?? 0);

    const resp = splitHead(respPart);
    const statusLine = resp.lines[0].match(/^HTTP\/1\.1 (\d+) (.*)$/);
    if (!statusLine) throw new Error(`bad status line in ${file}`);
    const headers = headerList(resp.lines.slice(1));
    const length = headerValue(headers, 'Content-Length');
    // Fixed-length bodies are cut at Content-Length; chunked (SSE) bodies run to
    // the end of the file, which adds one final newline.
    const body = length !== undefined ? resp.rest.subarray(0, Number(length)).toString('utf8') : resp.rest.toString('utf8').replace(/\n$/, '');
    return {
        method,
        path: target,
        requestHeaders,
        requestBody: req.rest.subarray(0, reqLength).toString('utf8'),
        response: { status: Number(statusLine[1]), reason: statusLine[2], headers, body },
    };
}

// ---------------------------------------------------------------- normalising

/** Replace volatile values; ids become <kindN> in order of first appearance. */
function normalise(text: string): string {
    const maps = new Map<string, Map<string, string>>();
    const label = (kind: string) => (value: string) => {
        const m = maps.get(kind) ?? new Map<string, string>();
        maps.set(kind, m);
        if (!m.has(value)) m.set(value, `<${kind}${m.size + 1}>`);
        return m.get(value) as string;
    };
    return text
        .replace(/run_[0-9a-f]{32}/g, label('run'))
        .replace(/chatcmpl-[0-9a-f]{29}/g, label('chatcmpl'))
        .replace(/call_[0-9a-f]{10}/g, label('call'))
        .replace(/"(timestamp|created_at|updated_at)": \d+(\.\d+)?/g, '"$1": <T>')
        .replace(/"created": \d+/g, '"created": <T>')
        .replace(/"duration": \d+(\.\d+)?/g, '"duration": <D>')
        .replace(/"updated_at": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00"/g, '"updated_at": "<ISO>"')
        .replace(/"pid": \d+/g, '"pid": <PID>')
        .replace(/"id": \d+/g, label('rowid'));
}

const VOLATILE_HEADERS = new Set(['date', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

function comparableHeaders(entries: Iterable<[string, string]>): Array<[string, string]> {
    return [...entries]
        .map(([k, v]) => [k.toLowerCase(), v] as [string, string])
        .filter(([k]) => !VOLATILE_HEADERS.has(k))
        .sort(([a], [b]) => a.localeCompare(b));
}

// ---------------------------------------------------------------- replaying

interface Got {
    status: number;
    statusText: string;
    headers: Headers;
    body: string;
}

let hermes: FakeHermes;

async function replay(ex: Exchange, runIds: Record<string, string> = {}): Promise<Got> {
    let target = ex.path;
    for (const [recorded, actual] of Object.entries(runIds)) target = target.split(recorded).join(actual);
    const headers: Record<string, string> = {};
    for (const [k, v] of ex.requestHeaders) {
        if (['host', 'user-agent', 'accept', 'content-length'].includes(k.toLowerCase())) continue;
        headers[k] = v.replace('<API_SERVER_KEY>', KEY);
    }
    const res = await fetch(hermes.url + target, {
        method: ex.method,
        headers,
        body: ex.method === 'GET' ? undefined : ex.requestBody,
    });
    return { status: res.status, statusText: res.statusText, headers: res.headers, body: await res.text() };
}

/** Status, reason, every non-volatile header and the normalised body must equal the recording. */
function expectLike(got: Got, ex: Exchange, fixBody: (s: string) => string = (s) => s): void {
    expect(got.status).toBe(ex.response.status);
    expect(got.statusText).toBe(ex.response.reason);
    const gotHeaders: Array<[string, string]> = [];
    got.headers.forEach((value, name) => gotHeaders.push([name, value]));
    expect(comparableHeaders(gotHeaders)).toEqual(comparableHeaders(ex.response.headers));
    if (headerValue(ex.response.headers, 'Transfer-Encoding')) {
        expect(got.headers.get('transfer-encoding')).toBe('chunked');
    } else {
        expect(got.headers.get('content-length')).toBe(String(Buffer.byteLength(got.body)));
    }
    expect(normalise(fixBody(got.body))).toBe(normalise(ex.response.body));
}

async function replayLike(name: string, runIds: Record<string, string> = {}): Promise<Got> {
    const ex = transcript(name);
    const got = await replay(ex, runIds);
    expectLike(got, ex);
    return got;
}

const recordedRunId = (name: string): string => {
    const m = transcript(name).response.body.match(/run_[0-9a-f]{32}/);
    if (!m) throw new Error(`no run id in ${name}`);
    return m[0];
};

async function post(pathname: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(hermes.url + pathname, {
        method: 'POST',
        headers: { ...JSON_AUTH, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
    });
}

async function get(pathname: string, headers: Record<string, string> = AUTH): Promise<Response> {
    return fetch(hermes.url + pathname, { headers });
}

beforeAll(async () => {
    hermes = await startFakeHermes({ apiKey: KEY, slowIntervalMs: 20, runEventsWaitMs: 50 });
});

afterAll(async () => {
    await hermes.close();
});

// ================================================================ pyJson

describe('pyJson', () => {
    test('writes Python json.dumps output', () => {
        expect(pyJson({ a: 1, b: [true, null, 'x'], c: { d: 1.5 } })).toBe('{"a": 1, "b": [true, null, "x"], "c": {"d": 1.5}}');
        expect(pyJson('caf\u00e9 \u{1F4BB} "q" \\ \n\t\u0001\u007f')).toBe('"caf\\u00e9 \\ud83d\\udcbb \\"q\\" \\\\ \\n\\t\\u0001\\u007f"');
        expect(pyJson([pyFloat(3), pyFloat(0), 1796064475.326999, 0.00001, 1e16, 1e21])).toBe(
            '[3.0, 0.0, 1796064475.326999, 1e-05, 10000000000000000, 1000000000000000000000]',
        );
        expect(pyJson([pyFloat(1e16), pyFloat(1.5e-7), {}, []])).toBe('[1e+16, 1.5e-07, {}, []]');
    });
});

// ================================================================ transcripts

describe('replays of the real Hermes v0.18.2 transcripts', () => {
    beforeAll(() => hermes.reset());

    test('01, 02 health (no auth needed), 34 health/detailed', async () => {
        await replayLike('01');
        await replayLike('02');
        await replayLike('34');
    });

    test('03 capabilities byte for byte, 04 without key → 401, 05 models', async () => {
        const got = await replayLike('03');
        expect(got.body).toBe(transcript('03').response.body);
        await replayLike('04');
        await replayLike('05');
    });

    test('06, 06b chat completions without / with a wrong key → 401 envelope without "param"', async () => {
        await replayLike('06');
        await replayLike('06b');
    });

    test('07 no session id: history from the body, derived api-<sha256> session id', async () => {
        const got = await replayLike('07');
        expect(got.headers.get('x-hermes-session-id')).toBe('api-90a749c62b54e74c');
    });

    test('08 → 09 (stream) → 10 (body history ignored) → 32 session messages', async () => {
        await replayLike('08');
        await replayLike('09');
        await replayLike('10');
        await replayLike('32');
        expect(hermes.sessions.get('tx-session-1796064465')?.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    });

    test('11 streamed RUN_TOOL with hermes.tool.progress frames, 31 non-streamed', async () => {
        await replayLike('11');
        await replayLike('31');
    });

    test('12 → 13 → 14 simple run; 35 → 36 same session id sees no history', async () => {
        const runId = JSON.parse((await replayLike('12')).body).run_id as string;
        await hermes.waitForRunStatus(runId, 'completed');
        await replayLike('13', { [recordedRunId('12')]: runId });
        await replayLike('14', { [recordedRunId('12')]: runId });

        const second = JSON.parse((await replayLike('35')).body).run_id as string;
        await hermes.waitForRunStatus(second, 'completed');
        await replayLike('36', { [recordedRunId('35')]: second });
        // ...but both runs were persisted under the label.
        expect(hermes.sessions.get('tx-run-session-1')?.map((m) => m.content)).toEqual([
            'hello runs',
            'ECHO: hello runs | user_turns=1 | prev=-',
            'second run same session',
            'ECHO: second run same session | user_turns=1 | prev=-',
        ]);
    });

    test('15 → 16 → 17 RUN_TOOL run', async () => {
        const runId = JSON.parse((await replayLike('15')).body).run_id as string;
        const ids = { [recordedRunId('15')]: runId };
        await replayLike('16', ids); // subscribed while running, as recorded
        await hermes.waitForRunStatus(runId, 'completed');
        await replayLike('17', ids);
    });

    test('18 → 19 → 20a → 20 → 21 DANGER approved once, then 23b approval after completion', async () => {
        const runId = JSON.parse((await replayLike('18')).body).run_id as string;
        const ids = { [recordedRunId('18')]: runId };
        await hermes.waitForRunStatus(runId, 'waiting_for_approval');
        await replayLike('19', ids);
        await replayLike('20a', ids);
        await replayLike('20', ids);
        await hermes.waitForRunStatus(runId, 'completed');
        await replayLike('21', ids);
        await replayLike('23b', { [recordedRunId('22')]: runId });
    });

    test('22 → 23 → 24 DANGER denied (tool result cut at 200 characters)', async () => {
        const runId = JSON.parse((await replayLike('22')).body).run_id as string;
        const ids = { [recordedRunId('22')]: runId };
        await hermes.waitForRunStatus(runId, 'waiting_for_approval');
        await replayLike('23', ids);
        await hermes.waitForRunStatus(runId, 'completed');
        await replayLike('24', ids);
    });

    test('25 → 26 → 26b → 27 → 28a → 28b → 29 SLOW run stopped after four words', async () => {
        hermes.configure({ slowIntervalMs: 150 });
        try {
            const runId = JSON.parse((await replayLike('25')).body).run_id as string;
            const ids = { [recordedRunId('25')]: runId };
            await hermes.waitForRunStatus(runId, 'running');
            await replayLike('26', ids);
            await replayLike('26b', ids);
            await hermes.waitForRunEvent(runId, (_e, all) => all.filter((e) => e.event === 'message.delta').length === 4);
            await replayLike('27', ids);
            await replayLike('28a', ids);
            await hermes.waitForRunStatus(runId, 'cancelled');
            await replayLike('28b', ids);
            await replayLike('29', ids);
        } finally {
            hermes.configure({ slowIntervalMs: 20 });
        }
    });

    test('30 DANGER in chat completions is not run (recorded home path had 16 characters)', async () => {
        hermes.configure({ dangerDir: '/tmp/hermes-home/scratch' });
        try {
            const ex = transcript('30');
            expectLike(await replay(ex), ex, (body) => body.split('/tmp/hermes-home').join('<HERMES_TEST_HOME>'));
        } finally {
            hermes.configure({ dangerDir: '<HERMES_TEST_HOME>/scratch' });
        }
    });

    test('33 unknown run → 404 run_not_found', async () => {
        await replayLike('33');
    });

    test('header order is aiohttp order (JSON and SSE)', async () => {
        const rawHeaders = (target: string, method = 'GET', body?: string, extra: Record<string, string> = {}) =>
            new Promise<string[]>((resolve, reject) => {
                const req = http.request(hermes.url + target, { method, headers: { ...JSON_AUTH, ...extra } }, (res) => {
                    res.resume();
                    res.on('end', () => {
                        const names: string[] = [];
                        for (let i = 0; i < res.rawHeaders.length; i += 2) names.push(res.rawHeaders[i]);
                        resolve(names.filter((n) => n !== 'Connection' && n !== 'Keep-Alive'));
                    });
                });
                req.on('error', reject);
                req.end(body);
            });
        const recordedOrder = (name: string) => transcript(name).response.headers.map(([k]) => k);
        const ex07 = transcript('07');
        expect(await rawHeaders('/v1/chat/completions', 'POST', ex07.requestBody)).toEqual(recordedOrder('07'));
        const ex09 = transcript('09');
        expect(
            await rawHeaders('/v1/chat/completions', 'POST', ex09.requestBody, {
                'X-Hermes-Session-Id': 'order-check',
                'X-Hermes-Session-Key': 'agent:main:webui:dm:user-42',
            }),
        ).toEqual(recordedOrder('09'));
    });
});

// ================================================================ behaviour beyond the transcripts

describe('scripted errors and other behaviour', () => {
    beforeEach(() => hermes.reset());

    const chatBody = (content: string, extra: Record<string, unknown> = {}) => ({
        model: 'hermes-agent',
        messages: [{ role: 'user', content }],
        ...extra,
    });

    test('413 when the body exceeds the limit, before auth', async () => {
        hermes.configure({ maxBodyBytes: 1000 });
        try {
            const res = await fetch(`${hermes.url}/v1/chat/completions`, { method: 'POST', body: 'x'.repeat(2000) });
            expect(res.status).toBe(413);
            expect(res.statusText).toBe('Request Entity Too Large');
            expect(await res.text()).toBe(
                '{"error": {"message": "Request body too large.", "type": "invalid_request_error", "param": null, "code": "body_too_large"}}',
            );
        } finally {
            hermes.configure({ maxBodyBytes: 10_000_000 });
        }
    });

    test('429 with Retry-After once maxConcurrentRuns event buffers are open; reading events frees a slot', async () => {
        hermes.configure({ maxConcurrentRuns: 2 });
        try {
            const a = (await (await post('/v1/runs', { input: 'one' })).json()) as { run_id: string };
            await post('/v1/runs', { input: 'two' });
            const refused = await post('/v1/runs', { input: 'three' });
            expect(refused.status).toBe(429);
            expect(refused.headers.get('retry-after')).toBe('1');
            expect(await refused.text()).toBe(
                '{"error": {"message": "Too many concurrent runs (max 2)", "type": "rate_limit_error", "param": null, "code": "rate_limit_exceeded"}}',
            );
            await hermes.waitForRunStatus(a.run_id, 'completed');
            await (await get(`/v1/runs/${a.run_id}/events`)).text();
            expect((await post('/v1/runs', { input: 'four' })).status).toBe(202);
            // The buffer was drained by the first subscriber: a second one gets 404.
            expect((await get(`/v1/runs/${a.run_id}/events`)).status).toBe(404);
        } finally {
            hermes.configure({ maxConcurrentRuns: 10 });
        }
    });

    test('draining, 500, 302, malformed JSON, delay, connection reset', async () => {
        hermes.setDraining(true);
        const draining = await post('/v1/chat/completions', chatBody('hi'));
        expect(draining.status).toBe(503);
        expect(draining.headers.get('retry-after')).toBe('1');
        expect(await draining.text()).toBe(
            '{"error": {"message": "Gateway is draining existing work; retry shortly.", "type": "invalid_request_error", "param": null, "code": "gateway_draining"}}',
        );
        hermes.setDraining(false);

        hermes.script({ method: 'POST', path: '/v1/chat/completions', error: 'internal_error', errorMessage: 'boom' });
        const failed = await post('/v1/chat/completions', chatBody('hi'));
        expect(failed.status).toBe(500);
        expect(await failed.json()).toEqual({
            error: { message: 'Internal server error: boom', type: 'server_error', param: null, code: null },
        });

        hermes.script({ path: '/v1/models', redirect: 'http://127.0.0.1:9/elsewhere' });
        const moved = await fetch(`${hermes.url}/v1/models`, { headers: AUTH, redirect: 'manual' });
        expect(moved.status).toBe(302);
        expect(moved.headers.get('location')).toBe('http://127.0.0.1:9/elsewhere');

        hermes.script({ path: '/v1/chat/completions', malformedJson: true });
        const broken = await post('/v1/chat/completions', chatBody('hi'));
        expect(broken.status).toBe(200);
        await expect(broken.json()).rejects.toThrow();

        hermes.script({ path: '/health', delayMs: 80 });
        const started = Date.now();
        expect((await fetch(`${hermes.url}/health`)).status).toBe(200);
        expect(Date.now() - started).toBeGreaterThanOrEqual(70);

        hermes.script({ path: /^\/v1\/chat\//, destroy: true });
        await expect(post('/v1/chat/completions', chatBody('hi'))).rejects.toThrow();
        expect(hermes.pendingRules()).toEqual([]);

        // Mid-stream drop: the frames arrive, then the body is cut.
        hermes.script({ path: '/v1/chat/completions', sse: ['data: {"partial": true}\n\n'], destroy: true });
        const cut = await post('/v1/chat/completions', chatBody('hi', { stream: true }));
        expect(cut.headers.get('content-type')).toBe('text/event-stream');
        await expect(cut.text()).rejects.toThrow();
    });

    test('finish_reason length / error and 502 agent_incomplete carry the hermes block and headers', async () => {
        hermes.script({ path: '/v1/chat/completions', finishReason: 'length', reply: 'partial an' });
        const partial = await post('/v1/chat/completions', chatBody('hi'), { 'X-Hermes-Session-Id': 'p1' });
        expect(partial.status).toBe(200);
        expect(partial.headers.get('x-hermes-completed')).toBe('false');
        expect(partial.headers.get('x-hermes-partial')).toBe('true');
        expect(partial.headers.get('x-hermes-error')).toBe('Response truncated: the model hit its output token limit');
        const body = (await partial.json()) as Record<string, any>;
        expect(body.choices[0]).toEqual({
            index: 0,
            message: { role: 'assistant', content: 'partial an' },
            finish_reason: 'length',
        });
        expect(body.hermes).toEqual({
            completed: false,
            partial: true,
            failed: false,
            error: 'Response truncated: the model hit its output token limit',
            error_code: 'output_truncated',
        });

        hermes.script({ path: '/v1/chat/completions', error: 'agent_incomplete', errorMessage: 'provider down' });
        const incomplete = await post('/v1/chat/completions', chatBody('hi'), { 'X-Hermes-Session-Id': 'p1' });
        expect(incomplete.status).toBe(502);
        expect(incomplete.headers.get('x-hermes-session-id')).toBe('p1');
        expect(incomplete.headers.get('x-hermes-partial')).toBe('false');
        expect(await incomplete.text()).toBe(
            '{"error": {"message": "provider down", "type": "server_error", "param": null, "code": "agent_incomplete", ' +
                '"hermes": {"completed": false, "partial": false, "failed": true}}}',
        );

        hermes.script({ path: '/v1/runs', finishReason: 'error', errorMessage: 'model exploded' });
        const run = (await (await post('/v1/runs', { input: 'hi' })).json()) as { run_id: string };
        const status = await hermes.waitForRunStatus(run.run_id, 'failed');
        expect(status.error).toBe('model exploded');
        expect(await (await get(`/v1/runs/${run.run_id}/events`)).text()).toContain('"event": "run.failed"');
    });

    test('rotated session: new X-Hermes-Session-Id, the transcript continues under it', async () => {
        await post('/v1/chat/completions', chatBody('first'), { 'X-Hermes-Session-Id': 'old-id' });
        hermes.script({ path: '/v1/chat/completions', rotateSessionTo: 'new-id' });
        const rotated = await post('/v1/chat/completions', chatBody('second'), { 'X-Hermes-Session-Id': 'old-id' });
        expect(rotated.headers.get('x-hermes-session-id')).toBe('new-id');
        const next = await post('/v1/chat/completions', chatBody('third'), { 'X-Hermes-Session-Id': 'new-id' });
        expect(((await next.json()) as any).choices[0].message.content).toBe('ECHO: third | user_turns=3 | prev=second');
    });

    test('chat Idempotency-Key: same key + body → same result without running again; setReply', async () => {
        let calls = 0;
        hermes.setReply((msg, ctx) => `reply ${++calls} to ${msg} (turn ${ctx.userTurns}, ${ctx.endpoint})`);
        const send = (content: string) => post('/v1/chat/completions', chatBody(content), { 'Idempotency-Key': 'idem-1', 'X-Hermes-Session-Id': 'i1' });
        const first = (await (await send('hello')).json()) as any;
        const again = (await (await send('hello')).json()) as any;
        expect(first.choices[0].message.content).toBe('reply 1 to hello (turn 1, chat)');
        expect(again.choices).toEqual(first.choices);
        expect(again.id).not.toBe(first.id); // Hermes caches the agent result, not the envelope
        expect(hermes.sessions.get('i1')).toHaveLength(2);
        const other = (await (await send('different')).json()) as any;
        expect(other.choices[0].message.content).toBe('reply 2 to different (turn 2, chat)');
    });

    test('runs use conversation_history and persist only their new messages', async () => {
        const res = await post('/v1/runs', {
            input: 'now',
            session_id: 'ch1',
            conversation_history: [
                { role: 'user', content: 'earlier' },
                { role: 'assistant', content: 'ok' },
            ],
        });
        const { run_id } = (await res.json()) as { run_id: string };
        const done = await hermes.waitForRunStatus(run_id, 'completed');
        expect(done.output).toBe('ECHO: now | user_turns=2 | prev=earlier');
        expect(hermes.sessions.get('ch1')?.map((m) => m.content)).toEqual(['now', 'ECHO: now | user_turns=2 | prev=earlier']);
    });

    test('session endpoints: 404 envelope, create 201, get, patch, list, delete', async () => {
        const missing = await get('/api/sessions/nope/messages');
        expect(missing.status).toBe(404);
        expect(await missing.text()).toBe(
            '{"error": {"message": "Session not found: nope", "type": "invalid_request_error", "param": null, "code": "session_not_found"}}',
        );
        const created = await post('/api/sessions', { id: 's-1', title: 'First' });
        expect(created.status).toBe(201);
        expect(((await created.json()) as any).session).toMatchObject({ id: 's-1', title: 'First', message_count: 0 });
        expect((await post('/api/sessions', { id: 's-1' })).status).toBe(409);
        const patched = await fetch(`${hermes.url}/api/sessions/s-1`, {
            method: 'PATCH',
            headers: JSON_AUTH,
            body: JSON.stringify({ title: 'Renamed' }),
        });
        expect(((await patched.json()) as any).session.title).toBe('Renamed');
        const list = (await (await get('/api/sessions')).json()) as any;
        expect(list.data.map((s: any) => s.id)).toEqual(['s-1']);
        hermes.sessions.set('seeded', [{ role: 'user', content: 'hi' }]);
        const seeded = (await (await get('/api/sessions/seeded/messages')).json()) as any;
        expect(seeded.data[0]).toMatchObject({ session_id: 'seeded', role: 'user', content: 'hi', tool_calls: null });
        const deleted = await fetch(`${hermes.url}/api/sessions/s-1`, { method: 'DELETE', headers: AUTH });
        expect(await deleted.json()).toEqual({ object: 'hermes.session.deleted', id: 's-1', deleted: true });
    });

    test('stop on a finished run → 404; approval on an unknown run → 404', async () => {
        const { run_id } = (await (await post('/v1/runs', { input: 'hi' })).json()) as { run_id: string };
        await hermes.waitForRunStatus(run_id, 'completed');
        expect((await post(`/v1/runs/${run_id}/stop`, '')).status).toBe(404);
        expect((await post('/v1/runs/run_nope/approval', { choice: 'once' })).status).toBe(404);
    });

    test('waitForRequest resolves on past and future requests and rejects clearly on timeout', async () => {
        await fetch(`${hermes.url}/health`);
        await expect(hermes.waitForRequest((r) => r.path === '/health')).resolves.toMatchObject({ method: 'GET' });
        const future = hermes.waitForRequest((r) => r.path === '/v1/models');
        await get('/v1/models');
        expect((await future).headers.authorization).toBe(`Bearer ${KEY}`);
        await expect(hermes.waitForRequest((r) => r.path === '/never', 30)).rejects.toThrow(
            /no matching request within 30 ms; received: GET \/health, GET \/v1\/models/,
        );
    });
});

describe('modes', () => {
    test("'old': no capabilities (aiohttp 404 text), no runs, /health without version", async () => {
        const old = await startFakeHermes({ apiKey: KEY, mode: 'old' });
        try {
            const caps = await fetch(`${old.url}/v1/capabilities`, { headers: AUTH });
            expect(caps.status).toBe(404);
            expect(caps.headers.get('content-type')).toBe('text/plain; charset=utf-8');
            expect(await caps.text()).toBe('404: Not Found');
            expect((await fetch(`${old.url}/v1/runs`, { method: 'POST', headers: JSON_AUTH, body: '{}' })).status).toBe(404);
            expect(await (await fetch(`${old.url}/health`)).text()).toBe('{"status": "ok", "platform": "hermes-agent"}');
        } finally {
            await old.close();
        }
    });

    test("'newer': runs load stored history, durable Idempotency-Key, approval in status", async () => {
        const newer = await startFakeHermes({ apiKey: KEY, mode: 'newer' });
        const run = (body: unknown, headers: Record<string, string> = {}) =>
            fetch(`${newer.url}/v1/runs`, { method: 'POST', headers: { ...JSON_AUTH, ...headers }, body: JSON.stringify(body) });
        try {
            const first = (await (await run({ input: 'one', session_id: 'n1' }, { 'Idempotency-Key': 'k1' })).json()) as any;
            await newer.waitForRunStatus(first.run_id, 'completed');
            const replay = await run({ input: 'one', session_id: 'n1' }, { 'Idempotency-Key': 'k1' });
            expect(replay.status).toBe(202);
            expect(await replay.text()).toBe(`{"run_id": "${first.run_id}", "status": "started", "replayed": true}`);
            const conflict = await run({ input: 'other', session_id: 'n1' }, { 'Idempotency-Key': 'k1' });
            expect(conflict.status).toBe(409);
            expect(((await conflict.json()) as any).error.code).toBe('idempotency_key_conflict');

            const second = (await (await run({ input: 'two', session_id: 'n1' })).json()) as any;
            const done = await newer.waitForRunStatus(second.run_id, 'completed');
            expect(done.output).toBe('ECHO: two | user_turns=2 | prev=one');

            const danger = (await (await run({ input: 'DANGER', session_id: 'n2' })).json()) as any;
            const waiting = await newer.waitForRunStatus(danger.run_id, 'waiting_for_approval');
            expect(waiting.approval).toMatchObject({ command: 'rm -rf <HERMES_TEST_HOME>/scratch', choices: ['once', 'session', 'always', 'deny'] });
        } finally {
            await newer.close();
        }
    });
});
