import * as http from 'http';
import { AddressInfo } from 'net';
import { gzipSync } from 'zlib';
import { DEFAULT_OPTIONS } from '../../../src/settings/config';
import { ToolProgress } from '../../../src/hermes/chat';
import { HermesClient } from '../../../src/hermes/client';
import { MAX_ANSWER_CHARS } from '../../../src/hermes/content';
import { RunEvent } from '../../../src/hermes/runs';
import { errorFromResponse, HermesError, MAX_RETRY_AFTER_SECONDS, parseRetryAfter } from '../../../src/hermes/errors';
import { LiveTurn, MAX_LIVE_TOOLS } from '../../../src/hermes/liveTurn';
import { LiveTurns } from '../../../src/hermes/liveTurns';
import { MAX_SSE_BUFFER_CHARS, SseFrame, SseLimitError, SseParser } from '../../../src/hermes/sse';
import { FetchTransport } from '../../../src/hermes/fetchTransport';
import { HermesTransport, HttpRequest, HttpResult, MAX_BODY_BYTES, MAX_STREAM_BYTES, TransportError } from '../../../src/hermes/transport';

// Issue 17, defect 3: nothing Hermes sends may grow the app's memory or time without bound.

const KEY = 'sk-test-0123456789abcdef';

interface Served {
    url: string;
    close: () => Promise<void>;
}

/** A real HTTP server on a free loopback port: the FetchTransport talks to it with the runtime's fetch. */
async function serve(handler: http.RequestListener): Promise<Served> {
    const server = http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `http://127.0.0.1:${port}`,
        close: () =>
            new Promise<void>((resolve) => {
                server.closeAllConnections();
                server.close(() => resolve());
            }),
    };
}

/**
 * Writes `piece` until `limit` bytes went out, honouring backpressure so the server never
 * runs ahead of the client. Resolves when the response closes: `finished` is false when
 * the client hung up first.
 */
function pump(res: http.ServerResponse, piece: Buffer, limit: number): Promise<{ written: number; finished: boolean }> {
    return new Promise((resolve) => {
        let written = 0;
        let finished = false;
        res.on('close', () => resolve({ written, finished }));
        const write = () => {
            while (written < limit) {
                written += piece.length;
                if (!res.write(piece)) {
                    res.once('drain', write);
                    return;
                }
            }
            finished = true;
            res.end();
        };
        write();
    });
}

const request = (url: string, timeoutMs = 5_000): HttpRequest => ({ method: 'GET', url, headers: {}, timeoutMs });

describe('FetchTransport size bounds', () => {
    let served: Served | undefined;
    afterEach(async () => {
        await served?.close();
        served = undefined;
    });

    it('send stops reading a 2xx body past MAX_BODY_BYTES, fails as malformed and hangs up', async () => {
        let outcome: Promise<{ written: number; finished: boolean }> | undefined;
        served = await serve((_req, res) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            outcome = pump(res, Buffer.alloc(64 * 1024, 'x'), 64 * 1024 * 1024);
        });
        const error = await new FetchTransport().send(request(served.url)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TransportError);
        expect((error as TransportError).failure).toBe('malformed');
        expect((error as TransportError).detail).toBe(`response larger than ${MAX_BODY_BYTES} bytes`);
        // The connection was closed long before the server could send its 64 MiB.
        const { written, finished } = await outcome!;
        expect(finished).toBe(false);
        expect(written).toBeLessThan(16 * 1024 * 1024);
    });

    it('send refuses a declared Content-Length over the cap without reading it', async () => {
        served = await serve((_req, res) => {
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_BODY_BYTES + 1) });
            res.write('{"status":');
        });
        const error = await new HermesClient(new FetchTransport(), { ...DEFAULT_OPTIONS, hermesUrl: served.url, hermesApiKey: KEY, hermesTimeoutSeconds: 5 })
            .health()
            .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(HermesError);
        expect((error as HermesError).kind).toBe('malformed');
        expect((error as HermesError).message).toContain(`response larger than ${MAX_BODY_BYTES} bytes`);
    });

    it('send reads a body of declared length whole, multi-byte text intact', async () => {
        const text = JSON.stringify({ output: 'Grüße, 世界 '.repeat(20_000) });
        served = await serve((_req, res) => {
            const body = Buffer.from(text);
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
            // In small pieces: a multi-byte character is split between writes.
            for (let i = 0; i < body.length; i += 7) {
                res.write(body.subarray(i, i + 7));
            }
            res.end();
        });
        const result = await new FetchTransport().send(request(served.url));
        expect(result.status).toBe(200);
        expect(result.body).toBe(text);
    });

    it('send bounds a compressed body by what it inflates to, not by its declared length', async () => {
        // 64 MiB of spaces gzip to ~64 kB: a declared length far under the cap.
        const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, ' '));
        expect(bomb.length).toBeLessThan(MAX_BODY_BYTES);
        served = await serve((_req, res) => {
            res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
            res.end(bomb);
        });
        const error = await new FetchTransport().send(request(served.url)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TransportError);
        expect((error as TransportError).failure).toBe('malformed');
        expect((error as TransportError).detail).toBe(`response larger than ${MAX_BODY_BYTES} bytes`);
    });

    it('send still classifies an error status whose body is huge (keeps the head, drops the rest)', async () => {
        served = await serve((_req, res) => {
            res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
            res.write('{"error":{"code":"rate_limit_exceeded","message":"slow down"}}');
            void pump(res, Buffer.alloc(64 * 1024, ' '), 64 * 1024 * 1024);
        });
        const result = await new FetchTransport().send(request(served.url));
        expect(result.status).toBe(429);
        expect(result.body.length).toBeLessThan(MAX_BODY_BYTES);
        expect(errorFromResponse(result)).toMatchObject({ kind: 'rate-limited', retryAfterSeconds: 2 });
    });

    it('stream aborts past MAX_STREAM_BYTES although its header timer has long been cleared', async () => {
        let outcome: Promise<{ written: number; finished: boolean }> | undefined;
        served = await serve((_req, res) => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            // Endless keepalive comments: the parser keeps nothing of them, only the byte cap ends this.
            outcome = pump(res, Buffer.from(`: ${'k'.repeat(1021)}\n`), MAX_STREAM_BYTES * 4);
        });
        let received = 0;
        const error = await new FetchTransport()
            .stream(request(served.url, 1_000), (text) => {
                received += text.length;
            })
            .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TransportError);
        expect((error as TransportError).failure).toBe('malformed');
        expect((error as TransportError).detail).toBe(`stream larger than ${MAX_STREAM_BYTES} bytes`);
        expect(received).toBeLessThanOrEqual(MAX_STREAM_BYTES);
        const { finished } = await outcome!;
        expect(finished).toBe(false);
    });

    it('a run event stream whose frame outgrows the SSE cap becomes a malformed HermesError and closes', async () => {
        let outcome: Promise<{ written: number; finished: boolean }> | undefined;
        served = await serve((_req, res) => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write('data: {"event":"message.delta","delta":"');
            // One frame that never ends: without a cap the parser buffers all of it.
            outcome = pump(res, Buffer.alloc(64 * 1024, 'x'), 4 * MAX_SSE_BUFFER_CHARS);
        });
        const client = new HermesClient(new FetchTransport(), { ...DEFAULT_OPTIONS, hermesUrl: served.url, hermesApiKey: KEY, hermesTimeoutSeconds: 5 });
        const error = await client.runEvents('run_1', () => undefined).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(HermesError);
        expect((error as HermesError).kind).toBe('malformed');
        expect((error as HermesError).message).toContain(`larger than ${MAX_SSE_BUFFER_CHARS} characters`);
        const { finished } = await outcome!;
        expect(finished).toBe(false);
    });
});

/**
 * Counts the characters string work touches while `run` runs: one per `charCodeAt`, the whole
 * string for an `indexOf` (an upper bound), and the characters a `slice` or `join` produces.
 * `run` is handed the count so far, to stop early once it is past a budget.
 */
function countCharacterWork(run: (soFar: () => number) => void): number {
    const { charCodeAt, indexOf, slice } = String.prototype;
    const { join } = Array.prototype;
    let count = 0;
    String.prototype.charCodeAt = function (this: string, i: number) {
        count++;
        return charCodeAt.call(this, i);
    };
    String.prototype.indexOf = function (this: string, ...args: [string, number?]) {
        count += this.length;
        return indexOf.apply(this, args);
    };
    String.prototype.slice = function (this: string, ...args: [number?, number?]) {
        const part = slice.apply(this, args);
        count += part.length;
        return part;
    };
    Array.prototype.join = function (this: unknown[], separator?: string) {
        const whole = join.call(this, separator);
        count += whole.length;
        return whole;
    };
    try {
        run(() => count);
    } finally {
        String.prototype.charCodeAt = charCodeAt;
        String.prototype.indexOf = indexOf;
        String.prototype.slice = slice;
        Array.prototype.join = join;
    }
    return count;
}

describe('SseParser bounds and line ends', () => {
    it('parses a 1 MB frame arriving in 1-byte chunks in linear time', () => {
        const payload = 'x'.repeat(1_000_000);
        const text = `event: big\ndata: ${payload}\n\n`;
        const parser = new SseParser();
        const frames: SseFrame[] = [];
        // The parser's work, counted rather than timed: characters it reads one by one, searches
        // through or copies (cut out, joined). A quadratic parser reads or copies what it has
        // buffered again at every push: about 5·10¹¹ characters here, not a few million.
        const budget = 10 * text.length;
        const touched = countCharacterWork((soFar) => {
            for (let i = 0; i < text.length; i++) {
                frames.push(...parser.push(text[i]));
                // Give up early past the budget, so a quadratic parser fails fast.
                if ((i & 0x3fff) === 0 && soFar() > budget) {
                    break;
                }
            }
        });
        expect(touched).toBeLessThanOrEqual(budget);
        expect(frames).toEqual([{ event: 'big', data: payload }]);
    });

    it('treats a \\r ending one chunk and a \\n starting the next as one line end', () => {
        const parser = new SseParser();
        const frames = [...parser.push('data: a\r'), ...parser.push('\ndata: b\r'), ...parser.push('\n\r'), ...parser.push('\n')];
        expect(frames).toEqual([{ event: undefined, data: 'a\nb' }]);
    });

    it('keeps WHATWG line ends, comments, event names and data joining', () => {
        const parser = new SseParser();
        const text = 'event: one\rdata: x\r\rdata:no-space\ndata\n\n: comment\r\n\r\nevent: two\r\ndata: {"y":1}\r\n\r\n';
        const crlf = text.indexOf('\r\n') + 1;
        for (const chunks of [[text], [...text], [text.slice(0, crlf), text.slice(crlf)]]) {
            const p = new SseParser();
            expect(chunks.flatMap((c) => p.push(c))).toEqual([
                { event: 'one', data: 'x' },
                { event: undefined, data: 'no-space\n' },
                { event: 'two', data: '{"y":1}' },
            ]);
        }
        expect(parser.push('data: unterminated')).toEqual([]);
    });

    it('throws SseLimitError when a partial line outgrows the cap', () => {
        const parser = new SseParser();
        parser.push('data: ');
        expect(() => {
            for (let i = 0; i < 20; i++) {
                parser.push('x'.repeat(64 * 1024));
            }
        }).toThrow(SseLimitError);
    });

    it('throws SseLimitError when many short data lines of one frame outgrow the cap', () => {
        const parser = new SseParser();
        const line = `data: ${'y'.repeat(1000)}\n`;
        expect(() => {
            for (let i = 0; i < 2_000; i++) {
                parser.push(line);
            }
        }).toThrow(`larger than ${MAX_SSE_BUFFER_CHARS} characters`);
        // Frames under the cap keep flowing.
        const ok = new SseParser();
        expect(ok.push(`${line.repeat(100)}\n`)).toHaveLength(1);
    });
});

/** A transport whose stream hands over the scripted body in pieces of `pieceSize`. */
class PiecewiseTransport implements HermesTransport {
    constructor(
        private readonly result: HttpResult,
        private readonly pieceSize = 4096,
    ) {}
    public async send(): Promise<HttpResult> {
        return this.result;
    }
    public async stream(_req: HttpRequest, onText: (text: string) => void) {
        for (let i = 0; i < this.result.body.length; i += this.pieceSize) {
            onText(this.result.body.slice(i, i + this.pieceSize));
        }
        return { status: this.result.status, headers: this.result.headers, body: '' };
    }
}

const config = { ...DEFAULT_OPTIONS, hermesUrl: 'http://hermes.test:8642', hermesApiKey: KEY, hermesTimeoutSeconds: 30 };
const turn = { sessionId: 'rc_abc_g0', sessionKey: 'agent:main:rocketchat:dm:R', system: 'sys', user: 'hello', idempotencyKey: 'MSG1' };
const big = Array.from({ length: 30 }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(5_000)).join('');

describe('answer text cap', () => {
    it('chatStream keeps the first MAX_ANSWER_CHARS and says it was truncated', async () => {
        const frames = big.match(/.{1,5000}/g)!.map((part) => `data: ${JSON.stringify({ choices: [{ delta: { content: part } }] })}\n\n`);
        const body = `${frames.join('')}data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;
        const client = new HermesClient(new PiecewiseTransport({ status: 200, headers: {}, body }), config);
        const answer = await client.chatStream(turn, () => undefined);
        expect(answer.text).toBe(big.slice(0, MAX_ANSWER_CHARS));
        expect(answer.truncated).toBe(true);
        expect(answer.finishReason).toBe('stop');
    });

    it('a short chatStream answer is not marked truncated', async () => {
        const body = `data: ${JSON.stringify({ choices: [{ delta: { content: 'hi' }, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;
        const answer = await new HermesClient(new PiecewiseTransport({ status: 200, headers: {}, body }), config).chatStream(turn, () => undefined);
        expect(answer.text).toBe('hi');
        expect(answer.truncated).toBeFalsy();
    });

    it('chat and runStatus bound their answer text too', async () => {
        const chat = new HermesClient(
            new PiecewiseTransport({ status: 200, headers: {}, body: JSON.stringify({ choices: [{ message: { content: big }, finish_reason: 'stop' }] }) }),
            config,
        );
        const answer = await chat.chat(turn);
        expect(answer.text).toHaveLength(MAX_ANSWER_CHARS);
        expect(answer.truncated).toBe(true);
        const runs = new HermesClient(new PiecewiseTransport({ status: 200, headers: {}, body: JSON.stringify({ status: 'completed', output: big }) }), config);
        const status = await runs.runStatus('run_1');
        expect(status.output).toHaveLength(MAX_ANSWER_CHARS);
        expect(status.truncated).toBe(true);
    });

    it('does not split a surrogate pair at the cut', async () => {
        const text = `${'a'.repeat(MAX_ANSWER_CHARS - 1)}😀tail`;
        const client = new HermesClient(
            new PiecewiseTransport({ status: 200, headers: {}, body: JSON.stringify({ choices: [{ message: { content: text } }] }) }),
            config,
        );
        const answer = await client.chat(turn);
        expect(answer.text).toBe('a'.repeat(MAX_ANSWER_CHARS - 1));
        expect(answer.truncated).toBe(true);
    });
});

/** Only what LiveTurns calls: the events (or progress frames) are replayed synchronously. */
function fakeHermes(events: RunEvent[], progress: ToolProgress[] = []): HermesClient {
    return {
        runEvents: async (_runId: string, onEvent: (e: RunEvent) => void) => events.forEach(onEvent),
        chatStream: async (_turn: unknown, onProgress: (p: ToolProgress) => void) => {
            progress.forEach(onProgress);
            return { text: 'done', sessionId: 's', finishReason: 'stop' };
        },
    } as unknown as HermesClient;
}

async function settled(entry: LiveTurn): Promise<void> {
    for (let i = 0; i < 100 && !entry.done; i++) {
        await new Promise((resolve) => setImmediate(resolve));
    }
    expect(entry.done).toBe(true);
}

describe('LiveTurns bounds', () => {
    it('run deltas stop growing at MAX_ANSWER_CHARS and the turn knows it was truncated', async () => {
        const deltas: RunEvent[] = big.match(/.{1,1000}/g)!.map((delta) => ({ event: 'message.delta', delta }));
        const entry = new LiveTurns().followRun('T1', fakeHermes(deltas), 'run_1');
        await settled(entry);
        expect(entry.text).toBe(big.slice(0, MAX_ANSWER_CHARS));
        expect(entry.truncated).toBe(true);
    });

    it('run.completed output is bounded as well', async () => {
        const entry = new LiveTurns().followRun(
            'T1',
            fakeHermes([
                { event: 'message.delta', delta: 'short' },
                { event: 'run.completed', output: big },
            ]),
            'run_1',
        );
        await settled(entry);
        expect(entry.output).toBe(big.slice(0, MAX_ANSWER_CHARS));
        expect(entry.truncated).toBe(true);
        expect(entry.terminal).toBe('completed');
    });

    it('a short run is not marked truncated', async () => {
        const entry = new LiveTurns().followRun(
            'T1',
            fakeHermes([
                { event: 'message.delta', delta: 'hi' },
                { event: 'run.completed', output: 'hi' },
            ]),
            'run_1',
        );
        await settled(entry);
        expect(entry).toMatchObject({ text: 'hi', output: 'hi', truncated: false, toolsDropped: 0 });
    });

    it('keeps the newest MAX_LIVE_TOOLS run tools and counts the dropped ones', async () => {
        const started: RunEvent[] = Array.from({ length: 120 }, (_, i) => ({
            event: 'tool.started',
            tool: 'terminal',
            preview: `step ${i} ${'p'.repeat(10_000)}`,
        }));
        const entry = new LiveTurns().followRun('T1', fakeHermes(started), 'run_1');
        await settled(entry);
        expect(entry.tools).toHaveLength(MAX_LIVE_TOOLS);
        expect(entry.toolsDropped).toBe(120 - MAX_LIVE_TOOLS);
        expect(entry.tools[0].label).toMatch(/^step 70 /);
        expect(entry.tools[MAX_LIVE_TOOLS - 1].label).toMatch(/^step 119 /);
        // A tool line is shown as one short line: a 10 kB preview need not be kept.
        expect(JSON.stringify(entry.tools).length).toBeLessThan(MAX_LIVE_TOOLS * 1_000);
    });

    it('keeps the newest MAX_LIVE_TOOLS chat progress lines too', async () => {
        const progress = Array.from({ length: 80 }, (_, i) => ({ tool: 'web_search', label: `q${i}`, status: 'running' }));
        const entry = new LiveTurns().startChat('T1', fakeHermes([], progress), turn);
        await settled(entry);
        expect(entry.tools.map((t) => t.label)).toEqual(progress.slice(-MAX_LIVE_TOOLS).map((p) => p.label));
        expect(entry.toolsDropped).toBe(80 - MAX_LIVE_TOOLS);
        expect(entry.truncated).toBe(false);
    });
});

describe('Retry-After', () => {
    const now = Date.UTC(2026, 11, 1, 10, 0, 0);
    const limited = (value: string): HttpResult => ({ status: 429, headers: { 'retry-after': value }, body: '' });

    it('is capped so a hostile value cannot park a session for a day', () => {
        expect(MAX_RETRY_AFTER_SECONDS).toBe(60);
        expect(errorFromResponse(limited('86400')).retryAfterSeconds).toBe(MAX_RETRY_AFTER_SECONDS);
        expect(errorFromResponse({ ...limited('99999999999999999999999'), status: 503 }).retryAfterSeconds).toBe(MAX_RETRY_AFTER_SECONDS);
        expect(errorFromResponse(limited('3')).retryAfterSeconds).toBe(3);
    });

    it('reads an HTTP-date, relative to now, capped as well', () => {
        expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30);
        expect(parseRetryAfter(new Date(now + 86_400_000).toUTCString(), now)).toBe(MAX_RETRY_AFTER_SECONDS);
        expect(parseRetryAfter(new Date(now - 5_000).toUTCString(), now)).toBe(0);
    });

    it('ignores values that are neither seconds nor a date', () => {
        for (const value of ['', '   ', '-5', '1e9', 'soon', 'a 1', 'Infinity', 'NaN']) {
            expect(parseRetryAfter(value, now)).toBeUndefined();
        }
        expect(parseRetryAfter(undefined, now)).toBeUndefined();
    });
});
