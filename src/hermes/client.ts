import { Usage, usageOf } from '../usage/usage';
import { HermesConfig } from '../settings/config';
import { HermesCapabilities, NO_CAPABILITIES, parseCapabilities } from './capabilities';
import { errorFromResponse, HermesError } from './errors';
import { SseFrame, SseLimitError, SseParser } from './sse';
import { HermesTransport, HttpRequest, HttpResult, TransportError } from './transport';

/**
 * The longest answer the app keeps from one turn (chat content, run deltas, run output).
 * It is about 20 chat messages at Rocket.Chat's default size; past it an answer is cut and marked `truncated`, so the
 * turn can say so instead of flooding the room or the app's memory.
 */
export const MAX_ANSWER_CHARS = 100_000;

/**
 * A session transcript is read to be sent back as a run's history, and Hermes takes
 * request bodies up to 10,000,000 bytes; tool output in it can make it far larger than one answer.
 */
const MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024;

/** `text` cut to MAX_ANSWER_CHARS (never inside a surrogate pair); `truncated` when something was cut. */
export function clipAnswer(text: string): { text: string; truncated: boolean } {
    if (text.length <= MAX_ANSWER_CHARS) {
        return { text, truncated: false };
    }
    const highSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
    const end = highSurrogate(text.charCodeAt(MAX_ANSWER_CHARS - 1)) ? MAX_ANSWER_CHARS - 1 : MAX_ANSWER_CHARS;
    return { text: text.slice(0, end), truncated: true };
}

export interface ChatTurn {
    sessionId: string;
    sessionKey: string;
    system: string;
    user: string;
    /** Images for this turn only (Hermes keeps `[screenshot]` in the transcript, not the pixels). Ask `takesImages` first. */
    images?: ImagePart[];
    /** The Rocket.Chat message id: Hermes de-duplicates a replayed request with it. */
    idempotencyKey: string;
}

/** An image as a `data:image/(png|jpeg|gif|webp);base64,…` URL (src/files/attachments.ts makes them). */
export interface ImagePart {
    dataUrl: string;
}

/**
 * The image types, as data URLs, that every provider behind Hermes reads. Runs hand the content to the model unchecked
 * (a non-image data URL or a bare file path would reach it), so the client checks what Hermes's chat endpoint would.
 */
const IMAGE_DATA_URL = /^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/;

/**
 * Whether this Hermes reads image parts, by its /health version. Chat completions validate and keep them from v0.11.0
 * (2026-04-23, commit f683132); before, they flattened a user message to its text and dropped the images without a
 * word. Runs take the same parts in an `input` message list (checked on v0.18.2, which the app needs for runs anyway).
 * An unknown version (no `version` field, a `dev` build) counts as no: the caller names the images in the text instead
 * of losing them silently.
 */
export function takesImages(version: string | undefined): boolean {
    const m = /^(\d+)\.(\d+)\./.exec(version ?? '');
    return m !== null && (Number(m[1]) > 0 || Number(m[2]) >= 11);
}

export interface ChatAnswer {
    text: string;
    /** The session id Hermes used; differs from the one sent when Hermes rotated the transcript. */
    sessionId: string;
    finishReason: string;
    /** The answer was longer than MAX_ANSWER_CHARS; `text` is its beginning. */
    truncated?: boolean;
    /** Tokens in and out, when Hermes reported them. */
    usage?: Usage;
}

export interface HermesHealth {
    status: string;
    version?: string;
}

export interface RunInput {
    input: string;
    /** As on ChatTurn; the run's `input` then becomes a one-message list carrying the text and the image parts. */
    images?: ImagePart[];
    instructions: string;
    sessionId: string;
    sessionKey: string;
    /** Sent to servers whose runs do not load the session's history themselves. */
    history?: Array<{ role: string; content: string }>;
    idempotencyKey: string;
}

type RunState = 'queued' | 'running' | 'waiting_for_approval' | 'stopping' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

export interface RunStatus {
    status: RunState;
    output?: string;
    error?: string;
    lastEvent?: string;
    /** Newer servers describe a pending approval in the status. */
    approval?: ApprovalRequest;
    /** `output` was longer than MAX_ANSWER_CHARS; it holds the beginning. */
    truncated?: boolean;
    usage?: Usage;
}

export interface ApprovalRequest {
    command: string;
    description: string;
    choices: string[];
    allowPermanent: boolean;
}

/** A run event (`message.delta`, `tool.started`, `approval.request`, …) as Hermes sends it. */
export type RunEvent = Record<string, unknown> & { event: string };

/** A progress frame of a streamed chat completion (`hermes.tool.progress`). */
export interface ToolProgress {
    tool: string;
    label?: string;
    emoji?: string;
    status?: string;
}

/**
 * Where one turn goes on the same api_server: a Hermes profile (served under `/p/<profile>/…`) and a `model_routes`
 * alias sent as the body's `model`. An empty or absent field means none: the root and `hermes-agent`.
 */
interface HermesRoute {
    profile?: string;
    model?: string;
}

/** The only module that knows Hermes's HTTP shapes. */
export class HermesClient {
    constructor(
        private readonly transport: HermesTransport,
        private readonly config: HermesConfig,
        private readonly route: HermesRoute = {},
    ) {}

    /**
     * The same client for one turn routed to a profile and/or model alias (replacing any route this one had); it shares
     * the transport and configuration, so no new connection settings are built per turn.
     * Every request goes under the profile (runs, their status, events, approval and stop, session transcripts, chat,
     * capabilities), since a run or session belongs to the profile that created it. Only `/health` stays on the root: it
     * describes the server process rather than a profile and needs no key, so one probe serves every room.
     */
    public withRoute(route: HermesRoute): HermesClient {
        return new HermesClient(this.transport, this.config, { ...route });
    }

    public async chat(turn: ChatTurn): Promise<ChatAnswer> {
        const result = await this.call('POST', '/v1/chat/completions', this.chatHeaders(turn), this.chatBody(turn, false));
        const parsed = parseJson(result.body);
        const choice = (parsed as { choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }> })?.choices?.[0];
        const text = choice?.message?.content;
        if (typeof text !== 'string') {
            throw new HermesError('malformed', 'chat completion without choices[0].message.content');
        }
        const returnedId = result.headers['x-hermes-session-id'];
        const clipped = clipAnswer(text);
        return {
            text: clipped.text,
            sessionId: returnedId && returnedId.length > 0 ? returnedId : turn.sessionId,
            finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : 'stop',
            truncated: clipped.truncated,
            usage: usageOf((parsed as { usage?: unknown })?.usage),
        };
    }

    /**
     * The chat turn streamed, so tool progress arrives while the agent works. The connection
     * must stay open: Hermes interrupts the agent when the client leaves.
     */
    public async chatStream(turn: ChatTurn, onProgress: (p: ToolProgress) => void, signal?: AbortSignal): Promise<ChatAnswer> {
        const parser = new SseParser();
        let text = '';
        let truncated = false;
        let finishReason = 'stop';
        let usage: Usage | undefined;
        let sawDone = false;
        const onFrame = (frame: SseFrame) => {
            if (frame.data === '[DONE]') {
                sawDone = true;
                return;
            }
            const json = tryJson(frame.data) as Record<string, unknown> | undefined;
            if (!json) {
                return;
            }
            if (frame.event === 'hermes.tool.progress') {
                if (typeof json.tool === 'string') {
                    onProgress({ tool: json.tool, label: str(json.label), emoji: str(json.emoji), status: str(json.status) });
                }
                return;
            }
            const choice = (json.choices as Array<{ delta?: { content?: unknown }; finish_reason?: unknown }> | undefined)?.[0];
            // Past the cap the rest is read (the connection must stay open) but not kept.
            if (typeof choice?.delta?.content === 'string' && !truncated) {
                ({ text, truncated } = clipAnswer(text + choice.delta.content));
            }
            if (typeof choice?.finish_reason === 'string') {
                finishReason = choice.finish_reason;
            }
            usage = usageOf(json.usage) ?? usage;
        };
        const result = await this.stream(
            { method: 'POST', path: '/v1/chat/completions', headers: this.chatHeaders(turn), body: this.chatBody(turn, true) },
            (chunk) => parser.push(chunk).forEach(onFrame),
            signal,
        );
        if (!sawDone && !signal?.aborted) {
            throw new HermesError('incomplete', 'the chat stream ended before [DONE]');
        }
        return { text, sessionId: result.headers['x-hermes-session-id'] || turn.sessionId, finishReason, truncated, usage };
    }

    public async capabilities(): Promise<HermesCapabilities> {
        const health = await this.health();
        try {
            const result = await this.call('GET', '/v1/capabilities', {});
            return parseCapabilities(parseJson(result.body), health.version);
        } catch (error) {
            // Servers before the capabilities document answer 404: chat completions only.
            if (error instanceof HermesError && error.status === 404) {
                return { ...NO_CAPABILITIES, version: health.version };
            }
            throw error;
        }
    }

    public async createRun(run: RunInput): Promise<string> {
        const input = run.images?.length ? [{ role: 'user', content: userContent(run.input, run.images) }] : run.input;
        const body: Record<string, unknown> = { model: this.modelName(), input, instructions: run.instructions, session_id: run.sessionId };
        if (run.history) {
            body.conversation_history = run.history;
        }
        const result = await this.call(
            'POST',
            '/v1/runs',
            { 'Content-Type': 'application/json', 'X-Hermes-Session-Key': run.sessionKey, 'Idempotency-Key': run.idempotencyKey },
            JSON.stringify(body),
        );
        const runId = (parseJson(result.body) as { run_id?: unknown }).run_id;
        if (typeof runId !== 'string' || !/^[\w-]{1,200}$/.test(runId)) {
            throw new HermesError('malformed', 'run created without a usable run_id');
        }
        return runId;
    }

    public async runStatus(runId: string): Promise<RunStatus> {
        const result = await this.call('GET', `/v1/runs/${encodeURIComponent(runId)}`, {});
        const json = parseJson(result.body) as Record<string, unknown>;
        if (typeof json.status !== 'string') {
            throw new HermesError('malformed', 'run status without a status');
        }
        const output = str(json.output);
        const clipped = output === undefined ? undefined : clipAnswer(output);
        return {
            status: json.status as RunState,
            output: clipped?.text,
            truncated: clipped?.truncated ?? false,
            error: str(json.error),
            lastEvent: str(json.last_event),
            approval: json.approval ? approvalFrom(json.approval) : undefined,
            usage: usageOf(json.usage),
        };
    }

    /** Reads the run's event stream until it closes or `signal` aborts; each event to `onEvent`. */
    public async runEvents(runId: string, onEvent: (e: RunEvent) => void, signal?: AbortSignal): Promise<void> {
        const parser = new SseParser();
        await this.stream(
            { method: 'GET', path: `/v1/runs/${encodeURIComponent(runId)}/events`, headers: { Accept: 'text/event-stream' } },
            (chunk) => {
                for (const frame of parser.push(chunk)) {
                    const json = tryJson(frame.data) as RunEvent | undefined;
                    if (json && typeof json.event === 'string') {
                        onEvent(json);
                    }
                }
            },
            signal,
        );
    }

    public async approve(runId: string, choice: string): Promise<void> {
        await this.call('POST', `/v1/runs/${encodeURIComponent(runId)}/approval`, { 'Content-Type': 'application/json' }, JSON.stringify({ choice }));
    }

    public async stopRun(runId: string): Promise<void> {
        await this.call('POST', `/v1/runs/${encodeURIComponent(runId)}/stop`, {});
    }

    /** The session's transcript, for servers whose runs need it sent; a new session has none. */
    public async sessionMessages(sessionId: string): Promise<Array<{ role: string; content: string }>> {
        try {
            const result = await this.call('GET', `/api/sessions/${encodeURIComponent(sessionId)}/messages`, {}, undefined, MAX_TRANSCRIPT_BYTES);
            const rows = (parseJson(result.body) as { data?: Array<{ role?: unknown; content?: unknown }> }).data ?? [];
            return rows
                .filter((r) => (r.role === 'user' || r.role === 'assistant') && typeof r.content === 'string' && r.content.length > 0)
                .map((r) => ({ role: r.role as string, content: r.content as string }));
        } catch (error) {
            if (error instanceof HermesError && error.status === 404) {
                return [];
            }
            throw error;
        }
    }

    /**
     * One JSON request to Hermes's session API (sessions/sessionsApi.ts builds on it); errors
     * are HermesErrors like every other call's.
     */
    public async json(method: 'GET' | 'PATCH', path: string, body?: unknown, maxBytes = MAX_TRANSCRIPT_BYTES): Promise<unknown> {
        const headers: Record<string, string> = body === undefined ? {} : { 'Content-Type': 'application/json' };
        const result = await this.call(method, path, headers, body === undefined ? undefined : JSON.stringify(body), maxBytes);
        return parseJson(result.body);
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

    private chatHeaders(turn: ChatTurn): Record<string, string> {
        return {
            'Content-Type': 'application/json',
            'X-Hermes-Session-Id': turn.sessionId,
            'X-Hermes-Session-Key': turn.sessionKey,
            'Idempotency-Key': turn.idempotencyKey,
        };
    }

    private chatBody(turn: ChatTurn, stream: boolean): string {
        return JSON.stringify({
            model: this.modelName(),
            stream,
            messages: [
                { role: 'system', content: turn.system },
                { role: 'user', content: turn.images?.length ? userContent(turn.user, turn.images) : turn.user },
            ],
        });
    }

    /** The alias names a `model_routes` entry; without one the body says `hermes-agent`, exactly as before routes existed. */
    private modelName(): string {
        return this.route.model || 'hermes-agent';
    }

    /** `path` under the route's profile, except `/health` (see withRoute). */
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

    private async call(
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

    private async stream(
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

/**
 * A user message with images, in the one shape both transports carry intact: OpenAI chat-completions parts. Hermes's
 * chat endpoint also takes Responses-style `input_text`/`input_image` and rewrites them to this shape, but runs pass
 * content to the model as sent, where a chat-completions provider refuses `input_text`, and the transcript keeps only
 * `text` parts. An image that is not a data URL of the four types is refused here, before anything is sent.
 */
function userContent(text: string, images: ImagePart[]): Array<Record<string, unknown>> {
    const parts: Array<Record<string, unknown>> = text.length > 0 ? [{ type: 'text', text }] : [];
    for (const image of images) {
        if (!IMAGE_DATA_URL.test(image.dataUrl)) {
            throw new HermesError('rejected', 'an image is not a base64 data URL of a png, jpeg, gif or webp image');
        }
        parts.push({ type: 'image_url', image_url: { url: image.dataUrl } });
    }
    return parts;
}

function parseJson(body: string): unknown {
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

function tryJson(text: string): unknown {
    try {
        return JSON.parse(text);
    } catch {
        return undefined;
    }
}

function str(value: unknown): string | undefined {
    return typeof value === 'string' ? value : undefined;
}

/** Hermes's approval request, from an `approval.request` event or a newer run status. */
export function approvalFrom(raw: unknown): ApprovalRequest {
    const a = raw as Record<string, unknown>;
    const choices = Array.isArray(a.choices) ? a.choices.filter((c): c is string => typeof c === 'string') : ['once', 'deny'];
    return {
        command: str(a.command) ?? '',
        description: str(a.description) ?? '',
        choices,
        allowPermanent: a.allow_permanent === true,
    };
}
