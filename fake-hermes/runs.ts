/**
 * `/v1/runs` family, mirroring Hermes's `_handle_runs` and friends.
 *
 * Behaviour worth knowing, all taken from Hermes (source + transcripts):
 * - The pollable status is a Python dict updated in place: keys keep the
 *   position of their first insertion (object, run_id, status, updated_at,
 *   created_at, session_id, model, then last_event/output/usage as they
 *   appear). `message.delta` does not touch it; tool/reasoning events set
 *   `last_event` keeping the current status (so a timed-out approval leaves
 *   `waiting_for_approval` until the run ends).
 * - Events go into ONE queue per run. The first subscriber to
 *   GET /events drains it (late subscribers get everything buffered, i.e. the
 *   replay), and when that stream ends or the client leaves, the queue is
 *   dropped: a second GET /events then waits ~1 s and answers 404.
 * - The concurrency limit counts those queues, so a finished run whose events
 *   were never read still counts until its buffer expires (300 s).
 * - Stop answers `stopping` at once; the run settles as `cancelled` with a
 *   `run.cancelled` event `stopSettleMs` later. Stopping a finished run is 404.
 * - Approval: 404 unknown run, 400 bad JSON/choice, 409 approval_not_active
 *   once the run finished, 409 approval_not_pending while it runs without a
 *   pending approval.
 * - v0.18.2: `session_id` is only a label; the model sees `conversation_history`
 *   (or earlier items of an `input` array), never the store. The run still
 *   persists its new messages under session_id (or the run id when absent).
 *   'newer' mode loads the stored history when no conversation_history is sent.
 */
import { callMcpTool } from './mcpTools';
import { createHash, randomUUID } from 'crypto';
import { EventEmitter } from 'events';
import { AgentHooks, ApprovalAnswer, ApprovalRequest, MessageDraft, runTurn } from './agent';
import { errors, openaiError, sendError } from './errors';
import { ConvMessage, contentText, planTurn, scriptContext } from './model';
import { imagesOf, persistedContent } from './multimodal';
import { PyFloat, pyFloat, pyJson, pyTruthy } from './pyJson';
import { HeaderList, sendAiohttpCrash, sendJson, SseWriter } from './respond';
import { now, SessionStore, sessionKeyHeader } from './sessions';
import { isDict, parseJsonBody, ReceivedTurn, RequestCtx, ResolvedOptions, TurnModifiers } from './types';
import type { ReplyFn } from './model';

type Dict = Record<string, unknown>;

const CANCELLED = Symbol('cancelled');
const APPROVAL_CHOICES = ['once', 'session', 'always', 'deny'];
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** asyncio.Queue: items go to the longest-waiting consumer, else they are buffered. */
class EventQueue {
    private readonly items: Array<Dict | null> = [];
    private readonly waiters: Array<(item: Dict | null | typeof CANCELLED) => void> = [];
    constructor(readonly createdAt: number) {}

    put(item: Dict | null): void {
        const waiter = this.waiters.shift();
        if (waiter) waiter(item);
        else this.items.push(item);
    }

    get(): { promise: Promise<Dict | null | typeof CANCELLED>; cancel: () => void } {
        if (this.items.length > 0) {
            const item = this.items.shift() as Dict | null;
            return { promise: Promise.resolve(item), cancel: () => undefined };
        }
        let resolveFn!: (item: Dict | null | typeof CANCELLED) => void;
        const promise = new Promise<Dict | null | typeof CANCELLED>((resolve) => (resolveFn = resolve));
        this.waiters.push(resolveFn);
        return {
            promise,
            cancel: () => {
                const i = this.waiters.indexOf(resolveFn);
                if (i >= 0) this.waiters.splice(i, 1);
                resolveFn(CANCELLED);
            },
        };
    }
}

interface RunRecord {
    id: string;
    sessionId: string;
    abort: AbortController;
    /** The agent task is alive (Hermes `_active_run_tasks`); approvals are possible. */
    active: boolean;
    stopping: boolean;
    stopTimer?: NodeJS.Timeout;
    pending?: { request: ApprovalRequest; answer: (a: ApprovalAnswer) => void };
    steers: string[];
}

export interface RunsDeps {
    opts: ResolvedOptions;
    store: SessionStore;
    emitter: EventEmitter;
    replyFn: () => ReplyFn | null;
    /** Shared with the server: every run created is appended. */
    turns: ReceivedTurn[];
}

export class RunManager {
    /** The most runs working at once (created, not yet ended) since the last reset. */
    public maxOpen = 0;
    /** Pollable statuses (`_run_statuses`), serialised as is. */
    readonly statuses = new Map<string, Dict>();
    /** Every event each run emitted, for tests (`waitForRunEvent`). */
    readonly eventLog = new Map<string, Dict[]>();
    private readonly streams = new Map<string, EventQueue>();
    private readonly runs = new Map<string, RunRecord>();
    private readonly idempotency = new Map<string, { fingerprint: string; runId: string }>();

    constructor(private readonly deps: RunsDeps) {}

    reset(): void {
        this.maxOpen = 0;
        for (const run of this.runs.values()) {
            run.abort.abort();
            if (run.stopTimer) clearTimeout(run.stopTimer);
            run.pending?.answer('timeout');
            run.active = false;
        }
        for (const queue of this.streams.values()) queue.put(null);
        this.runs.clear();
        this.streams.clear();
        this.statuses.clear();
        this.eventLog.clear();
        this.idempotency.clear();
    }

    activeCount(): number {
        return [...this.runs.values()].filter((r) => r.active).length;
    }

    // ------------------------------------------------------------------ state helpers

    /** Hermes `_set_run_status`: dict update keeping first-insertion key order. */
    private setStatus(runId: string, status: string, fields: Dict = {}): void {
        const t = pyFloat(now());
        let current = this.statuses.get(runId);
        if (!current) {
            current = {};
            this.statuses.set(runId, current);
        }
        const { created_at: createdAt, ...rest } = fields;
        Object.assign(current, { object: 'hermes.run', run_id: runId, status, updated_at: t });
        if (!('created_at' in current)) current.created_at = createdAt ?? t;
        Object.assign(current, rest);
        this.deps.emitter.emit('runStatus', runId, current);
    }

    private currentStatus(runId: string): string {
        return String(this.statuses.get(runId)?.status ?? 'running');
    }

    private enqueue(runId: string, event: Dict | null): void {
        if (event) {
            const log = this.eventLog.get(runId) ?? [];
            log.push(event);
            this.eventLog.set(runId, log);
            this.deps.emitter.emit('runEvent', runId, event);
        }
        this.streams.get(runId)?.put(event);
    }

    /** Tool/reasoning events also refresh `last_event` (Hermes `_push`). */
    private push(runId: string, event: Dict): void {
        this.setStatus(runId, this.currentStatus(runId), { last_event: event.event });
        this.enqueue(runId, event);
    }

    private sweep(): void {
        const t = Date.now();
        for (const [id, queue] of this.streams) {
            if (t - queue.createdAt > this.deps.opts.runStreamTtlMs) this.streams.delete(id);
        }
        for (const [id, status] of this.statuses) {
            const updated = status.updated_at instanceof PyFloat ? status.updated_at.value * 1000 : 0;
            if (TERMINAL.has(String(status.status)) && t - updated > this.deps.opts.runStatusTtlMs) {
                this.statuses.delete(id);
            }
        }
    }

    // ------------------------------------------------------------------ POST /v1/runs

    create(ctx: RequestCtx): void {
        const { opts } = this.deps;
        const sessionKey = sessionKeyHeader(ctx);
        if (sessionKey.error) return sessionKey.error();
        const pre: HeaderList = sessionKey.key ? [['X-Hermes-Session-Key', sessionKey.key]] : [];
        this.sweep();

        const idemKey = opts.mode === 'newer' ? ctx.headers['idempotency-key']?.trim() : undefined;
        let fingerprint = '';
        if (idemKey) {
            const parsed = parseJsonBody(ctx.raw);
            if (!parsed.ok) return sendError(ctx.res, 400, openaiError('Invalid JSON'));
            fingerprint = createHash('sha256')
                .update(pyJson(parsed.value) + '\n' + (ctx.headers['x-hermes-session-key'] ?? ''))
                .digest('hex');
            const seen = this.idempotency.get(idemKey);
            if (seen) {
                if (seen.fingerprint !== fingerprint) return sendError(ctx.res, 409, errors.idempotencyConflict());
                return sendJson(ctx.res, 202, { run_id: seen.runId, status: 'started', replayed: true }, pre);
            }
        }

        if (this.streams.size >= opts.maxConcurrentRuns) {
            // v0.18.2 gateway/platforms/api_server.py:4153-4161 (upstream 306e2d23): type rate_limit_error, Retry-After 1.
            return sendError(ctx.res, 429, errors.tooManyRuns(opts.maxConcurrentRuns), [['Retry-After', '1']]);
        }

        const parsed = parseJsonBody(ctx.raw);
        if (!parsed.ok) return sendError(ctx.res, 400, openaiError('Invalid JSON'));
        if (!isDict(parsed.value)) return sendAiohttpCrash(ctx.res);
        const body = parsed.value;

        const rawInput = body.input;
        if (!pyTruthy(rawInput)) return sendError(ctx.res, 400, openaiError("Missing 'input' field"));
        let userMessage: unknown = '';
        if (typeof rawInput === 'string') userMessage = rawInput;
        else if (Array.isArray(rawInput)) {
            const last = rawInput[rawInput.length - 1];
            if (!isDict(last)) return sendAiohttpCrash(ctx.res);
            userMessage = last.content ?? '';
        }
        if (!pyTruthy(userMessage)) return sendError(ctx.res, 400, openaiError('No user message found in input'));

        let history: ConvMessage[] = [];
        const rawHistory = body.conversation_history;
        if (pyTruthy(rawHistory)) {
            if (!Array.isArray(rawHistory)) {
                return sendError(ctx.res, 400, openaiError("'conversation_history' must be an array of message objects"));
            }
            for (let i = 0; i < rawHistory.length; i++) {
                const entry = rawHistory[i];
                if (!isDict(entry) || !('role' in entry) || !('content' in entry)) {
                    return sendError(ctx.res, 400, openaiError(`conversation_history[${i}] must have 'role' and 'content' fields`));
                }
                history.push({ role: String(entry.role), content: contentText(entry.content) });
            }
        }
        const explicitHistory = history.length > 0;
        if (!explicitHistory && Array.isArray(rawInput) && rawInput.length > 1) {
            for (const msg of rawInput.slice(0, -1)) {
                if (isDict(msg) && pyTruthy(msg.role) && pyTruthy(msg.content)) {
                    history.push({ role: String(msg.role), content: contentText(msg.content) });
                }
            }
        }

        const runId = `run_${randomUUID().replace(/-/g, '')}`;
        const sessionId = pyTruthy(body.session_id) ? String(body.session_id) : runId;
        const createdAt = pyFloat(now());
        this.streams.set(runId, new EventQueue(Date.now()));
        const run: RunRecord = { id: runId, sessionId, abort: new AbortController(), active: true, stopping: false, steers: [] };
        this.runs.set(runId, run);
        this.maxOpen = Math.max(this.maxOpen, [...this.runs.values()].filter((r) => r.active).length);
        this.setStatus(runId, 'queued', {
            created_at: createdAt,
            session_id: sessionId,
            model: 'model' in body ? body.model : opts.modelName,
        });
        if (idemKey) this.idempotency.set(idemKey, { fingerprint, runId });
        // v0.18.2 neither validates nor normalises a run's content (api_server.py:4367): the agent gets it as sent.
        this.deps.turns.push({ kind: 'run', profile: ctx.recorded.profile, model: body.model, sessionId, runId, at: Date.now(), ...imagesOf(userMessage) });
        this.deps.emitter.emit('runRegistered', runId);

        if (opts.mode === 'newer' && !explicitHistory) history = this.deps.store.history(sessionId);
        const instructions = typeof body.instructions === 'string' ? body.instructions : null;
        setImmediate(() => void this.drive(run, userMessage, history, instructions, ctx.mods));

        sendJson(ctx.res, 202, { run_id: runId, status: 'started' }, pre);
    }

    private async drive(run: RunRecord, userContent: unknown, history: ConvMessage[], instructions: string | null, mods: TurnModifiers): Promise<void> {
        const userText = contentText(userContent);
        const { opts, store } = this.deps;
        if (!run.active || run.stopping) return;
        this.setStatus(run.id, 'running');
        const ctxS = scriptContext(history, run.sessionId, 'run');
        const plan = planTurn(userText, ctxS, {
            dangerDir: opts.dangerDir,
            slowWords: opts.slowWords,
            keywordsOnLastLine: opts.keywordsOnLastLine,
            replyFn: this.deps.replyFn(),
            replyOverride: mods.agentIncomplete ? '' : mods.reply,
            mcp: opts.mcpServer !== null,
        });
        const stamp = (event: string, fields: Dict = {}): Dict => ({
            event,
            run_id: run.id,
            timestamp: pyFloat(now()),
            ...fields,
        });
        const hooks: AgentHooks = {
            onDelta: (delta) => this.enqueue(run.id, stamp('message.delta', { delta })),
            onToolStart: ({ tool, preview }) => this.push(run.id, stamp('tool.started', { tool, preview })),
            onToolComplete: ({ tool, duration, isError }) => this.push(run.id, stamp('tool.completed', { tool, duration, error: isError })),
            onReasoning: (text) => this.push(run.id, stamp('reasoning.available', { text })),
            requestApproval: (request) => this.awaitApproval(run, request),
        };
        const outcome = await runTurn(plan, hooks, run.abort.signal, {
            slowIntervalMs: opts.slowIntervalMs,
            toolRunMs: opts.toolRunMs,
            toolPreamble: opts.toolPreamble,
            callMcp: opts.mcpServer ? (tool, args) => callMcpTool(opts.mcpServer as { url: string; secret: string }, tool, args) : undefined,
        });
        if (outcome.interrupted || run.stopping || !run.active) return;

        const persistId = mods.rotateSessionTo ?? run.sessionId;
        if (mods.rotateSessionTo) store.rotate(run.sessionId, mods.rotateSessionTo);
        const userDraft: MessageDraft = { role: 'user', content: persistedContent(userContent) };
        const failed = mods.finishReason === 'error' || mods.agentIncomplete;
        if (failed) {
            store.append(persistId, [userDraft], { systemPrompt: instructions });
            const error = mods.errorMessage ?? 'agent run failed';
            this.enqueue(run.id, stamp('run.failed', { error }));
            this.setStatus(run.id, 'failed', { error, last_event: 'run.failed' });
        } else {
            store.append(persistId, [userDraft, ...outcome.messages], { systemPrompt: instructions, usage: outcome.usage });
            this.enqueue(run.id, stamp('run.completed', { output: outcome.final, usage: outcome.usage }));
            this.setStatus(run.id, 'completed', { output: outcome.final, usage: outcome.usage, last_event: 'run.completed' });
        }
        this.finish(run);
    }

    private finish(run: RunRecord): void {
        run.active = false;
        run.pending = undefined;
        this.enqueue(run.id, null);
    }

    private awaitApproval(run: RunRecord, request: ApprovalRequest): Promise<ApprovalAnswer> {
        return new Promise((resolve) => {
            const event: Dict = {
                ...request,
                event: 'approval.request',
                run_id: run.id,
                timestamp: pyFloat(now()),
                choices: [...APPROVAL_CHOICES],
            };
            const fields: Dict = { last_event: 'approval.request' };
            if (this.deps.opts.mode === 'newer') fields.approval = { ...request, choices: [...APPROVAL_CHOICES] };
            this.setStatus(run.id, 'waiting_for_approval', fields);
            const timer = setTimeout(() => answer('timeout'), this.deps.opts.approvalTimeoutMs);
            timer.unref();
            const answer = (a: ApprovalAnswer): void => {
                clearTimeout(timer);
                if (run.pending?.answer === answer) run.pending = undefined;
                const status = this.statuses.get(run.id);
                if (status && 'approval' in status) delete status.approval;
                resolve(a);
            };
            run.pending = { request, answer };
            run.abort.signal.addEventListener('abort', () => answer('timeout'), { once: true });
            this.enqueue(run.id, event);
        });
    }

    // ------------------------------------------------------------------ GET /v1/runs/{id}

    get(ctx: RequestCtx): void {
        this.sweep();
        const runId = ctx.params.run_id;
        const status = this.statuses.get(runId);
        if (!status) return sendError(ctx.res, 404, errors.runNotFound(runId));
        sendJson(ctx.res, 200, status);
    }

    // ------------------------------------------------------------------ GET /v1/runs/{id}/events

    async events(ctx: RequestCtx): Promise<void> {
        this.sweep();
        const runId = ctx.params.run_id;
        const queue = this.streams.get(runId) ?? (await this.waitForStream(runId));
        if (!queue) return sendError(ctx.res, 404, errors.runNotFound(runId));

        const sse = new SseWriter(ctx.res, [], this.deps.opts.keepaliveMs);
        let pending: { cancel: () => void } | undefined;
        const drop = (): void => {
            if (this.streams.get(runId) === queue) this.streams.delete(runId);
        };
        ctx.res.on('close', () => {
            pending?.cancel();
            drop();
        });
        for (;;) {
            const next = queue.get();
            pending = next;
            const item = await next.promise;
            if (item === CANCELLED || sse.closed) break;
            if (item === null) {
                sse.write(': stream closed\n\n');
                sse.end();
                break;
            }
            sse.frame(item);
        }
        drop();
    }

    /** Hermes lets a subscriber arrive slightly before the run is registered. */
    private waitForStream(runId: string): Promise<EventQueue | undefined> {
        return new Promise((resolve) => {
            const onRegistered = (id: string): void => {
                if (id !== runId) return;
                cleanup();
                resolve(this.streams.get(runId));
            };
            const timer = setTimeout(() => {
                cleanup();
                resolve(this.streams.get(runId));
            }, this.deps.opts.runEventsWaitMs);
            const cleanup = (): void => {
                clearTimeout(timer);
                this.deps.emitter.off('runRegistered', onRegistered);
            };
            this.deps.emitter.on('runRegistered', onRegistered);
        });
    }

    // ------------------------------------------------------------------ POST /v1/runs/{id}/approval

    approval(ctx: RequestCtx): void {
        const runId = ctx.params.run_id;
        if (!this.statuses.has(runId)) return sendError(ctx.res, 404, errors.runNotFound(runId));
        const parsed = parseJsonBody(ctx.raw);
        if (!parsed.ok) return sendError(ctx.res, 400, openaiError('Invalid JSON'));
        if (!isDict(parsed.value)) return sendAiohttpCrash(ctx.res);
        const rawChoice = pyStr(parsed.value.choice ?? '')
            .trim()
            .toLowerCase();
        const aliases: Record<string, string> = { approve: 'once', approved: 'once', allow: 'once' };
        const choice = aliases[rawChoice] ?? rawChoice;
        if (!APPROVAL_CHOICES.includes(choice)) return sendError(ctx.res, 400, errors.invalidApprovalChoice());

        const run = this.runs.get(runId);
        if (!run || !run.active) return sendError(ctx.res, 409, errors.approvalNotActive(runId));
        if (!run.pending) return sendError(ctx.res, 409, errors.approvalNotPending(runId));

        const pending = run.pending;
        run.pending = undefined;
        this.setStatus(runId, 'running', { last_event: 'approval.responded' });
        this.enqueue(runId, {
            event: 'approval.responded',
            run_id: runId,
            timestamp: pyFloat(now()),
            choice,
            resolved: 1,
        });
        pending.answer(choice as ApprovalAnswer);
        sendJson(ctx.res, 200, { object: 'hermes.run.approval_response', run_id: runId, choice, resolved: 1 });
    }

    // ------------------------------------------------------------------ POST /v1/runs/{id}/stop

    stop(ctx: RequestCtx): void {
        const runId = ctx.params.run_id;
        const run = this.runs.get(runId);
        if (!run || !run.active) return sendError(ctx.res, 404, errors.runNotFound(runId));
        this.setStatus(runId, 'stopping', { last_event: 'run.stopping' });
        run.stopping = true;
        run.abort.abort();
        if (!run.stopTimer) {
            run.stopTimer = setTimeout(() => {
                if (!run.active) return;
                this.enqueue(runId, { event: 'run.cancelled', run_id: runId, timestamp: pyFloat(now()) });
                this.setStatus(runId, 'cancelled', { last_event: 'run.cancelled' });
                this.finish(run);
            }, this.deps.opts.stopSettleMs);
        }
        sendJson(ctx.res, 200, { run_id: runId, status: 'stopping' });
    }

    // ------------------------------------------------------------------ POST /v1/runs/{id}/steer (newer)

    steer(ctx: RequestCtx): void {
        const runId = ctx.params.run_id;
        if (!this.statuses.has(runId)) return sendError(ctx.res, 404, errors.runNotFound(runId));
        const parsed = parseJsonBody(ctx.raw);
        if (!parsed.ok) return sendError(ctx.res, 400, openaiError('Invalid JSON'));
        if (!isDict(parsed.value)) return sendAiohttpCrash(ctx.res);
        const input = parsed.value.input;
        if (typeof input !== 'string' || !input.trim()) return sendError(ctx.res, 400, openaiError("Missing 'input' field"));
        const run = this.runs.get(runId);
        if (!run || !run.active || run.stopping) return sendError(ctx.res, 409, errors.notAcceptingSteer(runId));
        run.steers.push(input);
        sendJson(ctx.res, 200, { accepted: true });
    }

    steersOf(runId: string): string[] {
        return [...(this.runs.get(runId)?.steers ?? [])];
    }
}

/** Python `str()` of a JSON value, as used on the approval choice. */
function pyStr(value: unknown): string {
    if (value === null) return 'None';
    if (value === true) return 'True';
    if (value === false) return 'False';
    if (typeof value === 'string') return value;
    return pyJson(value);
}
