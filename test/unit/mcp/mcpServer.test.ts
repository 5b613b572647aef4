import { answerMcp, McpPorts, SUPPORTED_VERSIONS, ToolOutcome } from '../../../src/mcp/mcpServer';

/** The MCP protocol part: initialize and its version, notifications, tools/list and tools/call, errors. */
function ports(outcome: ToolOutcome = { kind: 'ok', text: 'done', structured: { a: 1 } }) {
    const calls: Array<[string, Record<string, unknown>]> = [];
    const p: McpPorts = {
        tools: [{ name: 'read', title: 'Read', description: 'reads', inputSchema: { type: 'object' } }],
        call: async (name, args) => (calls.push([name, args]), outcome),
        serverVersion: '9.9.9',
    };
    return { p, calls };
}
const req = (method: string, params?: unknown, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

describe('answerMcp', () => {
    it('initialize: the asked version when supported, else the newest; tools capability and server info', async () => {
        const { p } = ports();
        for (const v of SUPPORTED_VERSIONS) {
            expect((await answerMcp(req('initialize', { protocolVersion: v }), undefined, p)).body).toMatchObject({ result: { protocolVersion: v } });
        }
        const other = await answerMcp(req('initialize', { protocolVersion: '2030-01-01' }), '2030-01-01', p);
        expect(other.status).toBe(200);
        expect(other.body).toEqual({
            jsonrpc: '2.0',
            id: 1,
            result: {
                protocolVersion: '2025-06-18',
                capabilities: { tools: { listChanged: false } },
                serverInfo: { name: 'hermes-rocketchat', title: 'Rocket.Chat workspace (Hermes for Rocket.Chat)', version: '9.9.9' },
                instructions: expect.stringContaining('[Rocket.Chat asker: …]'),
            },
        });
        expect((await answerMcp(req('initialize', { protocolVersion: 5 }), undefined, p)).body).toMatchObject({ result: { protocolVersion: '2025-06-18' } });
        expect(SUPPORTED_VERSIONS[0]).toBe('2025-06-18');
    });

    it('a notification or a client response: 202 without a body', async () => {
        const { p } = ports();
        expect(await answerMcp({ jsonrpc: '2.0', method: 'notifications/initialized' }, undefined, p)).toEqual({ status: 202 });
        expect(await answerMcp({ jsonrpc: '2.0', id: 1, result: {} }, undefined, p)).toEqual({ status: 202 });
    });

    it('an invalid message: 400 with -32600 and the id when there was one', async () => {
        const { p } = ports();
        expect(await answerMcp({ jsonrpc: '1.0', id: 4, method: 'ping' }, undefined, p)).toEqual({
            status: 400,
            body: { jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'jsonrpc must be "2.0".' } },
        });
    });

    it('an unsupported MCP-Protocol-Version header: 400 (initialize excepted); absent or supported: answered', async () => {
        const { p } = ports();
        const refused = await answerMcp(req('ping'), '2023-01-01', p);
        expect(refused).toEqual({
            status: 400,
            body: { jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'Unsupported MCP-Protocol-Version: 2023-01-01' } },
        });
        expect(await answerMcp(req('ping'), '2025-03-26', p)).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 1, result: {} } });
        expect(await answerMcp(req('ping'), undefined, p)).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 1, result: {} } });
    });

    it('tools/list; an unknown method is -32601', async () => {
        const { p } = ports();
        expect((await answerMcp(req('tools/list'), undefined, p)).body).toEqual({ jsonrpc: '2.0', id: 1, result: { tools: p.tools } });
        expect(await answerMcp(req('prompts/list', {}, 'x'), undefined, p)).toEqual({
            status: 200,
            body: { jsonrpc: '2.0', id: 'x', error: { code: -32601, message: 'Method not found: prompts/list' } },
        });
    });

    it('tools/call: the tool runs with its arguments; its result, a tool error (isError) and bad arguments (-32602)', async () => {
        const ok = ports();
        expect((await answerMcp(req('tools/call', { name: 'read', arguments: { x: 1 } }), undefined, ok.p)).body).toEqual({
            jsonrpc: '2.0',
            id: 1,
            result: { content: [{ type: 'text', text: 'done' }], structuredContent: { a: 1 } },
        });
        expect(ok.calls).toEqual([['read', { x: 1 }]]);
        await answerMcp(req('tools/call', { name: 'read' }), undefined, ok.p);
        expect(ok.calls[1]).toEqual(['read', {}]);

        const failed = ports({ kind: 'error', text: 'Not allowed' });
        expect((await answerMcp(req('tools/call', { name: 'read', arguments: {} }), undefined, failed.p)).body).toEqual({
            jsonrpc: '2.0',
            id: 1,
            result: { content: [{ type: 'text', text: 'Not allowed' }], isError: true },
        });
        const bad = ports({ kind: 'bad-arguments', text: 'Invalid arguments' });
        expect((await answerMcp(req('tools/call', { name: 'read', arguments: {} }), undefined, bad.p)).body).toEqual({
            jsonrpc: '2.0',
            id: 1,
            error: { code: -32602, message: 'Invalid arguments' },
        });
    });

    it('texts of its errors: cut names and headers, the tool among several', async () => {
        const { p, calls } = ports();
        p.tools = [{ ...p.tools[0], name: 'first' }, p.tools[0]];
        expect((await answerMcp(req('tools/call', { name: 'read' }), undefined, p)).body).toMatchObject({ result: { content: [{ text: 'done' }] } });
        expect(calls).toEqual([['read', {}]]);
        expect((await answerMcp(req('tools/call', { name: `x${'y'.repeat(100)}` }), undefined, p)).body).toEqual({
            jsonrpc: '2.0',
            id: 1,
            error: { code: -32602, message: `Unknown tool: x${'y'.repeat(59)}` },
        });
        expect((await answerMcp(req('tools/call', { name: 'read', arguments: 1 }), undefined, p)).body).toEqual({
            jsonrpc: '2.0',
            id: 1,
            error: { code: -32602, message: 'arguments must be an object' },
        });
        expect((await answerMcp(req(`m${'n'.repeat(100)}`), undefined, p)).body).toMatchObject({ error: { message: `Method not found: m${'n'.repeat(59)}` } });
        expect((await answerMcp(req('ping'), `2${'0'.repeat(100)}`, p)).body).toMatchObject({
            error: { message: `Unsupported MCP-Protocol-Version: 2${'0'.repeat(39)}` },
        });
    });

    it('tools/call of an unknown tool or with arguments that are not an object: -32602, nothing run', async () => {
        const { p, calls } = ports();
        for (const params of [
            { name: 'drop' },
            { name: 5 },
            {},
            { name: 'read', arguments: [] },
            { name: 'read', arguments: null },
            { name: 'read', arguments: 'x' },
        ]) {
            const reply = await answerMcp(req('tools/call', params), undefined, p);
            expect([params, reply.status, (reply.body?.error as { code: number }).code]).toEqual([params, 200, -32602]);
        }
        expect(calls).toEqual([]);
    });
});
