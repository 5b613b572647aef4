import { HermesConfig } from '../settings/config';
import { errorFromResponse, HermesError } from './errors';
import { HermesTransport, HttpResult, TransportError } from './transport';

export interface ChatTurn {
    sessionId: string;
    sessionKey: string;
    system: string;
    user: string;
    /** The Rocket.Chat message id: Hermes de-duplicates a replayed request with it. */
    idempotencyKey: string;
}

export interface ChatAnswer {
    text: string;
    /** The session id Hermes used; differs from the one sent when Hermes rotated the transcript. */
    sessionId: string;
    finishReason: string;
}

export interface HermesHealth {
    status: string;
    version?: string;
}

/** The only module that knows Hermes's HTTP shapes. */
export class HermesClient {
    constructor(private readonly transport: HermesTransport, private readonly config: HermesConfig) {}

    public async chat(turn: ChatTurn): Promise<ChatAnswer> {
        const result = await this.call('POST', '/v1/chat/completions', {
            'Content-Type': 'application/json',
            'X-Hermes-Session-Id': turn.sessionId,
            'X-Hermes-Session-Key': turn.sessionKey,
            'Idempotency-Key': turn.idempotencyKey,
        }, JSON.stringify({
            model: 'hermes-agent',
            stream: false,
            messages: [
                { role: 'system', content: turn.system },
                { role: 'user', content: turn.user },
            ],
        }));
        const parsed = parseJson(result.body);
        const choice = (parsed as { choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }> })?.choices?.[0];
        const text = choice?.message?.content;
        if (typeof text !== 'string') {
            throw new HermesError('malformed', 'chat completion without choices[0].message.content');
        }
        const returnedId = result.headers['x-hermes-session-id'];
        return {
            text,
            sessionId: returnedId && returnedId.length > 0 ? returnedId : turn.sessionId,
            finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : 'stop',
        };
    }

    /** `/health` needs no key; used by status and start-up probes. */
    public async health(): Promise<HermesHealth> {
        const result = await this.call('GET', '/health', {});
        const parsed = parseJson(result.body) as { status?: unknown; version?: unknown };
        if (typeof parsed?.status !== 'string') {
            throw new HermesError('malformed', '/health without a status');
        }
        return { status: parsed.status, version: typeof parsed.version === 'string' ? parsed.version : undefined };
    }

    private async call(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Promise<HttpResult> {
        let result: HttpResult;
        try {
            result = await this.transport.send({
                method,
                url: `${this.config.hermesUrl}${path}`,
                headers: { Accept: 'application/json', Authorization: `Bearer ${this.config.hermesApiKey}`, ...headers },
                body,
                timeoutMs: this.config.hermesTimeoutSeconds * 1000,
            });
        } catch (error) {
            if (error instanceof TransportError) {
                throw new HermesError(error.failure, `${method} ${path}: ${error.detail}`);
            }
            throw error;
        }
        if (result.status < 200 || result.status >= 300) {
            throw errorFromResponse(result);
        }
        return result;
    }
}

function parseJson(body: string): unknown {
    try {
        return JSON.parse(body);
    } catch {
        throw new HermesError('malformed', `response is not JSON (${body.length} bytes)`);
    }
}
