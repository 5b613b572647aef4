import { HttpStatusCode, IHttp, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { ApiEndpoint, IApiEndpointInfo, IApiRequest, IApiResponse } from '@rocket.chat/apps-engine/definition/api';
import { IApp } from '@rocket.chat/apps-engine/definition/IApp';
import { checkCaller } from '../../security/callerJwt';
import { Gate } from './gate';

/**
 * `GET /api/apps/public/<appId>/ping`: lets the operator of a Hermes-side tool check that
 * its `endpoint_secret` and token minting are right before relying on the app's endpoints.
 * Answers only to a valid caller token; says nothing about rooms or users.
 */
export class PingEndpoint extends ApiEndpoint {
    public path = 'ping';

    constructor(
        app: IApp,
        private readonly gate: Gate,
        private readonly version: string,
    ) {
        super(app);
    }

    public async get(
        request: IApiRequest,
        _endpoint: IApiEndpointInfo,
        read: IRead,
        _modify: IModify,
        _http: IHttp,
        persis: IPersistence,
    ): Promise<IApiResponse> {
        // A restarted app process holds no configuration until something loads it: a ping may be the first call.
        const { log, config } = await this.gate.endpoint({ read, persistence: persis, logger: this.app.getLogger() });
        const caller = checkCaller(request.headers.authorization, config?.endpointSecret ?? '');
        if (!caller.ok) {
            log.warn(`Refused a call to /ping: ${caller.reason}.`);
            return { status: caller.status, content: { error: caller.status === 503 ? 'endpoints_disabled' : 'unauthorized' } };
        }
        return { status: HttpStatusCode.OK, content: { ok: true, app: 'hermes', version: this.version } };
    }
}
