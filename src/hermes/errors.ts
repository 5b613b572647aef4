import { HttpResult } from './transport';

/** Why a Hermes turn produced no answer. Each kind has one user notice (i18n `notice_<kind>`). */
export type HermesFailureKind =
    | 'not-configured'
    | 'unreachable'
    | 'timeout'
    | 'unauthorized'
    | 'rate-limited'
    | 'draining'
    | 'too-large'
    | 'incomplete'
    | 'redirect'
    | 'malformed'
    | 'server-error'
    | 'rejected';

export class HermesError extends Error {
    constructor(
        public readonly kind: HermesFailureKind,
        /** Safe for the app log: status, Hermes error code and message, never headers or keys. */
        public readonly detail: string,
        public readonly status?: number,
        public readonly retryAfterSeconds?: number,
        /** Hermes's error code from the envelope (`approval_not_active`, `run_not_found`, …). */
        public readonly code?: string,
    ) {
        super(`${kind}: ${detail}`);
        this.name = 'HermesError';
    }
}

interface ErrorEnvelope {
    error?: { message?: unknown; code?: unknown };
}

function envelopeOf(body: string): { code?: string; message?: string } {
    try {
        const parsed = JSON.parse(body) as ErrorEnvelope;
        const code = typeof parsed?.error?.code === 'string' ? parsed.error.code : undefined;
        const message = typeof parsed?.error?.message === 'string' ? parsed.error.message.slice(0, 200) : undefined;
        return { code, message };
    } catch {
        return {};
    }
}

/**
 * The longest wait a Retry-After may ask for. Hermes sends 1; a turn parked on a larger
 * value holds its conversation's queue, so a broken or hostile value must not hold it for a day.
 */
export const MAX_RETRY_AFTER_SECONDS = 60;

/**
 * Retry-After as seconds to wait (RFC 9110: delay-seconds or an HTTP-date), at most
 * MAX_RETRY_AFTER_SECONDS; undefined when the value is neither.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
    const text = value?.trim() ?? '';
    let seconds: number;
    if (/^\d+(\.\d+)?$/.test(text)) {
        seconds = Math.ceil(Number(text));
    } else if (/\d\d:\d\d:\d\d/.test(text) && Number.isFinite(Date.parse(text))) {
        // Every HTTP-date form has a hh:mm:ss; requiring one keeps Date.parse's lenient guesses
        // ("a 1" reads as 2001) out. A date in the past means "now".
        seconds = Math.max(0, Math.ceil((Date.parse(text) - now) / 1000));
    } else {
        return undefined;
    }
    return Number.isFinite(seconds) ? Math.min(seconds, MAX_RETRY_AFTER_SECONDS) : MAX_RETRY_AFTER_SECONDS;
}

/** Classifies a non-2xx answer from Hermes by its status and OpenAI-style error envelope. */
export function errorFromResponse(result: HttpResult): HermesError {
    const { status } = result;
    const { code, message } = envelopeOf(result.body);
    const retryAfterSeconds = parseRetryAfter(result.headers['retry-after']);
    const detail = `HTTP ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`;
    if (status >= 300 && status < 400) {
        const location = result.headers.location ? ` to ${result.headers.location.slice(0, 200)}` : '';
        return new HermesError('redirect', `HTTP ${status} redirect${location} (not followed: the API key stays with the configured host)`, status);
    }
    if (status === 401 || status === 403) {
        return new HermesError('unauthorized', detail, status, undefined, code);
    }
    if (status === 413) {
        return new HermesError('too-large', detail, status, undefined, code);
    }
    if (status === 429) {
        return new HermesError('rate-limited', detail, status, retryAfterSeconds, code);
    }
    if (status === 503) {
        return new HermesError('draining', detail, status, retryAfterSeconds, code);
    }
    if (status === 502 && code === 'agent_incomplete') {
        return new HermesError('incomplete', detail, status, undefined, code);
    }
    if (status >= 500) {
        return new HermesError('server-error', detail, status, undefined, code);
    }
    return new HermesError('rejected', detail, status, undefined, code);
}
