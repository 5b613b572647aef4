/**
 * Images on their way to Hermes: the shape the client sends on each transport, the fake Hermes answering image turns
 * exactly as the real v0.18.2 did (test/fixtures/hermes-transcripts/img*, docs/hermes-multimodal.md), and what the fake
 * records so an end-to-end test can say "the image reached Hermes in the accepted shape".
 */
import * as fs from 'fs';
import * as path from 'path';
import { HermesClient } from '../../../src/hermes/client';
import { ImagePart, takesImages } from '../../../src/hermes/content';
import { HermesError } from '../../../src/hermes/errors';
import { FetchTransport } from '../../../src/hermes/fetchTransport';
import { HermesTransport, HttpRequest, HttpResult } from '../../../src/hermes/transport';
import { DEFAULT_OPTIONS } from '../../../src/settings/config';
import { FakeHermes, startFakeHermes } from '../../../fake-hermes';

const TRANSCRIPTS = path.resolve(__dirname, '../../fixtures/hermes-transcripts');
const KEY = 'k'.repeat(32);
const PNG_URL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const IMAGES: ImagePart[] = [{ dataUrl: PNG_URL }];

// ---------------------------------------------------------------- the client's shapes

/** Answers every request with `answer` and keeps what was sent. */
class Recorder implements HermesTransport {
    public readonly requests: HttpRequest[] = [];
    constructor(private readonly answer: HttpResult) {}
    public async send(req: HttpRequest): Promise<HttpResult> {
        this.requests.push(req);
        return this.answer;
    }
    public async stream(req: HttpRequest, onText: (text: string) => void) {
        this.requests.push(req);
        onText(this.answer.body);
        return { status: this.answer.status, headers: this.answer.headers, body: '' };
    }
}

const config = { ...DEFAULT_OPTIONS, hermesUrl: 'http://hermes.test:8642', hermesApiKey: 'sk-test-0123456789abcdef', hermesTimeoutSeconds: 30 };
const chatOk: HttpResult = { status: 200, headers: {}, body: JSON.stringify({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] }) };
const streamOk: HttpResult = { status: 200, headers: {}, body: 'data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' };
const runOk: HttpResult = { status: 202, headers: {}, body: '{"run_id": "run_0123456789abcdef0123456789abcdef", "status": "started"}' };
const turn = { sessionId: 's1', sessionKey: 'agent:main:rocketchat:group:R', system: 'sys', user: '[alice] look', idempotencyKey: 'M1' };
const run = { input: '[alice] look', instructions: 'ctx', sessionId: 's1', sessionKey: 'agent:main:rocketchat:group:R', idempotencyKey: 'M1' };
const parts = [
    { type: 'text', text: '[alice] look' },
    { type: 'image_url', image_url: { url: PNG_URL } },
];

describe('HermesClient with images', () => {
    it('chat completions: the user content becomes a text part and image_url parts, the system message stays a string', async () => {
        const t = new Recorder(chatOk);
        await new HermesClient(t, config).chat({ ...turn, images: IMAGES });
        expect(t.requests[0].body).toBe(
            JSON.stringify({
                model: 'hermes-agent',
                stream: false,
                messages: [
                    { role: 'system', content: 'sys' },
                    { role: 'user', content: parts },
                ],
            }),
        );
        const s = new Recorder(streamOk);
        await new HermesClient(s, config).chatStream({ ...turn, images: IMAGES }, () => undefined);
        expect(JSON.parse(s.requests[0].body as string).messages[1].content).toEqual(parts);
    });

    it('runs: `input` becomes one user message carrying the same parts; the rest of the body is unchanged', async () => {
        const t = new Recorder(runOk);
        await new HermesClient(t, config).createRun({ ...run, images: IMAGES, history: [{ role: 'user', content: 'earlier' }] });
        expect(t.requests[0].body).toBe(
            JSON.stringify({
                model: 'hermes-agent',
                input: [{ role: 'user', content: parts }],
                instructions: 'ctx',
                session_id: 's1',
                conversation_history: [{ role: 'user', content: 'earlier' }],
            }),
        );
    });

    it('without images (or with none) the bodies are the text-only ones, byte for byte', async () => {
        for (const images of [undefined, []]) {
            const c = new Recorder(chatOk);
            await new HermesClient(c, config).chat({ ...turn, images });
            expect(c.requests[0].body).toBe(
                '{"model":"hermes-agent","stream":false,"messages":[{"role":"system","content":"sys"},{"role":"user","content":"[alice] look"}]}',
            );
            const r = new Recorder(runOk);
            await new HermesClient(r, config).createRun({ ...run, images });
            expect(r.requests[0].body).toBe('{"model":"hermes-agent","input":"[alice] look","instructions":"ctx","session_id":"s1"}');
        }
    });

    it('an image-only turn sends no empty text part', async () => {
        const t = new Recorder(chatOk);
        await new HermesClient(t, config).chat({ ...turn, user: '', images: IMAGES });
        expect(JSON.parse(t.requests[0].body as string).messages[1].content).toEqual([{ type: 'image_url', image_url: { url: PNG_URL } }]);
    });

    it.each([
        'data:text/plain;base64,aGVsbG8=',
        'data:image/svg+xml;base64,PHN2Zy8+',
        'data:image/png,raw',
        'https://example.com/a.png',
        'file:///etc/passwd',
        `${PNG_URL}\n`,
        'data:image/png;base64,',
    ])('refuses %j before sending: runs would hand it to the model unchecked', async (dataUrl) => {
        const t = new Recorder(runOk);
        const client = new HermesClient(t, config);
        await expect(client.createRun({ ...run, images: [{ dataUrl }] })).rejects.toEqual(expect.objectContaining({ kind: 'rejected' }));
        await expect(client.chat({ ...turn, images: [{ dataUrl }] })).rejects.toBeInstanceOf(HermesError);
        expect(t.requests).toEqual([]);
    });

    it('takesImages: from v0.11.0 (chat completions keep images since then); unknown versions do not', () => {
        expect(takesImages('0.18.2')).toBe(true);
        expect(takesImages('0.11.0')).toBe(true);
        expect(takesImages('1.0.0')).toBe(true);
        expect(takesImages('0.10.0')).toBe(false);
        expect(takesImages('0.9.12')).toBe(false);
        expect(takesImages('dev')).toBe(false);
        expect(takesImages(undefined)).toBe(false);
    });
});

// ---------------------------------------------------------------- the fake against the recordings

interface Exchange {
    method: string;
    path: string;
    headers: Record<string, string>;
    body: string;
    status: number;
    reason: string;
    responseHeaders: Array<[string, string]>;
    responseBody: string;
}

function transcript(name: string): Exchange {
    const file = fs.readdirSync(TRANSCRIPTS).find((f) => f.startsWith(`${name}_`));
    if (!file) throw new Error(`no transcript ${name}`);
    const [req, resp] = fs.readFileSync(path.join(TRANSCRIPTS, file), 'utf8').split('=== REQUEST ===\n')[1].split('=== RESPONSE ===\n');
    const split = (part: string) => {
        const buf = Buffer.from(part, 'utf8');
        const end = buf.indexOf('\r\n\r\n');
        return { lines: buf.subarray(0, end).toString('utf8').split('\r\n'), rest: buf.subarray(end + 4) };
    };
    const pairs = (lines: string[]) => lines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()] as [string, string]);
    const rq = split(req);
    const rs = split(resp);
    const [method, target] = rq.lines[0].split(' ');
    const reqHeaders = pairs(rq.lines.slice(1));
    const length = (hs: Array<[string, string]>) => Number(hs.find(([k]) => k.toLowerCase() === 'content-length')?.[1] ?? 0);
    const status = /^HTTP\/1\.1 (\d+) (.*)$/.exec(rs.lines[0]) as RegExpExecArray;
    const responseHeaders = pairs(rs.lines.slice(1));
    const headers: Record<string, string> = {};
    for (const [k, v] of reqHeaders) {
        if (!['host', 'user-agent', 'accept', 'content-length'].includes(k.toLowerCase())) headers[k] = v.replace('<API_SERVER_KEY>', KEY);
    }
    return {
        method,
        path: target,
        headers,
        body: rq.rest.subarray(0, length(reqHeaders)).toString('utf8'),
        status: Number(status[1]),
        reason: status[2],
        responseHeaders,
        responseBody: rs.rest.subarray(0, length(responseHeaders)).toString('utf8'),
    };
}

/** Ids and times differ between runs of a server; everything else must not. */
function normalise(text: string): string {
    return text
        .replace(/run_[0-9a-f]{32}/g, '<run>')
        .replace(/chatcmpl-[0-9a-f]{29}/g, '<chatcmpl>')
        .replace(/"(created|created_at|updated_at|timestamp)": \d+(\.\d+)?/g, '"$1": <T>')
        .replace(/"id": \d+/g, '"id": <rowid>');
}

const VOLATILE = new Set(['date', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);
const comparable = (hs: Array<[string, string]>) =>
    hs
        .map(([k, v]) => [k.toLowerCase(), v] as [string, string])
        .filter(([k]) => !VOLATILE.has(k))
        .sort(([a], [b]) => a.localeCompare(b));

let hermes: FakeHermes;

async function replay(name: string, target?: string): Promise<{ status: number; body: string }> {
    const ex = transcript(name);
    const res = await fetch(hermes.url + (target ?? ex.path), { method: ex.method, headers: ex.headers, body: ex.method === 'GET' ? undefined : ex.body });
    const body = await res.text();
    const headers: Array<[string, string]> = [];
    res.headers.forEach((v, k) => headers.push([k, v]));
    expect(res.status).toBe(ex.status);
    expect(res.statusText).toBe(ex.reason);
    expect(comparable(headers)).toEqual(comparable(ex.responseHeaders));
    expect(normalise(body)).toBe(normalise(ex.responseBody));
    return { status: res.status, body };
}

beforeAll(async () => {
    hermes = await startFakeHermes({ apiKey: KEY });
});

afterEach(() => hermes.reset());

afterAll(async () => {
    await hermes.close();
});

describe('fake Hermes: chat completions refuse what v0.18.2 refuses, byte for byte', () => {
    it.each([
        ['img04', 'a non-image data: URL'],
        ['img05', 'a file:// URL'],
        ['img06', 'an image part without a URL'],
        ['img07', 'a file part'],
        ['img10', 'an input_audio part'],
    ])('%s: %s', async (name) => {
        await replay(name);
        expect(hermes.turns).toEqual([]);
    });
});

describe('fake Hermes: image turns as v0.18.2 with a vision model answers them', () => {
    it('img22: chat completion with a text part and a data-URL image; the agent gets both', async () => {
        await replay('img22');
        expect(hermes.turns).toEqual([
            expect.objectContaining({
                kind: 'chat',
                sessionId: 'tx-image-chat-v1',
                content: [
                    { type: 'text', text: '[alice] what is in this picture?' },
                    { type: 'image_url', image_url: { url: PNG_URL } },
                ],
                images: [PNG_URL],
            }),
        ]);
    });

    it('img02/img13: the transcript keeps the text and a [screenshot] line, not the image', async () => {
        await replay('img22');
        const res = await fetch(`${hermes.url}/api/sessions/tx-image-chat-v1/messages`, { headers: { Authorization: `Bearer ${KEY}` } });
        const rows = (await res.json()) as { data: Array<{ role: string; content: string }> };
        type Rows = { data: Array<{ content: string }> };
        // Recorded after the same user message on chat (img02) and on a run (img13).
        for (const name of ['img02', 'img13']) {
            expect(rows.data[0].content).toBe((JSON.parse(transcript(name).responseBody) as Rows).data[0].content);
        }
        expect(rows.data[0].content).toBe('[alice] what is in this picture?\n[screenshot]');
    });

    it('img27: without X-Hermes-Session-Id the derived id hashes the Python repr of the first user parts', async () => {
        const ex = transcript('img27');
        const res = await fetch(hermes.url + ex.path, { method: 'POST', headers: ex.headers, body: ex.body });
        expect(res.status).toBe(200);
        // Only the id: the recorded stand-in model folds the text's line break into a space, which the fake's does not.
        expect(res.headers.get('x-hermes-session-id')).toBe('api-7bbf6230d0ad4882');
        expect(ex.responseHeaders).toContainEqual(['X-Hermes-Session-Id', 'api-7bbf6230d0ad4882']);
    });

    it('img03: Responses-style input_text/input_image parts are accepted and normalised to text/image_url', async () => {
        const ex = transcript('img03');
        const res = await fetch(hermes.url + ex.path, { method: 'POST', headers: ex.headers, body: ex.body });
        expect(res.status).toBe(200);
        expect(hermes.turns[0].content).toEqual([
            { type: 'text', text: 'responses-style parts' },
            { type: 'image_url', image_url: { url: PNG_URL } },
        ]);
    });

    it('img23/img24: a run whose input is one user message with parts; the agent gets the parts as sent', async () => {
        const created = await replay('img23');
        const runId = (JSON.parse(created.body) as { run_id: string }).run_id;
        await hermes.waitForRunStatus(runId, 'completed');
        await replay('img24', `/v1/runs/${runId}`);
        expect(hermes.turns[0]).toEqual(
            expect.objectContaining({
                kind: 'run',
                runId,
                content: [
                    { type: 'text', text: '[alice] what is in this picture?' },
                    { type: 'image_url', image_url: { url: PNG_URL } },
                ],
                images: [PNG_URL],
            }),
        );
    });

    it('img25/img17/img16: runs check nothing: Responses-style parts and a non-image data URL pass as sent, an `images` field is ignored', async () => {
        await replay('img25');
        expect(hermes.turns[0].content).toEqual([
            { type: 'input_text', text: 'responses-style items' },
            { type: 'input_image', image_url: PNG_URL },
        ]);
        expect(hermes.turns[0].images).toEqual([PNG_URL]);
        await replay('img17');
        expect(hermes.turns[1].images).toEqual(['data:text/plain;base64,aGVsbG8=']);
        await replay('img16');
        expect(hermes.turns[2].images).toBeUndefined();
    });

    it('img14/img18: a bare parts list is "No user message found in input"; a list of strings crashes the handler (500)', async () => {
        await replay('img14');
        await replay('img18');
        expect(hermes.turns).toEqual([]);
    });
});

describe('fake Hermes before v0.11 (old mode)', () => {
    it('drops image parts without an error, as the text normaliser did', async () => {
        const old = await startFakeHermes({ apiKey: KEY, mode: 'old' });
        try {
            const client = new HermesClient(new FetchTransport(), { ...config, hermesUrl: old.url, hermesApiKey: KEY });
            const health = await client.health();
            expect(takesImages(health.version)).toBe(false);
            const answer = await client.chat({ ...turn, images: IMAGES });
            expect(answer.text).toBe('ECHO: [alice] look | user_turns=1 | prev=-');
            expect(old.turns[0].images).toBeUndefined();
            expect(old.sessions.get('s1')?.[0].content).toBe('[alice] look');
        } finally {
            await old.close();
        }
    });
});

describe('the client through the fake: images reach Hermes in the accepted shape', () => {
    const live = () => new HermesClient(new FetchTransport(), { ...config, hermesUrl: hermes.url, hermesApiKey: KEY });

    it('chat, streamed chat and a run each deliver the text part and the image part', async () => {
        const answer = await live().chat({ ...turn, images: IMAGES });
        expect(answer.text).toBe('ECHO: [alice] look | user_turns=1 | prev=-');
        await live().chatStream({ ...turn, sessionId: 's2', images: IMAGES }, () => undefined);
        const runId = await live().createRun({ ...run, sessionId: 's3', images: IMAGES });
        await hermes.waitForRunStatus(runId, 'completed');
        expect(hermes.turns.map((t) => [t.kind, t.content, t.images])).toEqual([
            ['chat', parts, [PNG_URL]],
            ['chat', parts, [PNG_URL]],
            ['run', parts, [PNG_URL]],
        ]);
        expect(hermes.sessions.get('s3')?.[0].content).toBe('[alice] look\n[screenshot]');
    });
});
