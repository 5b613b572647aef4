import { readMessage, RPC_ERROR, rpcError, rpcResult } from './jsonRpc';

/*
 * The MCP server's protocol part (Streamable HTTP, JSON responses, no sessions): what one POST
 * body gets back. The tools themselves are mcp/tools.ts; the HTTP endpoint, its secret and the
 * engine's reads are engine/entry/McpEndpoint.ts.
 */

/** Newest first: a client asking for one of these gets it; any other gets the newest (the spec's negotiation). */
export const SUPPORTED_VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05'] as const;

export interface ToolDefinition {
    name: string;
    title: string;
    description: string;
    inputSchema: Record<string, unknown>;
}

/** A tool's answer: `error` is told to the model (`isError`), never a protocol error. */
export type ToolOutcome =
    { kind: 'ok'; text: string; structured: Record<string, unknown> } | { kind: 'error'; text: string } | { kind: 'bad-arguments'; text: string };

export interface McpPorts {
    tools: ToolDefinition[];
    /** Runs a tool of `tools` (the name was checked). */
    call: (name: string, args: Record<string, unknown>) => Promise<ToolOutcome>;
    serverVersion: string;
}

/** What the endpoint sends: a status and, for a request, its JSON-RPC response. */
export interface McpReply {
    status: 200 | 202 | 400;
    body?: Record<string, unknown>;
}

const INSTRUCTIONS =
    'Reads the Rocket.Chat workspace for the person who asked you: pass the token of the `[Rocket.Chat asker: …]` line ' +
    'of the message you are answering verbatim as `asker`. Only rooms that person shares with the bot, and their own DM with it, can be read. ' +
    'Cite the messages you use by their permalink.';

/**
 * Answers one POST body. `protocolHeader`: the request's MCP-Protocol-Version header, which a
 * client sends after initialize; an unsupported one is refused (400), an absent one accepted.
 */
export async function answerMcp(body: unknown, protocolHeader: string | undefined, ports: McpPorts): Promise<McpReply> {
    const message = readMessage(body);
    if (message.kind === 'invalid') {
        return { status: 400, body: rpcError(message.id, RPC_ERROR.invalidRequest, message.message) };
    }
    if (message.kind !== 'request') {
        // A notification (initialized, cancelled) or a client's response: accepted, nothing to answer.
        return { status: 202 };
    }
    const { id, method, params } = message;
    if (method !== 'initialize' && protocolHeader !== undefined && !(SUPPORTED_VERSIONS as readonly string[]).includes(protocolHeader)) {
        return { status: 400, body: rpcError(id, RPC_ERROR.invalidRequest, `Unsupported MCP-Protocol-Version: ${protocolHeader.slice(0, 40)}`) };
    }
    switch (method) {
        case 'initialize': {
            const asked = params.protocolVersion;
            const version = typeof asked === 'string' && (SUPPORTED_VERSIONS as readonly string[]).includes(asked) ? asked : SUPPORTED_VERSIONS[0];
            return ok(id, {
                protocolVersion: version,
                capabilities: { tools: { listChanged: false } },
                serverInfo: { name: 'hermes-rocketchat', title: 'Rocket.Chat workspace (Hermes for Rocket.Chat)', version: ports.serverVersion },
                instructions: INSTRUCTIONS,
            });
        }
        case 'ping':
            return ok(id, {});
        case 'tools/list':
            return ok(id, { tools: ports.tools });
        case 'tools/call':
            return callTool(id, params, ports);
        default:
            return { status: 200, body: rpcError(id, RPC_ERROR.methodNotFound, `Method not found: ${method.slice(0, 60)}`) };
    }
}

function ok(id: string | number, result: Record<string, unknown>): McpReply {
    return { status: 200, body: rpcResult(id, result) };
}

async function callTool(id: string | number, params: Record<string, unknown>, ports: McpPorts): Promise<McpReply> {
    const name = params.name;
    const args = params.arguments === undefined ? {} : params.arguments;
    if (typeof name !== 'string' || !ports.tools.some((t) => t.name === name)) {
        return { status: 200, body: rpcError(id, RPC_ERROR.invalidParams, `Unknown tool: ${String(name).slice(0, 60)}`) };
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        return { status: 200, body: rpcError(id, RPC_ERROR.invalidParams, 'arguments must be an object') };
    }
    const outcome = await ports.call(name, args as Record<string, unknown>);
    if (outcome.kind === 'bad-arguments') {
        return { status: 200, body: rpcError(id, RPC_ERROR.invalidParams, outcome.text) };
    }
    if (outcome.kind === 'error') {
        return ok(id, { content: [{ type: 'text', text: outcome.text }], isError: true });
    }
    return ok(id, { content: [{ type: 'text', text: outcome.text }], structuredContent: outcome.structured });
}
