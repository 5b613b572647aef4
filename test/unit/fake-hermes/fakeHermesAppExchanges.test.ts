import { readdirSync, readFileSync } from 'fs';
import { createServer } from 'http';
import { AddressInfo } from 'net';
import { join } from 'path';
import { startFakeHermes } from '../../../fake-hermes';
import type { RecordedExchange } from '../../real/recorder';

/**
 * The fake Hermes answers the app as the real v0.18.2 did. Each fixture in
 * test/fixtures/real-hermes-app/ holds the exchanges of one real-server test
 * (`npm run test:real-hermes` with HERMES_REAL_RECORD=1): the app's requests, verbatim but
 * for the key, and the real server's answers. Here the same requests go to the fake, at the
 * same moments (scaled), and its answers must be the real ones once ids, clocks and the
 * number of SLOW words (the stop moment) are set aside.
 */
const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'real-hermes-app');
const KEY = 'fake-key-0123456789abcdef';
/** Recorded moments are replayed at this fraction; the fake's SLOW words come as much faster (real: 1 s). */
const PACE = 0.25;

interface Fixture {
    scenario: string;
    /** What Hermes asked the app's MCP server during the test, and the app's answers (the MCP scenario). */
    mcp?: Array<{ request: string; status: number; response: string }>;
    /** The Hermes home of the recording (its `rm -rf <home>/scratch`), replaced by `<HERMES_TEST_HOME>` in the bodies. */
    home: string | null;
    exchanges: RecordedExchange[];
}

const fixtures: Fixture[] = readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(FIXTURES, f), 'utf8')) as Fixture);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Values that differ from run to run on any server: ids, clocks, durations. */
const VOLATILE_NUMBERS = new Set(['timestamp', 'created', 'created_at', 'updated_at', 'duration', 'started_at', 'completed_at']);

function stable(value: Json, key = ''): Json {
    // A numeric `id` is a database row's (a session message's): the same rows, other numbers.
    if (typeof value === 'number' && (VOLATILE_NUMBERS.has(key) || key === 'id')) return 0;
    if (typeof value === 'string') {
        return value
            .replace(/run_[0-9a-f]{32}/g, 'run_*')
            .replace(/chatcmpl-[0-9a-f]+/g, 'chatcmpl-*')
            .replace(/call_[0-9A-Za-z_-]+/g, 'call_*')
            .replace(/\bfc_[0-9a-f]+/g, 'fc_*')
            .replace(/SLOW:( tick)*/g, 'SLOW: tick…');
    }
    if (Array.isArray(value)) return value.map((v) => stable(v));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stable(v, k)]));
    return value;
}

/** An SSE body as its JSON events, with a run of text deltas joined into one (how Hermes cuts text into deltas is the model's affair). */
function events(body: string): Json[] {
    const out: Json[] = [];
    for (const frame of body.split('\n\n')) {
        const data = frame
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
        if (!data) continue;
        const event = (data === '[DONE]' ? data : JSON.parse(data)) as Json;
        const last = out[out.length - 1] as Record<string, Json> | undefined;
        const text = deltaText(event);
        if (text !== undefined && last && deltaText(last) !== undefined) {
            setDeltaText(last, String(deltaText(last)) + text);
        } else {
            out.push(event);
        }
    }
    return out.map((e) => stable(e));
}

function deltaText(event: Json): string | undefined {
    if (!event || typeof event !== 'object' || Array.isArray(event)) return undefined;
    if (event.event === 'message.delta') return String(event.delta);
    const choice = Array.isArray(event.choices) ? (event.choices[0] as Record<string, Json>) : undefined;
    const delta = choice?.delta as Record<string, Json> | undefined;
    if (delta && Object.keys(delta).join() === 'content' && choice?.finish_reason === null) return String(delta.content);
    return undefined;
}

function setDeltaText(event: Record<string, Json>, text: string): void {
    if (event.event === 'message.delta') event.delta = text;
    else ((event.choices as Record<string, Json>[])[0].delta as Record<string, Json>).content = text;
}

/** What is compared of an answer: status, media type, and the body as data. */
function answer(status: number, contentType: string, body: string, aborted: boolean): Json {
    const media = contentType.split(';')[0].trim();
    let data: Json = body;
    if (media === 'text/event-stream') {
        const list = events(body);
        // A stream the app closed (a stop over chat completions) ends wherever it was cut: its opening chunk is compared.
        data = aborted ? list.slice(0, 1) : list;
    } else if (media === 'application/json') {
        data = stable(JSON.parse(body) as Json);
    }
    return { status, media, data };
}

/** A run's status is read while it moves: its phase at that moment depends on timing, not on the server's rules. */
function isStatusPoll(x: RecordedExchange): boolean {
    return x.method === 'GET' && /^\/v1\/runs\/[^/]+$/.test(x.path);
}

/** Fields of a run's status that come and go with its phase (v0.18.2 `_handle_get_run`); the others are always there. */
const PHASE_FIELDS = new Set(['status', 'last_event', 'output', 'usage', 'error']);

function statusShape(data: Json): { keys: string[]; status: string } {
    const fields = data as Record<string, Json>;
    return { keys: Object.keys(fields).filter((k) => !PHASE_FIELDS.has(k)), status: typeof fields.status };
}

/** The app answered an approval it had seen asked: the replay waits for the fake's run to ask too, however slow the machine. */
async function awaitingApproval(url: string, runPath: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
        const status = (await (await fetch(`${url}${runPath}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as { status?: string };
        if (status.status === 'waiting_for_approval') return;
        await new Promise((r) => setTimeout(r, 50));
    }
}

/**
 * The app's MCP server as the recording saw it: each `tools/call` answered with the recorded
 * answer to the same tool and arguments but the asker token (the fake passes the token of the
 * replayed request, which is the recorded one), in the recorded order.
 */
async function recordedMcpServer(recorded: NonNullable<Fixture['mcp']>): Promise<{ url: string; close: () => Promise<void> }> {
    const left = [...recorded];
    const key = (body: string) => {
        const { name, arguments: args } = (JSON.parse(body) as { params: { name: string; arguments: Record<string, unknown> } }).params;
        return JSON.stringify([name, { ...args, asker: undefined }]);
    };
    const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            const at = left.findIndex((x) => key(x.request) === key(body));
            const found = at >= 0 ? left.splice(at, 1)[0] : undefined;
            res.writeHead(found?.status ?? 500, { 'content-type': 'application/json' });
            res.end(found?.response ?? '{}');
        });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => new Promise((ok) => server.close(() => ok())) };
}

async function replay(fixture: Fixture) {
    const home = fixture.home ?? '<HERMES_TEST_HOME>';
    const mcp = fixture.mcp ? await recordedMcpServer(fixture.mcp) : undefined;
    const hermes = await startFakeHermes({
        apiKey: KEY,
        slowIntervalMs: 1000 * PACE,
        dangerDir: `${home}/scratch`,
        mcpServer: mcp ? { url: mcp.url, secret: 'recorded' } : null,
    });
    const runIds = new Map<string, string>();
    const results: { recorded: RecordedExchange; status: number; contentType: string; body: string }[] = [];
    const start = Date.now();
    const order = [...fixture.exchanges].sort((a, b) => a.startedMs - b.startedMs);
    const pending = new Map<RecordedExchange, Promise<void>>();
    try {
        for (const x of order) {
            // What had ended before this request began (a run's creation before its events) ends here first too.
            await Promise.all(order.filter((y) => y.endedMs <= x.startedMs && pending.has(y)).map((y) => pending.get(y)));
            const wait = start + x.startedMs * PACE - Date.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            const path = x.path.replace(/run_[0-9a-f]{32}/, (id) => runIds.get(id) ?? id);
            if (path.endsWith('/approval')) await awaitingApproval(hermes.url, path.slice(0, -'/approval'.length));
            const controller = new AbortController();
            const done = (async () => {
                const res = await fetch(`${hermes.url}${path}`, {
                    method: x.method,
                    headers: { ...x.headers, authorization: `Bearer ${KEY}` },
                    body: x.method === 'GET' ? undefined : x.body,
                    signal: controller.signal,
                });
                let body = '';
                if (x.aborted) {
                    // Read as long as the app did, then close as it did.
                    const reader = res.body!.getReader();
                    const until = start + x.endedMs * PACE;
                    const decoder = new TextDecoder();
                    while (Date.now() < until) {
                        const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(0, until - Date.now())))]);
                        if (!next || next.done) break;
                        body += decoder.decode(next.value, { stream: true });
                    }
                    controller.abort();
                } else {
                    body = await res.text();
                }
                body = body.split(home).join('<HERMES_TEST_HOME>');
                results.push({ recorded: x, status: res.status, contentType: res.headers.get('content-type') ?? '', body });
                const created = x.method === 'POST' && x.path === '/v1/runs' ? (JSON.parse(x.response) as { run_id?: string }).run_id : undefined;
                if (created) runIds.set(created, (JSON.parse(body) as { run_id: string }).run_id);
            })();
            pending.set(x, done);
        }
        await Promise.all(pending.values());
    } finally {
        await hermes.close();
        await mcp?.close();
    }
    return results.sort((a, b) => order.indexOf(a.recorded) - order.indexOf(b.recorded));
}

test('the real-server recordings are present (npm run test:real-hermes with HERMES_REAL_RECORD=1)', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(11);
    const kinds = new Set(
        fixtures.flatMap((f) =>
            f.exchanges.map((x) => `${x.method} ${x.path.replace(/run_[0-9a-f]{32}/, '{id}').replace(/sessions\/[^/]+/, 'sessions/{id}')}`),
        ),
    );
    expect([...kinds].sort()).toEqual([
        'GET /api/sessions/{id}/messages',
        'GET /v1/runs/{id}',
        'GET /v1/runs/{id}/events',
        'POST /v1/chat/completions',
        'POST /v1/runs',
        'POST /v1/runs/{id}/approval',
        'POST /v1/runs/{id}/stop',
    ]);
});

describe.each(fixtures.map((f) => [f.scenario, f] as const))('the fake answers as v0.18.2 did: %s', (_name, fixture) => {
    it('every exchange', async () => {
        for (const { recorded, status, contentType, body } of await replay(fixture)) {
            const where = `${recorded.method} ${recorded.path}`;
            const real = answer(recorded.status, recorded.contentType, recorded.response, recorded.aborted === true) as Record<string, Json>;
            const fake = answer(status, contentType, body, recorded.aborted === true) as Record<string, Json>;
            if (isStatusPoll(recorded)) {
                expect({ where, http: fake.status, ...statusShape(fake.data) }).toEqual({ where, http: real.status, ...statusShape(real.data) });
            } else {
                expect({ where, ...fake }).toEqual({ where, ...real });
            }
        }
    }, 20_000);
});
