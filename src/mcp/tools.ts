import { ToolDefinition, ToolOutcome } from './mcpServer';
import { READ_ARGS, READ_TOOLS, ReadToolName } from './readCatalog';
import { readTool } from './readTools';
import { WorkspacePort } from './workspace';
import { WRITE_ARGS, WRITE_TOOLS, writeTool, WritePort, WriteToolName } from './writeTools';

export { inertMentions } from './readTools';
export { PAGE, SEARCH_PAGES, SEARCH_ROOMS } from './workspace';
export type { WorkspaceMessage, WorkspacePort, WorkspaceRoom } from './workspace';

/*
 * The MCP server's tools: each call's arguments are checked, then its asker token is turned
 * into a person (signature, expiry, the newest of its conversation) before anything is read or
 * proposed for them. The write tools exist only when `mcp_write_tools` is on.
 */

/** The read tools (the list without the write tools). */
export const TOOLS: ToolDefinition[] = READ_TOOLS;

export function toolsFor(writes: boolean): ToolDefinition[] {
    return writes ? [...READ_TOOLS, ...WRITE_TOOLS] : READ_TOOLS;
}

const ARGS = { ...READ_ARGS, ...WRITE_ARGS };

/** Whether `name` is one of the write tools (which need their own ports). */
export function isWriteTool(name: string): boolean {
    return Object.prototype.hasOwnProperty.call(WRITE_ARGS, name);
}

/** Runs a tool for whoever the token names; `writes` only when the write tools are on. */
export async function runTool(name: string, raw: Record<string, unknown>, ports: WorkspacePort, writes?: WritePort): Promise<ToolOutcome> {
    const isWrite = isWriteTool(name);
    const schema = isWrite && !writes ? undefined : ARGS[name as keyof typeof ARGS];
    if (!schema) {
        return { kind: 'bad-arguments', text: `Unknown tool: ${name.slice(0, 60)}` };
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
        return {
            kind: 'bad-arguments',
            text: `Invalid arguments for ${name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'} ${i.message}`).join('; ')}`,
        };
    }
    const token = (parsed.data as { asker: string }).asker;
    const who = await ports.asker(token);
    if (!who.ok) {
        ports.log.warn(`MCP ${name} refused: ${who.reason}.`);
        return { kind: 'error', text: 'Not allowed: the asker token is not valid now. Use the token of the question you are answering.' };
    }
    if (isWrite && writes) {
        return writeTool(name as WriteToolName, parsed.data, { ...who, token }, writes);
    }
    const shared = await ports.sharedRoomIds(who.userId);
    return readTool(name as ReadToolName, parsed.data, { userId: who.userId, tokenRoom: who.roomId, shared, ports, tool: name });
}
