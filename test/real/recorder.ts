import { createServer, request as httpRequest, IncomingMessage, Server } from 'http';
import { AddressInfo } from 'net';

/** One exchange between the app and a Hermes, as the recorder saw it (times relative to the scenario start). */
export interface RecordedExchange {
    scenario: string;
    startedMs: number;
    endedMs: number;
    method: string;
    path: string;
    /** The request headers that carry meaning to Hermes (never Authorization). */
    headers: Record<string, string>;
    body: string;
    status: number;
    contentType: string;
    response: string;
    /** The app closed the response before Hermes ended it. */
    aborted?: true;
}

const KEPT_HEADERS = ['content-type', 'idempotency-key', 'x-hermes-session-id', 'x-hermes-session-key'];

/**
 * A loopback proxy between the app and a real Hermes that keeps every exchange of the app's
 * (request and the whole response, streams included), so a real-server run leaves the
 * exchanges the app relies on as fixtures (test/fixtures/real-hermes-app/). The key is never
 * kept: Authorization is dropped from what is recorded, and `redact` replaces the given
 * strings (the Hermes home path) in bodies.
 */
export async function startRecorder(target: string, redact: Record<string, string> = {}) {
    const exchanges: RecordedExchange[] = [];
    let scenario = '';
    let scenarioStart = Date.now();
    const clean = (text: string) => Object.entries(redact).reduce((t, [from, to]) => t.split(from).join(to), text);
    const server: Server = createServer((req, res) => {
        const startedMs = Date.now() - scenarioStart;
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
            const body = Buffer.concat(chunks);
            const url = new URL(req.url ?? '/', target);
            const upstream = httpRequest(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (answer: IncomingMessage) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers);
                const out: Buffer[] = [];
                let kept = false;
                const keep = (aborted: boolean) => {
                    if (kept) return;
                    kept = true;
                    exchanges.push({
                        scenario,
                        startedMs,
                        endedMs: Date.now() - scenarioStart,
                        method: req.method ?? 'GET',
                        path: req.url ?? '/',
                        headers: Object.fromEntries(KEPT_HEADERS.filter((h) => req.headers[h] !== undefined).map((h) => [h, String(req.headers[h])])),
                        body: clean(body.toString('utf8')),
                        status: answer.statusCode ?? 0,
                        contentType: String(answer.headers['content-type'] ?? ''),
                        response: clean(Buffer.concat(out).toString('utf8')),
                        ...(aborted && { aborted: true }),
                    });
                };
                answer.on('data', (c: Buffer) => {
                    out.push(c);
                    res.write(c);
                });
                answer.on('end', () => {
                    res.end();
                    keep(false);
                });
                // The app closed the stream first (a stop over chat completions): keep what came, end the upstream.
                res.on('close', () => {
                    if (answer.complete) return;
                    keep(true);
                    answer.destroy();
                });
            });
            upstream.on('error', () => res.destroy());
            upstream.end(body);
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        exchanges,
        /** Exchanges from now on belong to `name`; their times count from now. */
        begin(name: string): void {
            scenario = name;
            scenarioStart = Date.now();
        },
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
}
