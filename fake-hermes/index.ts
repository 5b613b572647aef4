/**
 * FAKE HERMES — a real HTTP server that answers like Hermes Agent's api_server
 * (v0.18.2, verbatim transcripts in test/fixtures/hermes-transcripts/), for end-to-end
 * tests and the demo playground. Node built-ins only.
 *
 * ```ts
 * const hermes = await startFakeHermes({ apiKey: 'k'.repeat(32) });
 * await fetch(`${hermes.url}/v1/chat/completions`, {
 *   method: 'POST',
 *   headers: { Authorization: `Bearer ${'k'.repeat(32)}`, 'X-Hermes-Session-Id': 's1' },
 *   body: JSON.stringify({ model: 'hermes-agent', messages: [{ role: 'user', content: 'hi' }] }),
 * });
 * hermes.sessions.get('s1');   // [{role: 'user', ...}, {role: 'assistant', content: 'ECHO: hi | user_turns=1 | prev=-', ...}]
 * hermes.reset();               // between tests
 * await hermes.close();
 * ```
 *
 * WHAT IT SERVES (all but /health and /v1/health need `Authorization: Bearer <apiKey>`)
 *   GET  /health, /v1/health, /health/detailed, /v1/models, /v1/capabilities
 *   POST /v1/chat/completions              (JSON, or SSE with "stream": true)
 *   POST /v1/runs, GET /v1/runs/{id}, GET /v1/runs/{id}/events,
 *   POST /v1/runs/{id}/approval, POST /v1/runs/{id}/stop   (+ /steer in 'newer' mode)
 *   GET/POST /api/sessions, GET/PATCH/DELETE /api/sessions/{id},
 *   GET /api/sessions/{id}/messages, POST /api/sessions/{id}/fork
 *     (exactly as v0.18.2: docs/hermes-sessions-api.md, transcripts 40-87. No search endpoint
 *     exists: /api/sessions/search is "Session not found: search", /api/search aiohttp's 404.)
 *   Every route above but the health ones also under /p/<profile>/… (a Hermes profile), the same
 *   in every respect (one shared store); the request is recorded with its `path` WITHOUT the prefix
 *   and the profile in `profile`, so rules and path filters apply to both.
 *   Anything else: aiohttp's text/plain "404: Not Found" (405 for a wrong method).
 *   Not implemented although capabilities list them: /v1/responses, /v1/skills,
 *   /v1/toolsets, /api/sessions/{id}/chat[/stream].
 *
 * THE SCRIPTED MODEL (as when the transcripts were recorded; last user message):
 *   contains DANGER   → terminal `rm -rf <dangerDir>`; runs wait for approval,
 *                        chat completions get the "pending_approval" result
 *   contains RUN_TOOL → terminal `echo RUN_TOOL_OK` (running `toolRunMs`, default 0)
 *   contains SLOW     → "SLOW:" + 30 " tick", one word per `slowIntervalMs`
 *   MCP_READ <room>   → with `mcpServer` set (runs only): Hermes's MCP tool `mcp__rocketchat__read_messages`
 *                        with the turn's asker token; the answer is what the tool returned (mcpTools.ts)
 *   otherwise         → `ECHO: <msg> | user_turns=<n> | prev=<previous user msg or ->`
 *   (`keywordsOnLastLine: true`: the keywords count only on the message's last line, as the demo playground sets)
 *   `hermes.setReply((msg, ctx) => string | undefined)` answers with plain text
 *   instead (return undefined to fall back to the script).
 *
 * SCRIPTED FAILURES: `hermes.script(rule)`. A rule matches on
 *   { method?, path: string | RegExp, bodyMatch?(json, raw), match?(recordedRequest) },
 *   is used once unless `times: n` or `always: true`, and either REPLACES the answer:
 *     status, headers, body (string as is | object → Python JSON)
 *     error: 'body_too_large' | 'rate_limit_exceeded' | 'gateway_draining' | 'internal_error'
 *            (Hermes's exact envelopes; Retry-After: 1 on 429/503)
 *     redirect: url (302 + Location), malformedJson: true (200, cut-off JSON),
 *     destroy: true (connection reset), sse: frames (200 SSE; with destroy: cut mid-stream)
 *   or MODIFIES the normal chat/run turn:
 *     reply: 'text', rotateSessionTo: 'new-id', finishReason: 'length' | 'error',
 *     errorMessage, error: 'agent_incomplete' (chat: 502 with the hermes block; run: run.failed)
 *   `delayMs` delays the answer in both cases. Examples:
 *     hermes.script({ method: 'POST', path: '/v1/chat/completions', error: 'gateway_draining' });
 *     hermes.script({ path: /^\/v1\/runs\/[^/]+\/events$/, sse: ['data: {"event": "message.delta"}\n\n'], destroy: true });
 *     hermes.script({ path: '/v1/chat/completions', finishReason: 'length', reply: 'partial an' });
 *   Automatic, without rules: 413 when the body exceeds `maxBodyBytes`, 429 when
 *   `maxConcurrentRuns` run event buffers are open, 503 after `setDraining(true)`.
 *
 * SESSIONS: turns create the session rows Hermes's agent creates (source 'api_server',
 *   model = `agentModel`, title null: the api_server never auto-titles). Sessions made
 *   elsewhere (a Hermes CLI session, another platform) are seeded with
 *   `hermes.seedSession({ id: '20250305_091523_a1b2c3', source: 'cli', title: 'Deploy notes',
 *   messages: [{ role: 'user', content: 'deploy?' },
 *              { role: 'assistant', content: '', tool_calls: [hermesToolCall('terminal', { command: 'ls' })] },
 *              { role: 'tool', content: '{"output": "ok"}', tool_call_id: '…', tool_name: 'terminal' },
 *              { role: 'assistant', content: 'Done.' }] })`;
 *   `hermes.getSession(id)` is the session object GET /api/sessions/{id} would answer.
 *   `hermes.sessions` (id → message rows) stays seedable with bare {role, content} too.
 *
 * ROUTES OF TURNS: `hermes.turns` lists each run created and chat completion accepted as
 *   { kind: 'run' | 'chat', profile, model, sessionId, runId?, content?, images? }: profile is the /p/<profile> it came
 *   through (undefined at the root), model the body's `model` field as sent.
 *
 * IMAGES (multimodal.ts, docs/hermes-multimodal.md, transcripts img01–img27): chat completions validate and
 *   normalise user/assistant content parts exactly as v0.18.2 (400 `unsupported_content_type` /
 *   `invalid_image_url` / `invalid_content_part` with `param: "messages[i].content"`); runs take the last
 *   `input` message's content unchecked. When the user content is a list, the turn records it as `content`
 *   (chat: normalised to text/image_url parts; runs: as sent) and its image URLs as `images`:
 *     expect(hermes.turns[0].images).toEqual(['data:image/png;base64,…']);
 *     expect(hermes.turns[0].content).toEqual([{ type: 'text', text: '…' }, { type: 'image_url', image_url: { url: '…' } }]);
 *   The scripted model answers like v0.18.2 with a vision model (`model.supports_vision: true`): it reads the
 *   text parts only. The transcript stores the text and a `[screenshot]` line per image, never the pixels.
 *   'old' mode (before v0.11) flattens every content to its text: images are dropped without an error.
 *
 * SYNCHRONISATION (no sleeps): `waitForRequest`, `waitForRunStatus`,
 * `waitForRunEvent` resolve on past or future occurrences; `events` emits
 * 'request' (RecordedRequest), 'runStatus' (runId, status), 'runEvent' (runId, event).
 *
 * FIDELITY NOTES: bodies are Python json.dumps output (pyJson); header order is
 * aiohttp's (plus Node's own Connection/Keep-Alive). Behaviour quirks kept on
 * purpose (see runs.ts): one event queue per run, drained by the first
 * subscriber; concurrency counted by unread queues; v0.18.2 runs ignore the
 * session store for history but persist to it.
 */
import { EventEmitter } from 'events';
import { ReplyFn } from './model';
import { FakeHermesServer } from './server';
import type { SeedSession, StoredMessage } from './sessions';
import type { FakeHermesOptions, FakeHermesRule, ReceivedTurn, RecordedRequest, ResolvedOptions } from './types';

export type { FakeHermesOptions } from './types';
export { hermesToolCall, sanitizeTitle } from './sessions';
export { pyJson, pyFloat } from './pyJson';

type RunStatusName = 'queued' | 'running' | 'waiting_for_approval' | 'stopping' | 'completed' | 'failed' | 'cancelled';

/** A run's pollable status / event as plain JSON (floats as numbers). */
type RunJson = Record<string, unknown>;

export interface FakeHermes {
    /** 'http://127.0.0.1:<port>' */
    readonly url: string;
    /** Live options; change them with `configure`. */
    readonly options: Readonly<ResolvedOptions>;
    /** Every request received, in order (cleared by reset). */
    readonly requests: RecordedRequest[];
    /** Runs created and chat completions accepted, in order, with the profile and model each came with (cleared by reset). */
    readonly turns: ReceivedTurn[];
    /** The most runs open at once since the last reset (what Hermes counts against max_concurrent_runs). */
    readonly maxOpenRuns: number;
    /** Session id → transcript rows (same shape as GET /api/sessions/{id}/messages). Seedable. */
    readonly sessions: Map<string, StoredMessage[]>;
    /**
     * Add a session created outside the app (default source 'cli'), with its messages. Throws if the id
     * exists or the title is invalid or taken (Hermes's rules). Returns it as GET /api/sessions/{id} would.
     */
    seedSession(spec: SeedSession): Record<string, unknown>;
    /** The session object GET /api/sessions/{id} would answer (plain JSON), or undefined. */
    getSession(id: string): Record<string, unknown> | undefined;
    /** 'request', 'runStatus', 'runEvent', 'runRegistered'. */
    readonly events: EventEmitter;
    /** First recorded request (past or future) matching `pred`; rejects after `timeoutMs` (default 2000). */
    waitForRequest(pred: (req: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
    /** Resolves with the run status once it matches (immediately if it already does). */
    waitForRunStatus(runId: string, status: RunStatusName | RunStatusName[] | ((status: RunJson) => boolean), timeoutMs?: number): Promise<RunJson>;
    /** Resolves with the first event of the run (past or future) matching a name or predicate. */
    waitForRunEvent(runId: string, match: string | ((event: RunJson, all: RunJson[]) => boolean), timeoutMs?: number): Promise<RunJson>;
    /** Status of a run as GET /v1/runs/{id} would return it, or undefined. */
    getRun(runId: string): RunJson | undefined;
    /** Run ids in creation order. */
    runIds(): string[];
    /** Every event a run emitted so far (independent of who read /events). */
    runEvents(runId: string): RunJson[];
    /** Texts received through POST /v1/runs/{id}/steer ('newer' mode). */
    steers(runId: string): string[];
    /** Add a scripted rule (see the header of this file). */
    script(rule: FakeHermesRule): void;
    /** Rules not used up yet. */
    pendingRules(): FakeHermesRule[];
    /** Override the scripted model's text (null restores the script). */
    setReply(fn: ReplyFn | null): void;
    /** Gateway draining: agent routes answer 503 gateway_draining with Retry-After: 1. */
    setDraining(on: boolean): void;
    /** Change options at run time (e.g. slowIntervalMs for one test). */
    configure(patch: Partial<Omit<FakeHermesOptions, 'apiKey' | 'host' | 'port'>>): void;
    /** Clear requests, rules, sessions, runs, reply override, draining. */
    reset(): void;
    close(): Promise<void>;
}

function resolveOptions(options: FakeHermesOptions): ResolvedOptions {
    if (!options || typeof options.apiKey !== 'string' || options.apiKey.length < 16) {
        throw new Error('startFakeHermes: apiKey must be at least 16 characters (Hermes refuses shorter keys)');
    }
    const mode = options.mode ?? 'v0.18.2';
    return {
        apiKey: options.apiKey,
        version: options.version ?? (mode === 'old' ? undefined : '0.18.2'),
        mode,
        slowIntervalMs: options.slowIntervalMs ?? 50,
        slowWords: options.slowWords ?? 31,
        toolRunMs: options.toolRunMs ?? 0,
        toolPreamble: options.toolPreamble ?? '',
        mcpServer: options.mcpServer ?? null,
        keywordsOnLastLine: options.keywordsOnLastLine ?? false,
        stopSettleMs: options.stopSettleMs ?? 200,
        approvalTimeoutMs: options.approvalTimeoutMs ?? 60_000,
        maxConcurrentRuns: options.maxConcurrentRuns ?? 10,
        maxBodyBytes: options.maxBodyBytes ?? 10_000_000,
        runEventsWaitMs: options.runEventsWaitMs ?? 1000,
        runStreamTtlMs: options.runStreamTtlMs ?? 300_000,
        runStatusTtlMs: options.runStatusTtlMs ?? 3_600_000,
        idempotencyTtlMs: options.idempotencyTtlMs ?? 300_000,
        keepaliveMs: options.keepaliveMs ?? 30_000,
        features: { ...(options.features ?? {}) },
        modelName: options.modelName ?? 'hermes-agent',
        agentModel: options.agentModel ?? 'fake-echo-1',
        dangerDir: options.dangerDir ?? '<HERMES_TEST_HOME>/scratch',
        host: options.host ?? '127.0.0.1',
        port: options.port ?? 0,
    };
}

/** Plain JSON copy (PyFloat → number) for handing statuses/events to tests. */
function plain<T>(value: T): RunJson {
    return JSON.parse(JSON.stringify(value)) as RunJson;
}

/** Resolve when `check()` returns a value, re-checking on `event`; reject with `describe()` on timeout. */
function waitFor<T>(emitter: EventEmitter, event: string, check: () => T | undefined, timeoutMs: number, describe: () => string): Promise<T> {
    return new Promise((resolve, reject) => {
        const first = check();
        if (first !== undefined) return resolve(first);
        const onEvent = (): void => {
            const value = check();
            if (value === undefined) return;
            cleanup();
            resolve(value);
        };
        const timer = setTimeout(() => {
            cleanup();
            reject(new Error(describe()));
        }, timeoutMs);
        const cleanup = (): void => {
            clearTimeout(timer);
            emitter.off(event, onEvent);
        };
        emitter.on(event, onEvent);
    });
}

export async function startFakeHermes(options: FakeHermesOptions): Promise<FakeHermes> {
    const opts = resolveOptions(options);
    const server = new FakeHermesServer(opts);
    const url = await server.listen();
    const { emitter, runs } = server;

    return {
        url,
        options: opts,
        requests: server.requests,
        turns: server.turns,
        get maxOpenRuns() {
            return runs.maxOpen;
        },
        sessions: server.store.messages,
        events: emitter,

        seedSession(spec) {
            server.store.seed(spec);
            return plain(server.store.sessionObject(spec.id));
        },
        getSession(id) {
            return server.store.has(id) ? plain(server.store.sessionObject(id)) : undefined;
        },

        waitForRequest(pred, timeoutMs = 2000) {
            return waitFor(
                emitter,
                'request',
                () => server.requests.find((r) => pred(r)),
                timeoutMs,
                () =>
                    `fakeHermes.waitForRequest: no matching request within ${timeoutMs} ms; received: ` +
                    (server.requests.map((r) => `${r.method} ${r.url}`).join(', ') || '(none)'),
            );
        },

        waitForRunStatus(runId, status, timeoutMs = 2000) {
            const ok = typeof status === 'function' ? status : (s: RunJson) => (Array.isArray(status) ? status : [status]).includes(s.status as RunStatusName);
            return waitFor(
                emitter,
                'runStatus',
                () => {
                    const current = runs.statuses.get(runId);
                    if (!current) return undefined;
                    const copy = plain(current);
                    return ok(copy) ? copy : undefined;
                },
                timeoutMs,
                () =>
                    `fakeHermes.waitForRunStatus: run ${runId} did not reach ${typeof status === 'function' ? 'the predicate' : String(status)} ` +
                    `within ${timeoutMs} ms; status now: ${runs.statuses.get(runId)?.status ?? '(unknown run)'}`,
            );
        },

        waitForRunEvent(runId, match, timeoutMs = 2000) {
            const ok = typeof match === 'string' ? (e: RunJson) => e.event === match : match;
            return waitFor(
                emitter,
                'runEvent',
                () => {
                    const all = (runs.eventLog.get(runId) ?? []).map(plain);
                    return all.find((e) => ok(e, all));
                },
                timeoutMs,
                () =>
                    `fakeHermes.waitForRunEvent: run ${runId} emitted no matching event within ${timeoutMs} ms; events: ` +
                    ((runs.eventLog.get(runId) ?? []).map((e) => String(e.event)).join(', ') || '(none)'),
            );
        },

        getRun(runId) {
            const status = runs.statuses.get(runId);
            return status ? plain(status) : undefined;
        },
        runIds: () => [...runs.statuses.keys()],
        runEvents: (runId) => (runs.eventLog.get(runId) ?? []).map(plain),
        steers: (runId) => runs.steersOf(runId),

        script(rule) {
            server.rules.add(rule);
        },
        pendingRules: () => server.rules.pending(),
        setReply(fn) {
            server.replyFn = fn;
        },
        setDraining(on) {
            server.draining = on;
        },
        configure(patch) {
            const next = { ...patch } as Partial<ResolvedOptions>;
            if (patch.features) next.features = { ...opts.features, ...patch.features };
            Object.assign(opts, next);
        },
        reset() {
            server.reset();
        },
        close() {
            server.reset();
            return server.close();
        },
    };
}
