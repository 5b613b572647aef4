/**
 * The fake Hermes's `/api/sessions*` endpoints against the real Hermes v0.18.2
 * (contract: docs/hermes-sessions-api.md).
 *
 * Part 1 replays, in order, the exchanges recorded from a real, unmodified Hermes
 * v0.18.2 api_server (test/fixtures/hermes-transcripts/40_… to 87_…) against a fresh
 * fake, and compares status, reason, headers and the body byte for byte after
 * normalising the volatile parts (timestamps, row ids, generated ids).
 * Part 2 pins each rule with exact bodies, including what the recordings cannot show
 * (compression lineage, seeded CLI sessions, include_children, archived rows).
 */
import * as fs from 'fs';
import * as path from 'path';
import { FakeHermes, hermesToolCall, sanitizeTitle, startFakeHermes } from '../../../fake-hermes';

const TRANSCRIPTS = path.resolve(__dirname, '../../fixtures/hermes-transcripts');
const KEY = 's'.repeat(32);
const AUTH = { Authorization: `Bearer ${KEY}` };
const JSON_AUTH = { ...AUTH, 'Content-Type': 'application/json' };

// ---------------------------------------------------------------- transcripts

interface Exchange {
    method: string;
    path: string;
    requestHeaders: Array<[string, string]>;
    requestBody: string;
    response: { status: number; reason: string; headers: Array<[string, string]>; body: string };
}

function splitHead(part: string): { lines: string[]; rest: Buffer } {
    const buf = Buffer.from(part, 'utf8');
    const end = buf.indexOf('\r\n\r\n');
    return { lines: buf.subarray(0, end).toString('utf8').split('\r\n'), rest: buf.subarray(end + 4) };
}

const headerList = (lines: string[]): Array<[string, string]> =>
    lines.map((line) => {
        const i = line.indexOf(':');
        return [line.slice(0, i), line.slice(i + 1).trim()] as [string, string];
    });

const headerValue = (headers: Array<[string, string]>, name: string): string | undefined => headers.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];

function transcript(name: string): Exchange {
    const file = fs.readdirSync(TRANSCRIPTS).find((f) => f.startsWith(`${name}_`));
    if (!file) throw new Error(`no transcript ${name} in ${TRANSCRIPTS}`);
    const text = fs.readFileSync(path.join(TRANSCRIPTS, file), 'utf8');
    const [reqPart, respPart] = text.split('=== REQUEST ===\n')[1].split('=== RESPONSE ===\n');
    const req = splitHead(reqPart);
    const [method, target] = req.lines[0].split(' ');
    const requestHeaders = headerList(req.lines.slice(1));
    const resp = splitHead(respPart);
    const statusLine = /^HTTP\/1\.1 (\d+) (.*)$/.exec(resp.lines[0]);
    if (!statusLine) throw new Error(`bad status line in ${file}`);
    const headers = headerList(resp.lines.slice(1));
    const length = Number(headerValue(headers, 'Content-Length'));
    return {
        method,
        path: target,
        requestHeaders,
        requestBody: req.rest.subarray(0, Number(headerValue(requestHeaders, 'Content-Length') ?? 0)).toString('utf8'),
        response: { status: Number(statusLine[1]), reason: statusLine[2], headers, body: resp.rest.subarray(0, length).toString('utf8') },
    };
}

/** Volatile values → placeholders; ids become <kindN> in order of first appearance. */
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
        .replace(/(call|fc)_[0-9a-f]{10}/g, (v) => label('call')(v.replace(/^fc_/, 'call_')))
        .replace(/api_\d{10}_[0-9a-f]{8}/g, label('apiid'))
        .replace(/"(timestamp|started_at|ended_at|last_active)": \d+\.\d+/g, '"$1": <T>')
        .replace(/"created": \d+/g, '"created": <T>')
        .replace(/"id": \d+/g, label('rowid'));
}

const VOLATILE_HEADERS = new Set(['date', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);
const comparableHeaders = (entries: Iterable<[string, string]>): Array<[string, string]> =>
    [...entries]
        .map(([k, v]) => [k.toLowerCase(), v] as [string, string])
        .filter(([k]) => !VOLATILE_HEADERS.has(k))
        .sort(([a], [b]) => a.localeCompare(b));

let hermes: FakeHermes;

/**
 * `fixBody` adjusts the fake's body before comparing. Only use: the recordings' stand-in model
 * writes its ECHO on one line (`" ".join(msg.split())`), the fake's scripted model keeps the
 * user's newlines (end-to-end tests rely on that), which shows in transcript 86 only.
 */
async function replayLike(name: string, fixBody: (body: string) => string = (b) => b): Promise<string> {
    const ex = transcript(name);
    const headers: Record<string, string> = {};
    for (const [k, v] of ex.requestHeaders) {
        if (['host', 'user-agent', 'accept', 'content-length'].includes(k.toLowerCase())) continue;
        headers[k] = v.replace('<API_SERVER_KEY>', KEY);
    }
    const res = await fetch(hermes.url + ex.path, {
        method: ex.method,
        headers,
        body: ex.method === 'GET' || ex.method === 'DELETE' ? undefined : ex.requestBody,
    });
    const body = await res.text();
    const got: Array<[string, string]> = [];
    res.headers.forEach((value, key) => got.push([key, value]));
    expect({ name, status: res.status, reason: res.statusText }).toEqual({ name, status: ex.response.status, reason: ex.response.reason });
    expect(comparableHeaders(got)).toEqual(comparableHeaders(ex.response.headers));
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(normalise(fixBody(body))).toBe(normalise(ex.response.body));
    return body;
}

// ---------------------------------------------------------------- HTTP helpers

async function call(method: string, pathname: string, body?: unknown): Promise<{ status: number; text: string; json: any }> {
    const res = await fetch(hermes.url + pathname, {
        method,
        headers: body === undefined ? AUTH : JSON_AUTH,
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
        json = JSON.parse(text);
    } catch {
        json = undefined;
    }
    return { status: res.status, text, json };
}

const get = (p: string) => call('GET', p);
const post = (p: string, body: unknown = {}) => call('POST', p, body);
const patch = (p: string, body: unknown) => call('PATCH', p, body);

async function chat(sessionId: string, content: string): Promise<void> {
    const res = await fetch(`${hermes.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...JSON_AUTH, 'X-Hermes-Session-Id': sessionId },
        body: JSON.stringify({ model: 'hermes-agent', messages: [{ role: 'user', content }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
}

const envelope = (message: string, code: string | null): string =>
    `{"error": {"message": ${JSON.stringify(message)}, "type": "invalid_request_error", "param": null, "code": ${code === null ? 'null' : JSON.stringify(code)}}}`;

const ids = (list: any): string[] => list.data.map((s: any) => s.id);

beforeAll(async () => {
    hermes = await startFakeHermes({ apiKey: KEY, slowIntervalMs: 5 });
});

afterAll(async () => {
    await hermes.close();
});

// ================================================================ part 1

describe('replay of the real v0.18.2 session exchanges (transcripts 40-87)', () => {
    beforeAll(() => hermes.reset());

    test('40-56: empty list, a chat turn creates an untitled api_server row, titles and their errors, create', async () => {
        for (const name of ['40', '41', '42', '43', '44', '45', '46', '47', '48', '49', '50', '51', '52', '53', '54', '54b', '55', '56', '56b', '56c']) {
            await replayLike(name);
        }
    });

    test('57-68: a run and a tool turn, tool-call rows, list order/paging/filters, no search endpoint', async () => {
        const { run_id } = JSON.parse(await replayLike('57')) as { run_id: string };
        await hermes.waitForRunStatus(run_id, 'completed');
        for (const name of ['58', '59', '60', '61', '62', '63', '64', '65', '66', '67', '68']) await replayLike(name);
    });

    test('69-80c: end_reason (first end wins), a turn on an ended session, forks, delete', async () => {
        for (const name of ['69', '70', '71', '72', '73', '74', '75', '76', '77', '77b', '78', '79', '80', '80b', '80c']) {
            await replayLike(name);
        }
    });

    test('81-87: a CLI session (seeded as recorded) listed, read, titled and resumed; the preview cut', async () => {
        const recorded = transcript('82');
        const cliId = /\/api\/sessions\/([^/]+)\/messages/.exec(recorded.path)?.[1] as string;
        const rows = JSON.parse(recorded.response.body).data as Array<Record<string, any>>;
        hermes.seedSession({
            id: cliId,
            source: 'cli',
            messages: rows.map((r) => ({
                role: r.role,
                content: r.content,
                tool_calls: r.tool_calls,
                tool_call_id: r.tool_call_id,
                tool_name: r.tool_name,
                finish_reason: r.finish_reason,
            })),
        });
        for (const name of ['81', '82', '83', '84', '85']) await replayLike(name);
        await replayLike('86', (body) => body.replace('the preview\\nmust', 'the preview must'));
        await replayLike('87');
    });
});

// ================================================================ part 2

describe('session rows made by turns', () => {
    beforeEach(() => hermes.reset());

    test('a chat turn with X-Hermes-Session-Id: the exact object GET answers (no last_active/preview there)', async () => {
        await chat('rc-1', 'hello');
        const got = await get('/api/sessions/rc-1');
        expect(got.status).toBe(200);
        expect(Object.keys(got.json.session)).toEqual([
            'id',
            'source',
            'user_id',
            'model',
            'title',
            'started_at',
            'ended_at',
            'end_reason',
            'message_count',
            'tool_call_count',
            'input_tokens',
            'output_tokens',
            'cache_read_tokens',
            'cache_write_tokens',
            'reasoning_tokens',
            'estimated_cost_usd',
            'actual_cost_usd',
            'api_call_count',
            'parent_session_id',
            'has_system_prompt',
            'has_model_config',
        ]);
        expect(got.json).toEqual({
            object: 'hermes.session',
            session: expect.objectContaining({
                id: 'rc-1',
                source: 'api_server',
                user_id: null,
                model: 'fake-echo-1',
                title: null,
                ended_at: null,
                end_reason: null,
                message_count: 2,
                tool_call_count: 0,
                input_tokens: 11,
                output_tokens: 7,
                api_call_count: 1,
                parent_session_id: null,
                has_system_prompt: true,
                has_model_config: true,
            }),
        });
        expect(got.text).toContain('"estimated_cost_usd": 0.0, "actual_cost_usd": null');
        expect(got.text).toMatch(/"started_at": \d+\.\d+/);
    });

    test('a run persists under its session_id (or the run id) with the same fields; no auto-title', async () => {
        const res = await post('/v1/runs', { input: 'RUN_TOOL now', session_id: 'run-s' });
        await hermes.waitForRunStatus(res.json.run_id, 'completed');
        const s = hermes.getSession('run-s');
        expect(s).toMatchObject({ source: 'api_server', title: null, message_count: 4, tool_call_count: 1, input_tokens: 22, api_call_count: 2 });
        const msgs = (await get('/api/sessions/run-s/messages')).json;
        expect(msgs.data.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
        const toolCall = msgs.data[1].tool_calls[0];
        expect(Object.keys(toolCall)).toEqual(['id', 'call_id', 'response_item_id', 'type', 'function']);
        expect(toolCall.call_id).toBe(toolCall.id);
        expect(toolCall.response_item_id).toBe(toolCall.id.replace('call_', 'fc_'));
        expect(toolCall.function).toEqual({ name: 'terminal', arguments: '{"command": "echo RUN_TOOL_OK"}' });
        expect(msgs.data[2]).toMatchObject({ role: 'tool', tool_call_id: toolCall.id, tool_name: 'terminal' });
    });

    test('POST /api/sessions row: model = the advertised name, no system prompt, cost null; a later turn fills the blanks', async () => {
        const created = await post('/api/sessions', { id: 'c-1' });
        expect(created.status).toBe(201);
        expect(created.json.session).toMatchObject({ model: 'hermes-agent', has_system_prompt: false, has_model_config: false, estimated_cost_usd: null });
        await chat('c-1', 'hi');
        expect(hermes.getSession('c-1')).toMatchObject({
            model: 'hermes-agent',
            has_system_prompt: true,
            has_model_config: true,
            estimated_cost_usd: 0,
            message_count: 2,
        });
    });
});

describe('PATCH /api/sessions/{id}', () => {
    beforeEach(async () => {
        hermes.reset();
        await post('/api/sessions', { id: 'a', title: 'Release planning' });
        await post('/api/sessions', { id: 'b' });
    });

    test('title taken by another session → 400 invalid_title naming the holder; nothing changes', async () => {
        const got = await patch('/api/sessions/b', { title: 'Release planning' });
        expect(got.status).toBe(400);
        expect(got.text).toBe(envelope("Title 'Release planning' is already in use by session a", 'invalid_title'));
        expect(hermes.getSession('b')?.title).toBeNull();
    });

    test('uniqueness is exact and case-sensitive; the holder may set its own title again', async () => {
        expect((await patch('/api/sessions/b', { title: 'release planning' })).json.session.title).toBe('release planning');
        expect((await patch('/api/sessions/a', { title: 'Release planning' })).status).toBe(200);
    });

    test('sanitising: controls and zero-width removed, whitespace collapsed, blank/null clears, non-strings via str()', async () => {
        expect((await patch('/api/sessions/b', { title: '  Deploy \t\n notes\u200b\u0007 ' })).json.session.title).toBe('Deploy notes');
        expect((await patch('/api/sessions/b', { title: '   ' })).json.session.title).toBeNull();
        await patch('/api/sessions/b', { title: 'x' });
        expect((await patch('/api/sessions/b', { title: null })).json.session.title).toBeNull();
        expect((await patch('/api/sessions/b', { title: 42 })).json.session.title).toBe('42');
        expect((await patch('/api/sessions/b', { title: true })).json.session.title).toBe('True');
    });

    test('100 characters fit, 101 → 400 "Title too long (101 chars, max 100)" (code points, after cleaning)', async () => {
        expect((await patch('/api/sessions/b', { title: 'b'.repeat(100) })).status).toBe(200);
        const long = await patch('/api/sessions/b', { title: 'c'.repeat(101) });
        expect(long.status).toBe(400);
        expect(long.text).toBe(envelope('Title too long (101 chars, max 100)', 'invalid_title'));
        expect((await patch('/api/sessions/b', { title: '\u{1F680}'.repeat(100) })).status).toBe(200);
        expect(sanitizeTitle(`  ${'d'.repeat(100)}  `)).toBe('d'.repeat(100));
    });

    test('unknown id → 404 before the body is read; bad bodies and fields → 400', async () => {
        const missing = await patch('/api/sessions/nope', '{not json');
        expect(missing.status).toBe(404);
        expect(missing.text).toBe(envelope('Session not found: nope', 'session_not_found'));
        expect((await patch('/api/sessions/b', '{"title":')).text).toBe(envelope('Invalid JSON in request body', null));
        expect((await patch('/api/sessions/b', '')).text).toBe(envelope('Invalid JSON in request body', null));
        expect((await patch('/api/sessions/b', ['title'])).text).toBe(envelope('Request body must be a JSON object', null));
        const fields = await patch('/api/sessions/b', { title: 'x', user_id: 'u', archived: true });
        expect(fields.status).toBe(400);
        expect(fields.text).toBe(envelope('Unsupported session fields: archived, user_id', 'unsupported_session_field'));
        expect(hermes.getSession('b')?.title).toBeNull();
    });

    test('end_reason ends the session once (first reason wins); "" is ignored; a title error skips the end', async () => {
        const first = await patch('/api/sessions/b', { end_reason: 'session_reset' });
        expect(first.json.session).toMatchObject({ end_reason: 'session_reset' });
        expect(first.text).toMatch(/"ended_at": \d+\.\d+/);
        const endedAt = first.json.session.ended_at;
        const again = await patch('/api/sessions/b', { end_reason: 'idle', title: 'Old' });
        expect(again.json.session).toMatchObject({ end_reason: 'session_reset', ended_at: endedAt, title: 'Old' });
        expect((await patch('/api/sessions/a', { end_reason: '' })).json.session.ended_at).toBeNull();
        expect((await patch('/api/sessions/a', { title: 'Old', end_reason: 'x' })).status).toBe(400);
        expect(hermes.getSession('a')?.ended_at).toBeNull();
    });

    test('an ended session still takes turns: it stays ended and its counters grow', async () => {
        await patch('/api/sessions/b', { end_reason: 'session_reset' });
        await chat('b', 'still there?');
        expect(hermes.getSession('b')).toMatchObject({ end_reason: 'session_reset', message_count: 2 });
    });
});

describe('POST /api/sessions', () => {
    beforeEach(() => hermes.reset());

    test('201 with {id, title}; id alias session_id; "" or 0 → generated api_<time>_<8 hex>; surrounding spaces stripped', async () => {
        const made = await post('/api/sessions', { id: 'x-1', title: 'First' });
        expect(made.status).toBe(201);
        expect(made.json).toMatchObject({ object: 'hermes.session', session: { id: 'x-1', title: 'First', source: 'api_server', message_count: 0 } });
        expect((await post('/api/sessions', { session_id: 'x-2' })).json.session.id).toBe('x-2');
        expect((await post('/api/sessions', { id: '' })).json.session.id).toMatch(/^api_\d{10}_[0-9a-f]{8}$/);
        expect((await post('/api/sessions', { id: 0 })).json.session.id).toMatch(/^api_\d{10}_[0-9a-f]{8}$/);
        expect((await post('/api/sessions', { id: '  x-3 ' })).json.session.id).toBe('x-3');
    });

    test('errors: bad id, too long, exists, system_prompt type, taken title (the row is removed again), empty body', async () => {
        await post('/api/sessions', { id: 'x-1', title: 'First' });
        const invalid = envelope('Invalid session ID', 'invalid_session_id');
        for (const id of ['   ', 'a/b', '..', 'a\\b', 'C:x', 'é:x']) expect((await post('/api/sessions', { id })).text).toBe(invalid);
        expect((await post('/api/sessions', { id: 'x'.repeat(257) })).text).toBe(envelope('Session ID too long', 'invalid_session_id'));
        expect((await post('/api/sessions', { id: 'x'.repeat(256) })).status).toBe(201);
        const exists = await post('/api/sessions', { id: 'x-1' });
        expect(exists.status).toBe(409);
        expect(exists.text).toBe(envelope('Session already exists: x-1', 'session_exists'));
        expect((await post('/api/sessions', { id: 'x-4', system_prompt: 5 })).text).toBe(envelope('system_prompt must be a string', 'invalid_system_prompt'));
        const taken = await post('/api/sessions', { id: 'x-5', title: 'First' });
        expect(taken.status).toBe(400);
        expect(taken.text).toBe(envelope("Title 'First' is already in use by session x-1", 'invalid_title'));
        expect((await get('/api/sessions/x-5')).status).toBe(404);
        expect((await post('/api/sessions', '')).text).toBe(envelope('Invalid JSON in request body', null));
        expect((await post('/api/sessions', '[]')).text).toBe(envelope('Request body must be a JSON object', null));
    });
});

describe('GET /api/sessions', () => {
    beforeEach(() => hermes.reset());

    test('newest activity first (a turn moves a session up; a title change does not); list items add last_active and preview', async () => {
        await chat('old', 'first');
        await chat('new', 'second');
        await post('/api/sessions', { id: 'empty' });
        expect(ids((await get('/api/sessions')).json)).toEqual(['empty', 'new', 'old']);
        await chat('old', 'again');
        await patch('/api/sessions/new', { title: 'Renamed' });
        const list = (await get('/api/sessions')).json;
        expect(ids(list)).toEqual(['old', 'empty', 'new']);
        expect(Object.keys(list.data[0]).slice(-4)).toEqual(['last_active', 'preview', 'has_system_prompt', 'has_model_config']);
        expect(list.data[0]).toMatchObject({ preview: 'first', message_count: 4 });
        expect(list.data[1]).toMatchObject({ preview: '', last_active: list.data[1].started_at });
    });

    test('limit (default 50, max 200, bad/negative → default), offset; has_more is len(page) == limit', async () => {
        for (const id of ['s1', 's2', 's3']) await post('/api/sessions', { id });
        const page = (await get('/api/sessions?limit=2&offset=1')).json;
        expect(page).toMatchObject({ object: 'list', limit: 2, offset: 1, has_more: true });
        expect(ids(page)).toEqual(['s2', 's1']);
        expect((await get('/api/sessions?limit=3')).json).toMatchObject({ limit: 3, has_more: true });
        expect((await get('/api/sessions?limit=4')).json).toMatchObject({ limit: 4, has_more: false });
        expect((await get('/api/sessions?limit=abc&offset=-3')).json).toMatchObject({ limit: 50, offset: 0, has_more: false });
        expect((await get('/api/sessions?limit=500')).json.limit).toBe(200);
        expect((await get('/api/sessions?limit=0')).text).toBe('{"object": "list", "data": [], "limit": 0, "offset": 0, "has_more": true}');
        expect((await get('/api/sessions?limit=1_0&offset=+1')).json).toMatchObject({ limit: 10, offset: 1 });
    });

    test('source filters exactly; q and user_id are ignored (there is no search)', async () => {
        await chat('api-1', 'about tools');
        hermes.seedSession({ id: '20250305_091523_a1b2c3', source: 'cli', messages: [{ role: 'user', content: 'cli' }] });
        expect(ids((await get('/api/sessions?source=cli')).json)).toEqual(['20250305_091523_a1b2c3']);
        expect(ids((await get('/api/sessions?source=api_server')).json)).toEqual(['api-1']);
        expect(ids((await get('/api/sessions?source=')).json)).toHaveLength(2);
        expect(ids((await get('/api/sessions?q=tools&user_id=nobody')).json)).toHaveLength(2);
    });

    test('the preview: first user message, newlines as spaces, 60 characters then "..."', async () => {
        await chat('long', 'This first line is deliberately long so that the preview\nmust be cut at sixty characters, see?');
        expect((await get('/api/sessions')).json.data[0].preview).toBe('This first line is deliberately long so that the preview mus...');
        hermes.reset();
        await chat('exact', 'x'.repeat(60));
        expect((await get('/api/sessions')).json.data[0].preview).toBe('x'.repeat(60));
    });

    test('archived rows are hidden; sub-agent children only with include_children=true', async () => {
        hermes.seedSession({ id: 'hidden', archived: true });
        hermes.seedSession({ id: 'parent', messages: [{ role: 'user', content: 'p' }] });
        hermes.seedSession({ id: 'sub', parent_session_id: 'parent', source: 'subagent' });
        expect(ids((await get('/api/sessions')).json)).toEqual(['parent']);
        expect(ids((await get('/api/sessions?include_children=true')).json).sort()).toEqual(['parent', 'sub']);
        expect(ids((await get('/api/sessions?include_children=maybe')).json)).toEqual(['parent']);
    });
});

describe('no search endpoint over HTTP', () => {
    beforeEach(() => hermes.reset());

    test('/api/sessions/search is the session route (404 "Session not found: search"); other guesses are aiohttp 404s', async () => {
        await chat('findme', 'release notes');
        const s = await get('/api/sessions/search?q=release');
        expect(s.status).toBe(404);
        expect(s.text).toBe(envelope('Session not found: search', 'session_not_found'));
        for (const p of ['/api/search?q=release', '/v1/sessions/search?q=release', '/api/sessions/findme/search?q=release']) {
            const r = await get(p);
            expect(r.status).toBe(404);
            expect(r.text).toBe('404: Not Found');
        }
    });
});

describe('GET /api/sessions/{id}/messages, DELETE, 404s', () => {
    beforeEach(() => hermes.reset());

    test('every message in insertion order, no paging; unknown id → 404', async () => {
        await chat('m', 'one');
        await chat('m', 'two');
        const all = (await get('/api/sessions/m/messages?limit=1&offset=1')).json;
        expect(all).toMatchObject({ object: 'list', session_id: 'm' });
        expect(all.data.map((r: any) => r.content)).toEqual(['one', 'ECHO: one | user_turns=1 | prev=-', 'two', 'ECHO: two | user_turns=2 | prev=one']);
        expect(all.data.map((r: any) => r.id)).toEqual([1, 2, 3, 4]);
        const missing = await get('/api/sessions/nope/messages');
        expect(missing.status).toBe(404);
        expect(missing.text).toBe(envelope('Session not found: nope', 'session_not_found'));
        expect((await get('/api/sessions/nope')).text).toBe(envelope('Session not found: nope', 'session_not_found'));
    });

    test('DELETE → {"object": "hermes.session.deleted", "id", "deleted": true}; again → 404; children are orphaned', async () => {
        await chat('src', 'hi');
        await post('/api/sessions/src/fork', { id: 'child' });
        const del = await call('DELETE', '/api/sessions/src');
        expect(del.text).toBe('{"object": "hermes.session.deleted", "id": "src", "deleted": true}');
        expect((await call('DELETE', '/api/sessions/src')).status).toBe(404);
        expect(hermes.getSession('child')).toMatchObject({ parent_session_id: null, message_count: 2 });
    });
});

describe('POST /api/sessions/{id}/fork', () => {
    beforeEach(() => hermes.reset());

    test('ends the source "branched", copies its messages (timestamps kept, new ids), titles "x #2" / "fork" / "fork #2"', async () => {
        await chat('titled', 'plan');
        await patch('/api/sessions/titled', { title: 'Release' });
        const fork = await post('/api/sessions/titled/fork', {});
        expect(fork.status).toBe(201);
        expect(fork.json.session).toMatchObject({
            title: 'Release #2',
            parent_session_id: 'titled',
            message_count: 2,
            source: 'api_server',
            model: 'fake-echo-1',
        });
        expect(fork.json.session).toMatchObject({
            input_tokens: 0,
            api_call_count: 0,
            estimated_cost_usd: null,
            has_system_prompt: true,
            has_model_config: false,
        });
        expect(fork.json.session.id).toMatch(/^api_\d{10}_[0-9a-f]{8}$/);
        expect(hermes.getSession('titled')).toMatchObject({ end_reason: 'branched' });
        const src = hermes.sessions.get('titled') ?? [];
        const copy = hermes.sessions.get(fork.json.session.id) ?? [];
        expect(copy.map((m) => m.timestamp)).toEqual(src.map((m) => m.timestamp));
        expect(copy.map((m) => m.id)).toEqual([3, 4]);
        expect((await post('/api/sessions/titled/fork', {})).json.session.title).toBe('Release #3');

        await chat('plain', 'x');
        expect((await post('/api/sessions/plain/fork', { id: 'f1' })).json.session.title).toBe('fork');
        expect((await post('/api/sessions/plain/fork', { id: 'f2' })).json.session.title).toBe('fork #2');
        expect((await post('/api/sessions/plain/fork', { id: 'f3', title: '' })).json.session.title).toBeNull();
        // the listed forks: branch children are visible, newest started first on equal activity
        expect(ids((await get('/api/sessions')).json).slice(0, 4)).toEqual(['f3', 'f2', 'f1', 'plain']);
    });

    test('messages of a forked source resolve to its newest fork (Hermes quirk, transcript 76)', async () => {
        await chat('src', 'hi');
        await post('/api/sessions/src/fork', { id: 'fork-a' });
        await chat('fork-a', 'only in the fork');
        const got = (await get('/api/sessions/src/messages')).json;
        expect(got.session_id).toBe('fork-a');
        expect(got.data).toHaveLength(4);
    });

    test('errors: unknown source 404, empty body 400, existing id 409; a taken title → 400 but the fork stays', async () => {
        await chat('src', 'hi');
        await post('/api/sessions', { id: 'holder', title: 'Taken' });
        expect((await post('/api/sessions/nope/fork', {})).text).toBe(envelope('Session not found: nope', 'session_not_found'));
        expect((await post('/api/sessions/src/fork', '')).text).toBe(envelope('Invalid JSON in request body', null));
        expect((await post('/api/sessions/src/fork', { id: 'holder' })).text).toBe(envelope('Session already exists: holder', 'session_exists'));
        expect((await post('/api/sessions/src/fork', { id: '  ' })).text).toBe(envelope('Invalid session ID', 'invalid_session_id'));
        const taken = await post('/api/sessions/src/fork', { id: 'f', title: 'Taken' });
        expect(taken.text).toBe(envelope("Title 'Taken' is already in use by session holder", 'invalid_title'));
        expect(hermes.getSession('f')).toMatchObject({ title: null, parent_session_id: 'src', message_count: 2 });
        expect(hermes.getSession('src')).toMatchObject({ end_reason: 'branched' });
    });
});

describe('seeded sessions (created outside the app)', () => {
    beforeEach(() => hermes.reset());

    const cliSession = () => {
        const callId = 'call_0123456789';
        return {
            id: '20250305_091523_a1b2c3',
            source: 'cli',
            title: 'Deploy checklist',
            started_at: 1741166123.5,
            messages: [
                { role: 'user', content: 'check the deploy script' },
                { role: 'assistant', content: '', tool_calls: [hermesToolCall('terminal', { command: 'cat deploy.sh' }, callId)], finish_reason: 'tool_calls' },
                { role: 'tool', content: '{"output": "#!/bin/sh", "exit_code": 0, "error": null}', tool_call_id: callId, tool_name: 'terminal' },
                { role: 'assistant', content: 'The script looks fine.', finish_reason: 'stop' },
            ],
        };
    };

    test('seedSession: listed under source=cli with the fields a CLI turn writes; messages with tool calls', async () => {
        const seeded = hermes.seedSession(cliSession());
        expect(seeded).toMatchObject({
            id: '20250305_091523_a1b2c3',
            source: 'cli',
            title: 'Deploy checklist',
            started_at: 1741166123.5,
            message_count: 4,
            tool_call_count: 1,
            input_tokens: 22,
            output_tokens: 14,
            api_call_count: 2,
            estimated_cost_usd: 0,
            has_system_prompt: true,
            has_model_config: true,
        });
        const list = (await get('/api/sessions?source=cli')).json;
        expect(list.data[0]).toMatchObject({ id: '20250305_091523_a1b2c3', last_active: 1741166123.504, preview: 'check the deploy script' });
        const msgs = await get('/api/sessions/20250305_091523_a1b2c3/messages');
        expect(msgs.text).toContain('"timestamp": 1741166123.501,');
        expect(msgs.json.data[1].tool_calls).toEqual([
            {
                id: 'call_0123456789',
                call_id: 'call_0123456789',
                response_item_id: 'fc_0123456789',
                type: 'function',
                function: { name: 'terminal', arguments: '{"command": "cat deploy.sh"}' },
            },
        ]);
        expect(msgs.json.data[2]).toMatchObject({ role: 'tool', tool_name: 'terminal', tool_call_id: 'call_0123456789' });
    });

    test('its title is taken for everyone else; resuming it over chat completions loads its history and keeps source cli', async () => {
        hermes.seedSession(cliSession());
        await post('/api/sessions', { id: 'mine' });
        expect((await patch('/api/sessions/mine', { title: 'Deploy checklist' })).text).toBe(
            envelope("Title 'Deploy checklist' is already in use by session 20250305_091523_a1b2c3", 'invalid_title'),
        );
        const res = await fetch(`${hermes.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { ...JSON_AUTH, 'X-Hermes-Session-Id': '20250305_091523_a1b2c3' },
            body: JSON.stringify({ model: 'hermes-agent', messages: [{ role: 'user', content: 'and now?' }] }),
        });
        expect(((await res.json()) as any).choices[0].message.content).toBe('ECHO: and now? | user_turns=2 | prev=check the deploy script');
        expect(hermes.getSession('20250305_091523_a1b2c3')).toMatchObject({ source: 'cli', message_count: 6, input_tokens: 33 });
    });

    test('seedSession refuses an existing id and a taken or too long title', () => {
        hermes.seedSession(cliSession());
        expect(() => hermes.seedSession(cliSession())).toThrow('seedSession: session already exists: 20250305_091523_a1b2c3');
        expect(() => hermes.seedSession({ id: 'other', title: 'Deploy checklist' })).toThrow(
            "seedSession: Title 'Deploy checklist' is already in use by session 20250305_091523_a1b2c3",
        );
        expect(() => hermes.seedSession({ id: 'other', title: 'z'.repeat(101) })).toThrow('seedSession: Title too long (101 chars, max 100)');
        expect(hermes.getSession('other')).toBeUndefined();
    });

    test('the map stays seedable with bare messages (a bare row, like POST /api/sessions without a model)', async () => {
        hermes.sessions.set('bare', [{ role: 'user', content: 'hi' }]);
        expect((await get('/api/sessions/bare/messages')).json.data[0]).toMatchObject({
            id: 1,
            session_id: 'bare',
            role: 'user',
            content: 'hi',
            tool_calls: null,
        });
        expect(hermes.getSession('bare')).toMatchObject({ source: 'api_server', model: null, message_count: 1, has_system_prompt: false });
    });
});

describe('compression lineage (compression.in_place: false, or a seeded chain)', () => {
    beforeEach(() => hermes.reset());

    test('a rotated session: parent ends "compression", the child gets "x #2", the list shows the root projected to the tip', async () => {
        await chat('root', 'start');
        await patch('/api/sessions/root', { title: 'Research' });
        hermes.script({ path: '/v1/chat/completions', rotateSessionTo: 'tip' });
        await chat('root', 'more');
        expect(hermes.getSession('root')).toMatchObject({ end_reason: 'compression', title: 'Research' });
        expect(hermes.getSession('tip')).toMatchObject({ parent_session_id: 'root', title: 'Research #2', source: 'api_server' });
        const list = (await get('/api/sessions')).json;
        expect(list.data).toHaveLength(1);
        expect(list.data[0]).toMatchObject({ id: 'tip', title: 'Research #2', end_reason: null, _lineage_root_id: 'root', parent_session_id: null });
        expect(Object.keys(list.data[0]).slice(-5)).toEqual(['last_active', 'preview', '_lineage_root_id', 'has_system_prompt', 'has_model_config']);
        expect(list.data[0].started_at).toBe(hermes.getSession('root')?.started_at);
        expect((await get('/api/sessions/root/messages')).json.session_id).toBe('tip');
        expect(ids((await get('/api/sessions?include_children=1')).json)).toEqual(['tip', 'root']);
    });

    test("the tip may take its hidden ancestor's title back (the title moves, it is not a conflict)", async () => {
        hermes.seedSession({ id: 'r', title: 'Notes', end_reason: 'compression', ended_at: 1000, started_at: 900 });
        hermes.seedSession({ id: 't', parent_session_id: 'r', title: 'Notes #2', started_at: 1001 });
        expect((await patch('/api/sessions/t', { title: 'Notes' })).json.session.title).toBe('Notes');
        expect(hermes.getSession('r')?.title).toBeNull();
    });
});
