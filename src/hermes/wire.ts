import { HermesConfig } from '../settings/config';
import { errorFromResponse, HermesError } from './errors';
import { SseLimitError } from './sse';
import { HermesTransport, HttpRequest, HttpResult, TransportError } from './transport';

/**
 * Where one turn goes on the same api_server: a Hermes profile (served under `/p/<profile>/…`) and a `model_routes`
 * alias sent as the body's `model`. An empty or absent field means none: the root and `hermes-agent`.
 */
export interface HermesRoute {
    profile?: string;
    model?: string;
}

/**
 * One Hermes api_server as the wire sees it: its address and key, the route of a turn (profile,
 * model alias), and the two ways to ask (a request answered whole, a stream). Every error is a
 * HermesError naming the method and full path. The transports (chat.ts, runs.ts) and the client
 * build on it; nothing else speaks HTTP to Hermes.
 */
export class HermesWire {
    constructor(
        private readonly transport: HermesTransport,
        private readonly config: HermesConfig,
        private readonly route: HermesRoute = {},
    ) {}

    /** The alias names a `model_routes` entry; without one the body says `hermes-agent`, exactly as before routes existed. */
    public modelName(): string {
        return this.route.model || 'hermes-agent';
    }

    /** `path` under the route's profile, except `/health` (see HermesClient.withRoute). */
    private routed(path: string): string {
        return this.route.profile && path !== '/health' ? `/p/${encodeURIComponent(this.route.profile)}${path}` : path;
    }

    private request(method: 'GET' | 'POST' | 'PATCH', path: string, headers: Record<string, string>, body?: string, maxBytes?: number): HttpRequest {
        return {
            method,
            url: `${this.config.hermesUrl}${path}`,
            headers: { Accept: 'application/json', Authorization: `Bearer ${this.config.hermesApiKey}`, ...headers },
            body,
            timeoutMs: this.config.hermesTimeoutSeconds * 1000,
            maxBytes,
        };
    }

    public async call(
        method: 'GET' | 'POST' | 'PATCH',
        endpoint: string,
        headers: Record<string, string>,
        body?: string,
        maxBytes?: number,
    ): Promise<HttpResult> {
        // Errors name the full path, so a log line tells which profile failed.
        const path = this.routed(endpoint);
        let result: HttpResult;
        try {
            result = await this.transport.send(this.request(method, path, headers, body, maxBytes));
        } catch (error) {
            throw asHermesError(error, method, path);
        }
        if (result.status < 200 || result.status >= 300) {
            throw errorFromResponse(result);
        }
        return result;
    }

    public async stream(
        req: { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string },
        onText: (text: string) => void,
        signal?: AbortSignal,
    ): Promise<{ headers: Record<string, string> }> {
        const path = this.routed(req.path);
        let result;
        try {
            result = await this.transport.stream(this.request(req.method, path, req.headers, req.body), onText, signal);
        } catch (error) {
            throw asHermesError(error, req.method, path);
        }
        if (result.status === 499 && signal?.aborted) {
            return { headers: {} };
        }
        if (result.status < 200 || result.status >= 300) {
            throw errorFromResponse({ status: result.status, headers: result.headers, body: result.body });
        }
        return { headers: result.headers };
    }
}

export function parseJson(body: string): unknown {
    try {
        return JSON.parse(body);
    } catch {
        throw new HermesError('malformed', `response is not JSON (${body.length} bytes)`);
    }
}

function asHermesError(error: unknown, method: string, path: string): unknown {
    if (error instanceof TransportError) {
        return new HermesError(error.failure, `${method} ${path}: ${error.detail}`);
    }
    if (error instanceof SseLimitError) {
        return new HermesError('malformed', `${method} ${path}: ${error.message}`);
    }
    return error;
}

export function tryJson(text: string): unknown {
    try {
        return JSON.parse(text);
    } catch {
        return undefined;
    }
}

export function str(value: unknown): string | undefined {
    return typeof value === 'string' ? value : undefined;
}
