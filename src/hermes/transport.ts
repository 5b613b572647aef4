/** One HTTP exchange with Hermes, as plain values. */
export interface HttpRequest {
    method: 'GET' | 'POST';
    url: string;
    headers: Record<string, string>;
    body?: string;
    timeoutMs: number;
}

export interface HttpResult {
    status: number;
    /** Header names lower-cased. */
    headers: Record<string, string>;
    body: string;
}

export type TransportFailure = 'timeout' | 'unreachable';

/** Thrown when no HTTP response arrived at all. `detail` is safe to log (no headers, no body). */
export class TransportError extends Error {
    constructor(public readonly failure: TransportFailure, public readonly detail: string) {
        super(`${failure}: ${detail}`);
        this.name = 'TransportError';
    }
}

export interface StreamResult {
    status: number;
    headers: Record<string, string>;
    /** The body of a non-2xx answer (a 2xx body went to `onText`). */
    body: string;
}

export interface HermesTransport {
    send(request: HttpRequest): Promise<HttpResult>;
    /**
     * Like send, but a 2xx body is handed over as it arrives. Resolves when the body ends;
     * `signal` closes the connection early. `timeoutMs` bounds the wait for the headers.
     */
    stream(request: HttpRequest, onText: (text: string) => void, signal?: AbortSignal): Promise<StreamResult>;
}

/**
 * Speaks to Hermes with the runtime's own `fetch`, not the engine's IHttp: IHttp follows
 * redirects (which would hand the Bearer key to whatever host a redirect names) and cannot
 * abort on the app's own deadline. The app has the `networking` permission, which is what
 * lets the Deno child use `fetch` at all.
 */
export class FetchTransport implements HermesTransport {
    public async send(request: HttpRequest): Promise<HttpResult> {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), request.timeoutMs);
        try {
            const response = await fetch(request.url, {
                method: request.method,
                headers: request.headers,
                body: request.body,
                redirect: 'manual',
                signal: controller.signal,
            });
            const body = await response.text();
            const headers: Record<string, string> = {};
            response.headers.forEach((value, name) => {
                headers[name.toLowerCase()] = value;
            });
            return { status: response.status, headers, body };
        } catch (error) {
            if (controller.signal.aborted) {
                throw new TransportError('timeout', `no complete answer within ${Math.round(request.timeoutMs / 1000)} s`);
            }
            throw new TransportError('unreachable', describeNetworkError(error));
        } finally {
            clearTimeout(timer);
        }
    }

    public async stream(request: HttpRequest, onText: (text: string) => void, signal?: AbortSignal): Promise<StreamResult> {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), request.timeoutMs);
        signal?.addEventListener('abort', () => controller.abort(), { once: true });
        let response: Response;
        try {
            response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, redirect: 'manual', signal: controller.signal });
        } catch (error) {
            clearTimeout(timer);
            if (signal?.aborted) {
                return { status: 499, headers: {}, body: '' };
            }
            if (controller.signal.aborted) {
                throw new TransportError('timeout', `no answer within ${Math.round(request.timeoutMs / 1000)} s`);
            }
            throw new TransportError('unreachable', describeNetworkError(error));
        }
        // Headers arrived: from here the stream may legitimately stay open for the whole turn.
        clearTimeout(timer);
        const headers: Record<string, string> = {};
        response.headers.forEach((value, name) => {
            headers[name.toLowerCase()] = value;
        });
        if (response.status < 200 || response.status >= 300 || !response.body) {
            return { status: response.status, headers, body: await response.text().catch(() => '') };
        }
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        try {
            for (;;) {
                const { done, value } = await reader.read();
                if (done) {
                    break;
                }
                onText(decoder.decode(value, { stream: true }));
            }
        } catch (error) {
            if (!signal?.aborted) {
                throw new TransportError('unreachable', `stream broke: ${describeNetworkError(error)}`);
            }
        }
        return { status: response.status, headers, body: '' };
    }
}

/** Names the network cause (refused, DNS, reset) without echoing request data. */
export function describeNetworkError(error: unknown): string {
    const parts: string[] = [];
    let current: unknown = error;
    for (let depth = 0; current && depth < 4; depth++) {
        const e = current as { name?: string; message?: string; code?: string; cause?: unknown };
        const text = [e.code, e.message].filter(Boolean).join(' ');
        if (text && !parts.includes(text)) {
            parts.push(text);
        }
        current = e.cause;
    }
    const joined = parts.join(' <- ').replace(/Bearer\s+\S+/gi, 'Bearer [redacted]');
    return joined.length > 0 ? joined.slice(0, 300) : 'network error';
}
