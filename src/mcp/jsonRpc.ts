/*
 * JSON-RPC 2.0 as MCP's Streamable HTTP transport carries it: one message per POST (the
 * 2025-06-18 revision removed batches). Hand-written rather than the official SDK's: the SDK
 * needs zod 4, which fails at construct in the Apps-Engine runtime (`Cannot read properties of
 * undefined (reading '__zod_globalConfig')`; the app bundles zod 3.23.8), and its bundle is ~590 KB with ajv for the one server feature (elicitation) the app
 * does not use. What this file does is small, pure and tested line by line.
 */

export type RpcId = string | number;

/** The error codes of JSON-RPC 2.0 that MCP uses. */
export const RPC_ERROR = {
    parse: -32700,
    invalidRequest: -32600,
    methodNotFound: -32601,
    invalidParams: -32602,
    internal: -32603,
} as const;

export type RpcMessage =
    | { kind: 'request'; id: RpcId; method: string; params: Record<string, unknown> }
    | { kind: 'notification'; method: string }
    /** A response or error from the client (to a server request this server never makes): accepted, ignored. */
    | { kind: 'response' }
    | { kind: 'invalid'; id: RpcId | null; message: string };

const isId = (v: unknown): v is RpcId => (typeof v === 'string' && v.length <= 200) || (typeof v === 'number' && Number.isFinite(v));

/** What one POST body is, as JSON-RPC: a request, a notification, a client's response, or why it is none. */
export function readMessage(body: unknown): RpcMessage {
    if (Array.isArray(body)) {
        return { kind: 'invalid', id: null, message: 'Batches are not supported: send one message per request.' };
    }
    if (typeof body !== 'object' || body === null) {
        return { kind: 'invalid', id: null, message: 'The body is not a JSON-RPC message.' };
    }
    const m = body as Record<string, unknown>;
    const id = isId(m.id) ? m.id : null;
    if (m.jsonrpc !== '2.0') {
        return { kind: 'invalid', id, message: 'jsonrpc must be "2.0".' };
    }
    if (typeof m.method !== 'string') {
        return 'result' in m || 'error' in m ? { kind: 'response' } : { kind: 'invalid', id, message: 'A request needs a method.' };
    }
    const params = m.params === undefined ? {} : m.params;
    if (typeof params !== 'object' || params === null || Array.isArray(params)) {
        return { kind: 'invalid', id, message: 'params must be an object.' };
    }
    if (!('id' in m)) {
        return { kind: 'notification', method: m.method };
    }
    if (id === null) {
        return { kind: 'invalid', id: null, message: 'id must be a string or a number.' };
    }
    return { kind: 'request', id, method: m.method, params: params as Record<string, unknown> };
}

export function rpcResult(id: RpcId, result: unknown): Record<string, unknown> {
    return { jsonrpc: '2.0', id, result };
}

export function rpcError(id: RpcId | null, code: number, message: string): Record<string, unknown> {
    return { jsonrpc: '2.0', id, error: { code, message } };
}
