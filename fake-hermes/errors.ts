/**
 * Hermes's error bodies, in the exact shapes it sends.
 *
 * Most errors go through Hermes's `_openai_error()`, which always writes the
 * four keys `message, type, param, code` (`param` and `code` may be null).
 * A few handlers build the dict by hand and leave keys out; those are kept
 * verbatim here because clients that parse strictly see the difference:
 * - 401 has no `param` (transcripts 04, 06, 06b);
 * - "Missing or invalid 'messages' field", "No user message found in messages",
 *   "Invalid session ID" and friends have neither `param` nor `code`.
 */
import type { ServerResponse } from 'http';
import { HeaderList, sendJson } from './respond';

export interface ErrorBody {
    error: Record<string, unknown>;
}

export function openaiError(message: string, opts: { type?: string; param?: string | null; code?: string | null } = {}): ErrorBody {
    return {
        error: {
            message,
            type: opts.type ?? 'invalid_request_error',
            param: opts.param ?? null,
            code: opts.code ?? null,
        },
    };
}

/** Hand-built `{"error": {"message", "type"}}` (no param, no code). */
export function bareError(message: string, type = 'invalid_request_error'): ErrorBody {
    return { error: { message, type } };
}

export const AUTH_ERROR: ErrorBody = {
    error: { message: 'Invalid API key', type: 'invalid_request_error', code: 'invalid_api_key' },
};

export function sendError(res: ServerResponse, status: number, body: ErrorBody, pre: HeaderList = []): void {
    sendJson(res, status, body, pre);
}

export const errors = {
    runNotFound: (runId: string) => openaiError(`Run not found: ${runId}`, { code: 'run_not_found' }),
    sessionNotFound: (id: string) => openaiError(`Session not found: ${id}`, { code: 'session_not_found' }),
    bodyTooLarge: () => openaiError('Request body too large.', { code: 'body_too_large' }),
    invalidContentLength: () => openaiError('Invalid Content-Length header.', { code: 'invalid_content_length' }),
    tooManyRuns: (max: number) => openaiError(`Too many concurrent runs (max ${max})`, { type: 'rate_limit_error', code: 'rate_limit_exceeded' }),
    draining: () => openaiError('Gateway is draining existing work; retry shortly.', { code: 'gateway_draining' }),
    internal: (detail: string) => openaiError(`Internal server error: ${detail}`, { type: 'server_error' }),
    invalidApprovalChoice: () =>
        openaiError('Invalid approval choice; expected one of: once, session, always, deny', {
            code: 'invalid_approval_choice',
        }),
    approvalNotActive: (runId: string) => openaiError(`Run has no active approval session: ${runId}`, { code: 'approval_not_active' }),
    approvalNotPending: (runId: string) => openaiError(`Run has no pending approval: ${runId}`, { code: 'approval_not_pending' }),
    idempotencyConflict: () =>
        openaiError('Idempotency-Key was already used with a different request payload', {
            code: 'idempotency_key_conflict',
        }),
    notAcceptingSteer: (runId: string) => openaiError(`Run is not accepting steer input: ${runId}`, { code: 'run_not_accepting_steer' }),
    sessionExists: (id: string) => openaiError(`Session already exists: ${id}`, { code: 'session_exists' }),
};
