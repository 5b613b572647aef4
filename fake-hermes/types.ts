/**
 * Shared types of the fake Hermes. Kept apart so the endpoint modules and the
 * server can import them without importing each other.
 */
import type { IncomingMessage, ServerResponse } from 'http';

export type HermesMode = 'v0.18.2' | 'newer' | 'old';

export interface FakeHermesOptions {
    /** Bearer key; Hermes refuses keys shorter than 16 characters. */
    apiKey: string;
    /** Reported by /health, /v1/health, /health/detailed. Default '0.18.2' ('old' mode: omitted unless set). */
    version?: string;
    /**
     * 'v0.18.2' (default): as recorded in the transcripts and in the v0.18.2 source (upstream
     *          NousResearch/hermes-agent 306e2d23, gateway/platforms/api_server.py).
     * 'newer': what releases after v0.18.2 added, as read at upstream commit 005b4b76 (main,
     *          untagged; gateway/platforms/api_server_runs.py): (a) runs load the stored history
     *          when no conversation_history is sent (`_handle_runs`), (b) a durable
     *          Idempotency-Key (api_server_run_idempotency.py), (c) `approval` in run status
     *          (`_make_approval_notify`), (d) POST /v1/runs/{id}/steer and (e) `run_steer` in
     *          capabilities (`_handle_steer_run`, PR #85226, merged 2026-08-13).
     *          Releases read line by line (release commits in a fork of upstream): v0.19.0
     *          3ef6bbd2, v0.19.1 cc4cab2f and v0.20.0 3c27eb62 have none of them
     *          (api_server.py `_handle_runs` 6256-6329 and `_approval_notify` 6441-6445 in
     *          v0.20.0: history from the body only, no key, status without `approval`; routes
     *          1973-1977 and capabilities 3001-3032: no steer). Not readable here (the trees of
     *          later releases are in no mirror this project can fetch): (a) and (b) are in v0.21.0
     *          (tag v2026.8.31, 29112bef: api_server_runs.py 452-593 and 598-601 as cited by pinned
     *          third-party reviews, and in a tree declaring 0.21.0), (d) and (e) from v0.20.2
     *          (tag v2026.8.16, the first release cut after the merge), (c) in that 0.21.0 tree
     *          only. So the app works with and without each.
     * 'old':   no /v1/capabilities, no /v1/runs*, no /api/sessions* (aiohttp 404), /health without version.
     */
    mode?: HermesMode;
    /** Interval between SLOW words (Hermes's stand-in: 1000 ms). Default 50. */
    slowIntervalMs?: number;
    /** Words a SLOW turn streams ("SLOW:" + ticks). Default 31, as recorded. */
    slowWords?: number;
    /**
     * The keywords (DANGER, RUN_TOOL, SLOW) count only on the last line of the user message,
     * not in the room context the app puts before it. Default false (anywhere, as recorded).
     */
    keywordsOnLastLine?: boolean;
    /**
     * Words the model says before it calls a tool (DANGER, RUN_TOOL), streamed as deltas one per
     * `slowIntervalMs`, as a model that announces what it is about to do. The run's output stays the
     * answer after the tool (Hermes's final_response). Default '' (none, as recorded).
     */
    toolPreamble?: string;
    /**
     * An MCP server in Hermes's `mcp_servers` as `rocketchat` (the app's `/mcp`): with it the
     * scripted model's `MCP_READ <room id>` calls its read tool on runs (fake-hermes/mcpTools.ts).
     * Default none (`null`): the recorded set-up had none but in the MCP scenario.
     */
    mcpServer?: { url: string; secret: string } | null;
    /** How long a tool that needs no approval (RUN_TOOL) runs before it completes. Default 0 (the demo playground spreads its progress over seconds). */
    toolRunMs?: number;
    /** Time from POST /stop to status `cancelled`. Default 200 (recorded ~0.25 s). */
    stopSettleMs?: number;
    /** Hermes's approval timeout; the command is then blocked. Default 60000. */
    approvalTimeoutMs?: number;
    /** `_MAX_CONCURRENT_RUNS`. Default 10. */
    maxConcurrentRuns?: number;
    /** `MAX_REQUEST_BYTES`. Default 10_000_000. */
    maxBodyBytes?: number;
    /** How long GET /v1/runs/{id}/events waits for an unknown run before 404 (Hermes polls 20×50 ms). Default 1000. */
    runEventsWaitMs?: number;
    /** Unread run event buffers are dropped after this (Hermes: 300 s). */
    runStreamTtlMs?: number;
    /** Finished run statuses are kept this long (Hermes: 3600 s). */
    runStatusTtlMs?: number;
    /** Chat completions Idempotency-Key de-duplication window (Hermes: 300 s). */
    idempotencyTtlMs?: number;
    /** Idle time before an SSE `: keepalive` comment (Hermes: 30 s). */
    keepaliveMs?: number;
    /** Overrides merged into /v1/capabilities `features`. */
    features?: Record<string, boolean | string>;
    /** Advertised model name. Default 'hermes-agent'. */
    modelName?: string;
    /**
     * The upstream model the agent runs: what Hermes stores as `model` on the session rows its
     * turns create (GET /api/sessions). Default 'fake-echo-1', the stand-in model of the recordings.
     */
    agentModel?: string;
    /** Directory the DANGER command deletes. Default '<HERMES_TEST_HOME>/scratch' (as in the transcripts). */
    dangerDir?: string;
    host?: string;
    port?: number;
}

export type ResolvedOptions = Required<Omit<FakeHermesOptions, 'version' | 'features' | 'mcpServer'>> & {
    mcpServer: { url: string; secret: string } | null;
    version: string | undefined;
    features: Record<string, boolean | string>;
};

export interface RecordedRequest {
    method: string;
    /** Path without the query string, and without the `/p/<profile>` prefix: the route the request reached. */
    path: string;
    /** The Hermes profile of a `/p/<profile>/…` request (URL-decoded); undefined at the root. */
    profile?: string;
    /** Raw request target, prefix and query included. */
    url: string;
    query: Record<string, string>;
    /** Lower-cased header names. */
    headers: Record<string, string>;
    /** Raw body ('' when it exceeded the body limit). */
    body: string;
    bodyBytes: number;
    /** Parsed body when it is valid JSON. */
    json?: unknown;
    /** Date.now() when the request was complete. */
    at: number;
}

/** A run the fake created or a chat completion it accepted, with the route it came through. */
export interface ReceivedTurn {
    kind: 'run' | 'chat';
    /** The `/p/<profile>` it came through; undefined at the root. */
    profile?: string;
    /** The body's `model` field as sent; undefined when the body has none. */
    model?: unknown;
    /** The session the turn is stored under (chat: X-Hermes-Session-Id or the derived id). */
    sessionId: string;
    /** Runs only. */
    runId?: string;
    /** When Hermes took it (ms since the epoch). */
    at?: number;
    /**
     * Only when the user content was a list: the parts the agent got. Chat completions: as Hermes normalised them
     * (`{"type": "text"}` and `{"type": "image_url", "image_url": {"url"}}`). Runs: exactly as sent, unchecked.
     */
    content?: unknown[];
    /** With `content`: the URLs of its image parts, in order (`data:image/png;base64,…`). */
    images?: string[];
}

type SseFrame = string | { event?: string; data: unknown };

/**
 * A scripted override. Matching: `method` (any if omitted), `path` (exact string
 * or RegExp, tested on the path without query), optional `bodyMatch` / `match`
 * predicates. One-shot unless `times` or `always`.
 *
 * A rule either REPLACES the response (any of status, body, error other than
 * agent_incomplete, redirect, malformedJson, destroy, sse) or MODIFIES the
 * normal handling (reply, rotateSessionTo, finishReason, errorMessage,
 * error: 'agent_incomplete'). `delayMs` applies in both cases.
 */
export interface FakeHermesRule {
    method?: string;
    path: string | RegExp;
    bodyMatch?: (json: unknown, raw: string) => boolean;
    match?: (req: RecordedRequest) => boolean;
    /** Number of uses (default 1). */
    times?: number;
    /** Never used up. */
    always?: boolean;

    /** Wait this long before answering (or before resetting the socket). */
    delayMs?: number;

    // ---- replacements ----
    status?: number;
    /** Extra/overriding headers for a replaced response. */
    headers?: Record<string, string>;
    /** string is sent as is; anything else through pyJson. */
    body?: unknown;
    /** Hermes-exact error envelopes (+ Retry-After where Hermes sends it). */
    error?: 'body_too_large' | 'rate_limit_exceeded' | 'gateway_draining' | 'agent_incomplete' | 'internal_error';
    /** 302 to this URL (aiohttp HTTPFound). */
    redirect?: string;
    /** 200 with a truncated JSON body. */
    malformedJson?: boolean;
    /** Reset the connection (after `sse` frames if any). */
    destroy?: boolean;
    /** Answer 200 SSE with these frames (strings verbatim, objects as `data: <pyJson>`). */
    sse?: SseFrame[];

    // ---- modifiers of the normal chat/run handling ----
    /** Assistant text for this turn (no tools). */
    reply?: string;
    /** The turn's session rotates to this id: returned in X-Hermes-Session-Id, the store continues there. */
    rotateSessionTo?: string;
    /** Chat: `length` or `error` with the `hermes` block and X-Hermes-* headers. Runs: `error` fails the run. */
    finishReason?: 'stop' | 'length' | 'error';
    /** Error text for finishReason / error rules. */
    errorMessage?: string;
}

/** What a matched modifier rule passes to the handlers. */
export interface TurnModifiers {
    reply?: string;
    rotateSessionTo?: string;
    finishReason?: 'stop' | 'length' | 'error';
    errorMessage?: string;
    agentIncomplete?: boolean;
}

export interface RequestCtx {
    req: IncomingMessage;
    res: ServerResponse;
    method: string;
    path: string;
    params: Record<string, string>;
    query: Record<string, string>;
    headers: Record<string, string>;
    raw: string;
    recorded: RecordedRequest;
    mods: TurnModifiers;
}

/** Result of Python's `await request.json()`. */
export function parseJsonBody(raw: string): { ok: true; value: unknown } | { ok: false } {
    try {
        return { ok: true, value: JSON.parse(raw) };
    } catch {
        return { ok: false };
    }
}

export function isDict(value: unknown): value is Record<string, unknown> {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
}
