import { HttpStatusCode, IHttp, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { ApiEndpoint, IApiEndpointInfo, IApiRequest, IApiResponse } from '@rocket.chat/apps-engine/definition/api';
import { IApp } from '@rocket.chat/apps-engine/definition/IApp';
import { checkCaller } from '../../security/callerJwt';
import { refuse } from './apiRefusal';
import { Gate } from './gate';
import { historyHits, HistoryRequestSchema } from '../../endpoints/historyRequest';
import { workspaceReader } from '../adapters/workspaceReader';

/**
 * `POST /api/apps/public/<appId>/history`: what a Hermes history tool may read for the
 * person who asked — messages of a room that person and the bot share now, or that person's
 * DM with the bot. The caller proves itself with a short-lived HS256 JWT (endpoint_secret);
 * the person is named by the asker token the turn carried (asker_key), valid only while it is
 * the newest token of its conversation. Anything else is refused.
 */
export class HistoryEndpoint extends ApiEndpoint {
    public path = 'history';

    constructor(
        app: IApp,
        private readonly gate: Gate,
    ) {
        super(app);
    }

    public async post(
        request: IApiRequest,
        _endpoint: IApiEndpointInfo,
        read: IRead,
        _modify: IModify,
        _http: IHttp,
        persis: IPersistence,
    ): Promise<IApiResponse> {
        const { log, config } = await this.gate.endpoint({ read, persistence: persis, logger: this.app.getLogger() });
        if (!config?.endpointSecret || !config.askerKey) {
            return refuse(HttpStatusCode.SERVICE_UNAVAILABLE, 'endpoints_disabled');
        }
        const caller = checkCaller(request.headers.authorization, config.endpointSecret);
        if (!caller.ok) {
            log.warn(`Refused a call to /history: ${caller.reason}.`);
            return refuse(caller.status, 'unauthorized');
        }
        const body = HistoryRequestSchema.safeParse(request.content);
        if (!body.success) {
            return refuse(HttpStatusCode.BAD_REQUEST, 'invalid_request');
        }
        const bot = await this.gate.botUser(read);
        if (!bot) {
            return refuse(HttpStatusCode.FORBIDDEN, 'forbidden');
        }
        // The MCP tools' checks (engine/adapters/workspaceReader.ts): the token verified and the
        // newest of its conversation (in a shared session every asker's token is in the one
        // transcript), then the room against the person's and the bot's memberships now.
        const workspace = workspaceReader(read, persis, { askerKey: config.askerKey, botId: bot.id, siteUrl: '', log });
        const asker = await workspace.asker(body.data.asker);
        if (!asker.ok) {
            log.warn(`Refused a /history read: ${asker.reason}.`);
            return refuse(HttpStatusCode.FORBIDDEN, 'forbidden');
        }
        const roomId = body.data.room_id ?? asker.roomId;
        if (!(await workspace.sharedRoomIds(asker.userId)).includes(roomId)) {
            log.warn(`Refused a /history read of room ${roomId} for user ${asker.userId}: not a room they share with the bot.`);
            return refuse(HttpStatusCode.FORBIDDEN, 'forbidden');
        }
        const hits = await historyHits((page) => workspace.roomPage(roomId, page), body.data.query, body.data.limit);
        log.info(`/history: ${hits.length} message(s) of room ${roomId} for user ${asker.userId}${body.data.query ? ' (search)' : ''}.`);
        return { status: HttpStatusCode.OK, content: { room_id: roomId, messages: hits } };
    }
}
