import { readMessage, rpcError, rpcResult } from '../../../src/mcp/jsonRpc';

/** JSON-RPC 2.0 as one POST body of MCP's Streamable HTTP transport (2025-06-18: no batches). */
describe('readMessage', () => {
    it.each<[string, unknown, unknown]>([
        ['a request', { jsonrpc: '2.0', id: 7, method: 'ping' }, { kind: 'request', id: 7, method: 'ping', params: {} }],
        [
            'a request with a string id and params',
            { jsonrpc: '2.0', id: 'a', method: 'x', params: { p: 1 } },
            { kind: 'request', id: 'a', method: 'x', params: { p: 1 } },
        ],
        ['a notification (no id)', { jsonrpc: '2.0', method: 'notifications/initialized' }, { kind: 'notification', method: 'notifications/initialized' }],
        ["a client's response", { jsonrpc: '2.0', id: 1, result: {} }, { kind: 'response' }],
        ["a client's error", { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } }, { kind: 'response' }],
        [
            'a batch',
            [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
            { kind: 'invalid', id: null, message: 'Batches are not supported: send one message per request.' },
        ],
        ['not an object', 'ping', { kind: 'invalid', id: null, message: 'The body is not a JSON-RPC message.' }],
        ['null', null, { kind: 'invalid', id: null, message: 'The body is not a JSON-RPC message.' }],
        ['another version', { jsonrpc: '1.0', id: 3, method: 'ping' }, { kind: 'invalid', id: 3, message: 'jsonrpc must be "2.0".' }],
        ['no method, no result', { jsonrpc: '2.0', id: 3 }, { kind: 'invalid', id: 3, message: 'A request needs a method.' }],
        ['params an array', { jsonrpc: '2.0', id: 3, method: 'x', params: [1] }, { kind: 'invalid', id: 3, message: 'params must be an object.' }],
        ['params null', { jsonrpc: '2.0', id: 3, method: 'x', params: null }, { kind: 'invalid', id: 3, message: 'params must be an object.' }],
        ['params a string', { jsonrpc: '2.0', id: 3, method: 'x', params: 's' }, { kind: 'invalid', id: 3, message: 'params must be an object.' }],
        ['an object id', { jsonrpc: '2.0', id: {}, method: 'x' }, { kind: 'invalid', id: null, message: 'id must be a string or a number.' }],
        ['a boolean id', { jsonrpc: '2.0', id: true, method: 'x' }, { kind: 'invalid', id: null, message: 'id must be a string or a number.' }],
        ['a null id', { jsonrpc: '2.0', id: null, method: 'x' }, { kind: 'invalid', id: null, message: 'id must be a string or a number.' }],
        ['an infinite id', { jsonrpc: '2.0', id: Infinity, method: 'x' }, { kind: 'invalid', id: null, message: 'id must be a string or a number.' }],
        [
            'an id of 201 characters',
            { jsonrpc: '2.0', id: 'x'.repeat(201), method: 'x' },
            { kind: 'invalid', id: null, message: 'id must be a string or a number.' },
        ],
        ['an id of 200 characters', { jsonrpc: '2.0', id: 'x'.repeat(200), method: 'x' }, { kind: 'request', id: 'x'.repeat(200), method: 'x', params: {} }],
        ['a method that is not a string', { jsonrpc: '2.0', id: 1, method: 5 }, { kind: 'invalid', id: 1, message: 'A request needs a method.' }],
    ])('%s', (_what, body, read) => {
        expect(readMessage(body)).toEqual(read);
    });
});

describe('replies', () => {
    it('a result and an error, as JSON-RPC 2.0 writes them', () => {
        expect(rpcResult(1, { a: 1 })).toEqual({ jsonrpc: '2.0', id: 1, result: { a: 1 } });
        expect(rpcError(null, -32600, 'no')).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'no' } });
    });
});
