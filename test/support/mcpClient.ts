import { Rig } from '../../rig';
import { SECRETS_IN_TESTS } from './e2e';

/** The MCP tests' secrets: kept out of every app log (SECRETS_IN_TESTS). */
export const MCP_SECRET = 'mcp-secret-0123456789abcdef-0123456789abcdef';
export const ASKER_KEY = 'asker-key-0123456789abcdef-0123456789abcdef';
SECRETS_IN_TESTS.add(ASKER_KEY);
SECRETS_IN_TESTS.add(MCP_SECRET);

export type Rpc = { jsonrpc: string; id: number | string | null; result?: Record<string, unknown>; error?: { code: number; message: string } };
export type ToolResult = { content: Array<{ type: string; text: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

/** A client of the app's `/mcp` as Hermes is one: the bearer secret, one JSON-RPC message per POST. */
export function mcpClient(rig: () => Rig) {
    let nextId = 0;
    const url = () => `${rig().server.apiUrl}/api/apps/public/${rig().appId}/mcp`;
    const post = (body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
        fetch(url(), {
            method: 'POST',
            headers: { Authorization: `Bearer ${MCP_SECRET}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
            body: JSON.stringify(body),
        });
    const rpc = async (method: string, params?: Record<string, unknown>, headers?: Record<string, string>): Promise<Rpc> => {
        const res = await post({ jsonrpc: '2.0', id: ++nextId, method, params }, headers);
        expect(res.status).toBe(200);
        return (await res.json()) as Rpc;
    };
    const tool = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
        const reply = await rpc('tools/call', { name, arguments: args });
        expect(reply.error).toBeUndefined();
        return reply.result as unknown as ToolResult;
    };
    return { url, post, rpc, tool };
}
