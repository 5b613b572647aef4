import { HttpStatusCode, IHttp, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { ApiEndpoint, IApiEndpointInfo, IApiRequest, IApiResponse } from '@rocket.chat/apps-engine/definition/api';
import { IApp } from '@rocket.chat/apps-engine/definition/IApp';
import { answerMcp } from '../../mcp/mcpServer';
import { isWriteTool, runTool, toolsFor } from '../../mcp/tools';
import { bearerMatches } from '../../security/bearer';
import { AppState } from '../appState';
import { workspaceReader } from '../adapters/workspaceReader';
import { writePorts } from '../writePorts';
import { refuse } from './apiRefusal';
import { Gate } from './gate';

/**
 * `/api/apps/public/<appId>/mcp`: the app's MCP server (Streamable HTTP, JSON responses, no
 * sessions), for Hermes's `mcp_servers`. Off unless `mcp_enabled`, `mcp_secret` and `asker_key`
 * are set; the caller proves itself with `Authorization: Bearer <mcp_secret>` (compared in
 * constant time); the person each tool reads for is the asker token it is given (mcp/tools.ts).
 * No server-initiated stream: GET is refused with 405, as the transport allows.
 */
export class McpEndpoint extends ApiEndpoint {
    public path = 'mcp';

    constructor(
        app: IApp,
        private readonly state: AppState,
        private readonly gate: Gate,
        private readonly version: string,
    ) {
        super(app);
    }

    public async get(): Promise<IApiResponse> {
        return { status: HttpStatusCode.METHOD_NOT_ALLOWED, headers: { allow: 'POST' }, content: { error: 'method_not_allowed' } };
    }

    public async delete(): Promise<IApiResponse> {
        return this.get();
    }

    /** Hermes's MCP client probes the URL with HEAD before it connects (a web page there is refused): 405, as GET. */
    public async head(): Promise<IApiResponse> {
        return this.get();
    }

    public async post(
        request: IApiRequest,
        _endpoint: IApiEndpointInfo,
        read: IRead,
        modify: IModify,
        _http: IHttp,
        persis: IPersistence,
    ): Promise<IApiResponse> {
        const { log, config } = await this.gate.endpoint({ read, persistence: persis, logger: this.app.getLogger() });
        if (!config?.mcpEnabled || !config.mcpSecret || !config.askerKey) {
            return refuse(HttpStatusCode.SERVICE_UNAVAILABLE, 'mcp_disabled');
        }
        if (!bearerMatches(request.headers.authorization, config.mcpSecret)) {
            log.warn('Refused a call to /mcp: no valid bearer secret.');
            return { status: HttpStatusCode.UNAUTHORIZED, headers: { 'www-authenticate': 'Bearer' }, content: { error: 'unauthorized' } };
        }
        // A browser page has no business here (DNS rebinding): Hermes's client sends no Origin.
        if (request.headers.origin) {
            log.warn('Refused a call to /mcp: it came from a web page (Origin header).');
            return refuse(HttpStatusCode.FORBIDDEN, 'forbidden');
        }
        const bot = await this.gate.botUser(read);
        if (!bot) {
            return refuse(HttpStatusCode.SERVICE_UNAVAILABLE, 'mcp_disabled');
        }
        const { siteUrl } = await this.state.serverInfo.get(read);
        const workspace = workspaceReader(read, persis, { askerKey: config.askerKey, botId: bot.id, siteUrl, log });
        // The write tools' ports only for a call to one while they are on (initialize, tools/list and the reads need none);
        // a call to one while they are off is an unknown tool.
        const writesFor = async (name: string) =>
            config.mcpWriteTools && isWriteTool(name)
                ? writePorts(await this.gate.tool({ read, modify, persistence: persis, logger: this.app.getLogger() }), config)
                : undefined;
        const reply = await answerMcp(request.content, request.headers['mcp-protocol-version'], {
            tools: toolsFor(config.mcpWriteTools),
            call: async (name, args) => runTool(name, args, workspace, await writesFor(name)),
            serverVersion: this.version,
        });
        return { status: reply.status, headers: { 'content-type': 'application/json' }, content: reply.body };
    }
}
