/**
 * Discovery endpoints: /health, /v1/health, /health/detailed, /v1/models,
 * /v1/capabilities. Bodies are verbatim from transcripts 01, 03, 05, 34 with
 * the live values (time, pid, counters) filled in.
 */
import { sendJson } from './respond';
import type { RequestCtx, ResolvedOptions } from './types';

/** Feature flags exactly as v0.18.2 reports them (transcript 03). */
const DEFAULT_FEATURES: Record<string, boolean | string> = {
    chat_completions: true,
    chat_completions_streaming: true,
    responses_api: true,
    responses_streaming: true,
    run_submission: true,
    run_status: true,
    run_events_sse: true,
    run_stop: true,
    run_approval_response: true,
    tool_progress_events: true,
    approval_events: true,
    session_resources: true,
    session_chat: true,
    session_chat_streaming: true,
    session_fork: true,
    admin_config_rw: false,
    jobs_admin: false,
    memory_write_api: false,
    skills_api: true,
    audio_api: false,
    realtime_voice: false,
    session_continuity_header: 'X-Hermes-Session-Id',
    session_key_header: 'X-Hermes-Session-Key',
    cors: false,
};

const ENDPOINTS: Array<[string, string, string]> = [
    ['health', 'GET', '/health'],
    ['health_detailed', 'GET', '/health/detailed'],
    ['models', 'GET', '/v1/models'],
    ['chat_completions', 'POST', '/v1/chat/completions'],
    ['responses', 'POST', '/v1/responses'],
    ['runs', 'POST', '/v1/runs'],
    ['run_status', 'GET', '/v1/runs/{run_id}'],
    ['run_events', 'GET', '/v1/runs/{run_id}/events'],
    ['run_approval', 'POST', '/v1/runs/{run_id}/approval'],
    ['run_stop', 'POST', '/v1/runs/{run_id}/stop'],
    ['skills', 'GET', '/v1/skills'],
    ['toolsets', 'GET', '/v1/toolsets'],
    ['sessions', 'GET', '/api/sessions'],
    ['session_create', 'POST', '/api/sessions'],
    ['session', 'GET', '/api/sessions/{session_id}'],
    ['session_update', 'PATCH', '/api/sessions/{session_id}'],
    ['session_delete', 'DELETE', '/api/sessions/{session_id}'],
    ['session_messages', 'GET', '/api/sessions/{session_id}/messages'],
    ['session_fork', 'POST', '/api/sessions/{session_id}/fork'],
    ['session_chat', 'POST', '/api/sessions/{session_id}/chat'],
    ['session_chat_stream', 'POST', '/api/sessions/{session_id}/chat/stream'],
];

export function capabilitiesBody(opts: ResolvedOptions): Record<string, unknown> {
    const endpoints: Record<string, unknown> = {};
    for (const [name, method, path] of ENDPOINTS) endpoints[name] = { method, path };
    if (opts.mode === 'newer') endpoints.run_steer = { method: 'POST', path: '/v1/runs/{run_id}/steer' };
    return {
        object: 'hermes.api_server.capabilities',
        platform: 'hermes-agent',
        model: opts.modelName,
        auth: { type: 'bearer', required: true },
        runtime: {
            mode: 'server_agent',
            tool_execution: 'server',
            split_runtime: false,
            description:
                'The API server creates a server-side Hermes AIAgent; tools execute on the API-server host unless a ' +
                'future explicit split-runtime mode is enabled.',
        },
        features: { ...DEFAULT_FEATURES, ...opts.features },
        endpoints,
    };
}

export function health(ctx: RequestCtx, opts: ResolvedOptions): void {
    const body: Record<string, unknown> = { status: 'ok', platform: 'hermes-agent' };
    if (opts.version !== undefined) body.version = opts.version;
    sendJson(ctx.res, 200, body);
}

/** Python `datetime.now(timezone.utc).isoformat()`. */
function pyIsoTime(ms: number): string {
    return new Date(ms).toISOString().replace('Z', '000+00:00');
}

export function healthDetailed(ctx: RequestCtx, opts: ResolvedOptions, live: { startedAt: number; activeRuns: number; activeAgents: number }): void {
    const updatedAt = pyIsoTime(live.startedAt);
    sendJson(ctx.res, 200, {
        status: 'ok',
        readiness: {
            status: 'ok',
            checks: {
                state_db: { status: 'ok' },
                config: { status: 'ok' },
                model: { status: 'ok' },
                disk: { status: 'ok', used_percent: 9.5, free_bytes: 83208892416 },
                gateway: { status: 'ok', state: 'running', connected_platforms: 1, platforms: 1 },
                background_queues: {
                    status: 'ok',
                    active_api_runs: live.activeRuns,
                    process_completions: 0,
                    active_delegations: 0,
                },
            },
        },
        platform: 'hermes-agent',
        version: opts.version ?? null,
        gateway_state: 'running',
        platforms: {
            api_server: { state: 'connected', error_code: null, error_message: null, updated_at: updatedAt },
        },
        active_agents: live.activeAgents,
        gateway_busy: live.activeAgents > 0,
        gateway_drainable: true,
        exit_reason: null,
        updated_at: updatedAt,
        pid: process.pid,
    });
}

export function models(ctx: RequestCtx, opts: ResolvedOptions): void {
    sendJson(ctx.res, 200, {
        object: 'list',
        data: [
            {
                id: opts.modelName,
                object: 'model',
                created: Math.floor(Date.now() / 1000),
                owned_by: 'hermes',
                permission: [],
                root: opts.modelName,
                parent: null,
            },
        ],
    });
}
