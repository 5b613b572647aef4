/** One HTTP exchange with Hermes, as plain values. */
export interface HttpRequest {
    method: 'GET' | 'POST' | 'PATCH';
    url: string;
    headers: Record<string, string>;
    body?: string;
    timeoutMs: number;
    /**
     * Most bytes of answer this request may read: for `send` the whole 2xx body (default
     * MAX_BODY_BYTES), for `stream` the whole stream (default MAX_STREAM_BYTES).
     */
    maxBytes?: number;
}

/**
 * A JSON answer (health, run status, capabilities) is a few kB; a run's whole output stays
 * well under this. Anything bigger is a broken or hostile server, not an answer to read.
 */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
/**
 * One event stream, all frames together. Memory is bounded elsewhere (the SSE parser's
 * buffer, the answer cap), so this only ends a server that never stops sending. A chat
 * chunk frame is ~200 bytes per token, so an answer at the 100,000-character cap is ~4 MB
 * of stream; this leaves room for that, tool frames and reasoning.
 */
export const MAX_STREAM_BYTES = 16 * 1024 * 1024;
/** Of an error answer only the envelope matters; the rest is dropped, the status still counts. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface HttpResult {
    status: number;
    /** Header names lower-cased. */
    headers: Record<string, string>;
    body: string;
}

/** `malformed`: the answer outgrew its byte cap and was cut off unread. */
export type TransportFailure = 'timeout' | 'unreachable' | 'malformed';

/** Thrown when no usable HTTP response arrived. `detail` is safe to log (no headers, no body). */
export class TransportError extends Error {
    constructor(
        public readonly failure: TransportFailure,
        public readonly detail: string,
    ) {
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
     * `signal` closes the connection early. `timeoutMs` bounds the wait for the headers,
     * `maxBytes` the whole stream. An error thrown by `onText` closes the connection and
     * rejects the stream with that same error.
     */
    stream(request: HttpRequest, onText: (text: string) => void, signal?: AbortSignal): Promise<StreamResult>;
}
