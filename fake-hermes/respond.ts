/**
 * How aiohttp (as configured by Hermes) puts a response on the wire.
 *
 * The transcripts show a fixed header order, which Node keeps when headers are
 * set one by one:
 * - JSON (`web.json_response`): the handler's own headers first
 *   (`X-Hermes-Session-Id`, `Retry-After`, ...), then `Content-Type`, then the
 *   security headers added by Hermes's middleware, then `Content-Length`,
 *   `Date`, `Server`.
 * - SSE (`web.StreamResponse`): `Content-Type`, `Cache-Control`,
 *   `X-Accel-Buffering`, the session headers, `Transfer-Encoding: chunked`,
 *   `Date`, `Server`. No security headers: the middleware runs after the
 *   headers were already flushed.
 * - aiohttp's own errors (unknown route, wrong method, crash) are
 *   `text/plain` "404: Not Found" bodies without the security headers.
 *
 * Node adds `Connection`/`Keep-Alive` headers that aiohttp does not send; they
 * are harmless and cannot be removed without writing raw sockets.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import { pyJson } from './pyJson';

export type HeaderList = Array<[string, string]>;

const SERVER_HEADER = 'Python/3.11 aiohttp/3.8.4';

const SECURITY_HEADERS: HeaderList = [
    ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
    ['Permissions-Policy', 'camera=(), microphone=(), geolocation=()'],
    ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
    ['X-Content-Type-Options', 'nosniff'],
    ['X-Frame-Options', 'DENY'],
    ['X-XSS-Protection', '0'],
    ['Referrer-Policy', 'no-referrer'],
];

// Python 3.11 http.HTTPStatus phrases where they differ from Node's.
const PY_REASONS: Record<number, string> = {
    413: 'Request Entity Too Large',
    414: 'Request-URI Too Long',
    416: 'Requested Range Not Satisfiable',
};

function reasonPhrase(status: number): string | undefined {
    return PY_REASONS[status];
}

function applyHeaders(res: ServerResponse, status: number, headers: HeaderList): void {
    res.sendDate = false; // we write Date ourselves so it sits before Server, as aiohttp does
    res.statusCode = status;
    const reason = reasonPhrase(status);
    if (reason) res.statusMessage = reason;
    for (const [name, value] of headers) res.setHeader(name, value);
}

export function canWrite(res: ServerResponse): boolean {
    return !res.writableEnded && !res.destroyed;
}

/** A `web.json_response(body, status, headers=pre)` as Hermes sends it. */
export function sendJson(res: ServerResponse, status: number, body: unknown, pre: HeaderList = []): void {
    sendRaw(res, status, typeof body === 'string' ? body : pyJson(body), pre, 'application/json; charset=utf-8', true);
}

/** A body with explicit content type; `security` adds Hermes's middleware headers. */
export function sendRaw(res: ServerResponse, status: number, body: string | Buffer, pre: HeaderList, contentType: string | null, security: boolean): void {
    if (!canWrite(res)) return;
    const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const headers: HeaderList = [...pre];
    const hasType = pre.some(([k]) => k.toLowerCase() === 'content-type');
    if (contentType && !hasType) headers.push(['Content-Type', contentType]);
    if (security) headers.push(...SECURITY_HEADERS.filter(([k]) => !pre.some(([p]) => p.toLowerCase() === k.toLowerCase())));
    headers.push(['Content-Length', String(buf.length)]);
    headers.push(['Date', new Date().toUTCString()]);
    headers.push(['Server', SERVER_HEADER]);
    applyHeaders(res, status, headers);
    res.end(buf);
}

/** aiohttp's built-in `HTTPException` body, e.g. "404: Not Found". */
export function sendAiohttpError(res: ServerResponse, status: number, reason: string, pre: HeaderList = []): void {
    sendRaw(res, status, `${status}: ${reason}`, pre, 'text/plain; charset=utf-8', false);
}

/** aiohttp's answer when a handler raises (Hermes crashed on the input). */
export function sendAiohttpCrash(res: ServerResponse): void {
    sendRaw(res, 500, '500 Internal Server Error\n\nServer got itself in trouble', [], 'text/plain; charset=utf-8', false);
}

/**
 * Open a `web.StreamResponse` for SSE. Writes happen as chunks; a keepalive
 * comment goes out after `keepaliveMs` of silence, as Hermes does every 30 s.
 */
export class SseWriter {
    private keepaliveTimer: NodeJS.Timeout | undefined;
    closed = false;

    constructor(
        readonly res: ServerResponse,
        sessionHeaders: HeaderList,
        private readonly keepaliveMs: number,
    ) {
        applyHeaders(res, 200, [
            ['Content-Type', 'text/event-stream'],
            ['Cache-Control', 'no-cache'],
            ['X-Accel-Buffering', 'no'],
            ...sessionHeaders,
            ['Transfer-Encoding', 'chunked'],
            ['Date', new Date().toUTCString()],
            ['Server', SERVER_HEADER],
        ]);
        res.flushHeaders();
        res.on('close', () => {
            this.closed = true;
            this.stopKeepalive();
        });
        this.armKeepalive();
    }

    /** `data: <json>\n\n`, optionally preceded by `event: <name>`. */
    frame(data: unknown, event?: string): void {
        const prefix = event ? `event: ${event}\n` : '';
        this.write(`${prefix}data: ${typeof data === 'string' ? data : pyJson(data)}\n\n`);
    }

    write(text: string): void {
        if (!canWrite(this.res)) return;
        this.res.write(text);
        this.armKeepalive();
    }

    end(): void {
        this.stopKeepalive();
        if (canWrite(this.res)) this.res.end();
    }

    private armKeepalive(): void {
        this.stopKeepalive();
        if (this.keepaliveMs > 0 && !this.closed) {
            this.keepaliveTimer = setTimeout(() => this.write(': keepalive\n\n'), this.keepaliveMs);
            this.keepaliveTimer.unref();
        }
    }

    private stopKeepalive(): void {
        if (this.keepaliveTimer) clearTimeout(this.keepaliveTimer);
        this.keepaliveTimer = undefined;
    }
}

/** Reset the TCP connection (RST), so the client sees ECONNRESET. */
export function resetSocket(req: IncomingMessage): void {
    const socket = req.socket as IncomingMessage['socket'] & { resetAndDestroy?: () => void };
    if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
    else socket.destroy();
}
