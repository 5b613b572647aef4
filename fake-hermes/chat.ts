/**
 * `POST /v1/chat/completions`, mirroring Hermes's `_handle_chat_completions`.
 *
 * - With `X-Hermes-Session-Id` the history comes from the session store and
 *   the body's earlier messages are ignored (transcript 10); without it the
 *   body's messages are the history and the session id is derived as
 *   `api-<sha256(system + "\n" + first user)[:16]>` (transcripts 07, 30).
 * - `X-Hermes-Session-Key` is echoed only when sent.
 * - No approval channel: a dangerous command is not run, the turn ends
 *   normally with the "pending_approval" tool result (transcript 30).
 * - `Idempotency-Key` (non-streaming only): the agent result is cached 5 min
 *   per key + fingerprint(model, messages, tools, tool_choice, stream, session).
 *   As in Hermes, only the agent RESULT is cached: a replay has the same
 *   content/usage and does not run or persist again, but gets a fresh
 *   `id`/`created`. A different body under the same key simply runs again.
 * - Partial/failed turns: `finish_reason` "length"/"error" plus the `hermes`
 *   block and X-Hermes-Completed/Partial/Error headers; no text at all → 502
 *   agent_incomplete.
 */
import { createHash, randomUUID } from 'crypto';
import type { EventEmitter } from 'events';
import { runTurn, TurnOutcome, Usage } from './agent';
import { bareError, openaiError, sendError } from './errors';
import { ConvMessage, contentText, planTurn, ReplyFn, scriptContext } from './model';
import { hasVisiblePayload, imagesOf, normalizeMultimodal, persistedContent, pyRepr } from './multimodal';
import { pyJson, pyTruthy } from './pyJson';
import { canWrite, HeaderList, resetSocket, sendAiohttpCrash, sendJson, SseWriter } from './respond';
import { SessionStore, sessionIdProblem, sessionKeyHeader } from './sessions';
import { isDict, parseJsonBody, ReceivedTurn, RequestCtx, ResolvedOptions, TurnModifiers } from './types';

export interface ChatDeps {
    opts: ResolvedOptions;
    store: SessionStore;
    emitter: EventEmitter;
    replyFn: () => ReplyFn | null;
    /** Track in-flight agents for /health/detailed and reset(). */
    agents: Set<AbortController>;
    /** Shared with the server: every accepted completion is appended (an idempotent replay too: Hermes answers it). */
    turns: ReceivedTurn[];
}

interface TurnResult {
    outcome: TurnOutcome;
    sessionId: string;
}

const TERMINAL_EMOJI = '\u{1F4BB}';

function deriveSessionId(systemPrompt: string | null, firstUser: string): string {
    const digest = createHash('sha256')
        .update(`${systemPrompt ?? ''}\n${firstUser}`, 'utf8')
        .digest('hex');
    return `api-${digest.slice(0, 16)}`;
}

export class ChatCompletions {
    private readonly idem = new Map<string, { fingerprint: string; at: number; result: Promise<TurnResult> }>();

    constructor(private readonly deps: ChatDeps) {}

    reset(): void {
        this.idem.clear();
    }

    async handle(ctx: RequestCtx): Promise<void> {
        const parsed = parseJsonBody(ctx.raw);
        if (!parsed.ok) return sendError(ctx.res, 400, openaiError('Invalid JSON in request body'));
        if (!isDict(parsed.value)) return sendAiohttpCrash(ctx.res);
        const body = parsed.value;

        const messages = body.messages;
        if (!pyTruthy(messages) || !Array.isArray(messages)) {
            return sendError(ctx.res, 400, bareError("Missing or invalid 'messages' field"));
        }
        const stream = pyTruthy(body.stream);

        let systemPrompt: string | null = null;
        const conversation: ConvMessage[] = [];
        for (const [idx, msg] of messages.entries()) {
            if (!isDict(msg)) return sendAiohttpCrash(ctx.res);
            const role = msg.role ?? '';
            if (role === 'system') {
                // System messages are flattened to text: their images are dropped (api_server.py:2255).
                const content = contentText(msg.content ?? '');
                systemPrompt = systemPrompt === null ? content : `${systemPrompt}\n${content}`;
            } else if (role === 'user' || role === 'assistant') {
                // Before v0.11 ('old') the text normaliser flattened parts to their text: images vanished without an error.
                const normalized =
                    this.deps.opts.mode === 'old' ? { ok: true as const, value: contentText(msg.content ?? '') } : normalizeMultimodal(msg.content ?? '');
                if (!normalized.ok) {
                    return sendError(ctx.res, 400, openaiError(normalized.message, { code: normalized.code, param: `messages[${idx}].content` }));
                }
                conversation.push({ role, content: normalized.value });
            }
        }
        const last = conversation[conversation.length - 1];
        // The agent gets the content as normalised: a string, or text and image_url parts.
        const userContent: unknown = last ? last.content : '';
        const userMessage = contentText(userContent);
        let history = conversation.slice(0, -1);
        if (!hasVisiblePayload(userContent)) return sendError(ctx.res, 400, bareError('No user message found in messages'));

        const sessionKey = sessionKeyHeader(ctx);
        if (sessionKey.error) return sessionKey.error();

        const providedId = (ctx.headers['x-hermes-session-id'] ?? '').trim();
        let sessionId: string;
        if (providedId) {
            const problem = sessionIdProblem(providedId);
            if (problem) return sendError(ctx.res, 400, bareError(problem));
            sessionId = providedId;
            history = this.deps.store.history(providedId);
        } else {
            const firstUser = conversation.find((m) => m.role === 'user');
            const first = firstUser ? firstUser.content : '';
            // An f-string of a parts list is its Python repr.
            sessionId = deriveSessionId(systemPrompt, typeof first === 'string' ? first : pyRepr(first));
        }

        this.deps.turns.push({ kind: 'chat', profile: ctx.recorded.profile, model: body.model, sessionId, ...imagesOf(userContent) });
        const completionId = `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 29)}`;
        const model = 'model' in body ? body.model : this.deps.opts.modelName;
        const created = Math.floor(Date.now() / 1000);
        const turn = { userMessage, userContent, history, sessionId, systemPrompt, mods: ctx.mods };

        if (stream) {
            return this.stream(ctx, turn, { completionId, model, created, sessionKey: sessionKey.key });
        }

        let result: TurnResult;
        const idemKey = ctx.headers['idempotency-key'];
        if (idemKey) {
            const fingerprint = createHash('sha256')
                .update(
                    pyJson({
                        model: body.model ?? null,
                        messages: body.messages ?? null,
                        tools: body.tools ?? null,
                        tool_choice: body.tool_choice ?? null,
                        stream: body.stream ?? null,
                        __headers__: { 'X-Hermes-Session-Id': sessionId },
                    }),
                )
                .digest('hex');
            this.purgeIdempotency();
            const cached = this.idem.get(idemKey);
            if (cached && cached.fingerprint === fingerprint) {
                result = await cached.result;
            } else {
                const pending = this.runAgent(turn, new AbortController());
                this.idem.set(idemKey, { fingerprint, at: Date.now(), result: pending });
                result = await pending;
            }
        } else {
            result = await this.runAgent(turn, new AbortController());
        }
        // Only reset() interrupts a non-streamed turn; drop the connection rather than fake an answer.
        if (result.outcome.interrupted) return resetSocket(ctx.req);
        this.respond(ctx, result, { completionId, model, created, sessionKey: sessionKey.key });
    }

    private purgeIdempotency(): void {
        const t = Date.now();
        for (const [key, entry] of this.idem) {
            if (t - entry.at > this.deps.opts.idempotencyTtlMs) this.idem.delete(key);
        }
    }

    /** Run the scripted agent and persist the turn; `hooks` stream it (SSE). */
    private async runAgent(
        turn: { userMessage: string; userContent: unknown; history: ConvMessage[]; sessionId: string; systemPrompt: string | null; mods: TurnModifiers },
        abort: AbortController,
        hooks: Parameters<typeof runTurn>[1] = {},
    ): Promise<TurnResult> {
        const { opts, store } = this.deps;
        const plan = planTurn(turn.userMessage, scriptContext(turn.history, turn.sessionId, 'chat'), {
            dangerDir: opts.dangerDir,
            slowWords: opts.slowWords,
            keywordsOnLastLine: opts.keywordsOnLastLine,
            replyFn: this.deps.replyFn(),
            replyOverride: turn.mods.agentIncomplete ? '' : turn.mods.reply,
        });
        this.deps.agents.add(abort);
        let outcome: TurnOutcome;
        try {
            outcome = await runTurn(plan, { ...hooks, requestApproval: undefined }, abort.signal, {
                slowIntervalMs: opts.slowIntervalMs,
                toolRunMs: opts.toolRunMs,
                toolPreamble: opts.toolPreamble,
            });
        } finally {
            this.deps.agents.delete(abort);
        }
        const sessionId = turn.mods.rotateSessionTo ?? turn.sessionId;
        if (turn.mods.rotateSessionTo) store.rotate(turn.sessionId, turn.mods.rotateSessionTo);
        const user = { role: 'user', content: persistedContent(turn.userContent) };
        if (outcome.interrupted || failure(turn.mods).failed || failure(turn.mods).partial) {
            const extra = outcome.final ? [{ role: 'assistant', content: outcome.final, finish_reason: 'length' }] : [];
            store.append(sessionId, [user, ...(outcome.interrupted ? [] : extra)], { systemPrompt: turn.systemPrompt });
        } else {
            store.append(sessionId, [user, ...outcome.messages], { systemPrompt: turn.systemPrompt, usage: outcome.usage });
        }
        return { outcome, sessionId };
    }

    private respond(
        ctx: RequestCtx,
        { outcome, sessionId }: TurnResult,
        meta: { completionId: string; model: unknown; created: number; sessionKey?: string },
    ): void {
        const f = failure(ctx.mods);
        const headers: HeaderList = [['X-Hermes-Session-Id', sessionId]];
        if (meta.sessionKey) headers.push(['X-Hermes-Session-Key', meta.sessionKey]);
        const finalResponse = outcome.final;

        if (!finalResponse && (f.failed || f.partial)) {
            const body = openaiError(f.error ?? 'Agent run did not produce a response.', {
                type: 'server_error',
                code: 'agent_incomplete',
            });
            body.error.hermes = { completed: f.completed, partial: f.partial, failed: f.failed };
            headers.push(['X-Hermes-Completed', 'false'], ['X-Hermes-Partial', f.partial ? 'true' : 'false']);
            return sendJson(ctx.res, 502, body, headers);
        }

        const data: Record<string, unknown> = {
            id: meta.completionId,
            object: 'chat.completion',
            created: meta.created,
            model: meta.model,
            choices: [{ index: 0, message: { role: 'assistant', content: finalResponse }, finish_reason: f.finishReason }],
            usage: chatUsage(outcome.usage),
        };
        if (f.partial || f.failed || !f.completed) {
            data.hermes = hermesBlock(f);
            headers.push(['X-Hermes-Completed', 'false'], ['X-Hermes-Partial', f.partial ? 'true' : 'false']);
            if (f.error) headers.push(['X-Hermes-Error', f.error.slice(0, 200)]);
        }
        sendJson(ctx.res, 200, data, headers);
    }

    private async stream(
        ctx: RequestCtx,
        turn: { userMessage: string; userContent: unknown; history: ConvMessage[]; sessionId: string; systemPrompt: string | null; mods: TurnModifiers },
        meta: { completionId: string; model: unknown; created: number; sessionKey?: string },
    ): Promise<void> {
        // Hermes sends these headers before the turn runs, so it cannot report a
        // rotated session on a stream; the fake reports a scripted rotation anyway.
        const headers: HeaderList = [['X-Hermes-Session-Id', turn.mods.rotateSessionTo ?? turn.sessionId]];
        if (meta.sessionKey) headers.push(['X-Hermes-Session-Key', meta.sessionKey]);
        const sse = new SseWriter(ctx.res, headers, this.deps.opts.keepaliveMs);
        const chunk = (delta: Record<string, unknown>, finishReason: string | null, extra: Record<string, unknown> = {}) => ({
            id: meta.completionId,
            object: 'chat.completion.chunk',
            created: meta.created,
            model: meta.model,
            choices: [{ index: 0, delta, finish_reason: finishReason }],
            ...extra,
        });
        const abort = new AbortController();
        let finished = false;
        ctx.res.on('close', () => {
            if (!finished) abort.abort(); // a client disconnect interrupts the agent
        });

        sse.frame(chunk({ role: 'assistant' }, null));
        const { outcome } = await this.runAgent(turn, abort, {
            onDelta: (delta) => sse.frame(chunk({ content: delta }, null)),
            onToolStart: ({ callId, tool, preview }) =>
                sse.frame({ tool, emoji: TERMINAL_EMOJI, label: preview, toolCallId: callId, status: 'running' }, 'hermes.tool.progress'),
            onToolComplete: ({ callId, tool }) => sse.frame({ tool, toolCallId: callId, status: 'completed' }, 'hermes.tool.progress'),
        });
        finished = true;
        if (outcome.interrupted || !canWrite(ctx.res)) {
            sse.end(); // client gone, or reset(): do not leave the stream hanging
            return;
        }
        const f = failure(ctx.mods);
        const extra: Record<string, unknown> = { usage: chatUsage(outcome.usage) };
        if (f.partial || f.failed) extra.hermes = hermesBlock(f);
        sse.frame(chunk({}, f.finishReason, extra));
        sse.write('data: [DONE]\n\n');
        sse.end();
    }
}

function chatUsage(usage: Usage): Record<string, number> {
    return {
        prompt_tokens: usage.input_tokens,
        completion_tokens: usage.output_tokens,
        total_tokens: usage.total_tokens,
    };
}

interface Failure {
    partial: boolean;
    failed: boolean;
    completed: boolean;
    error: string | undefined;
    finishReason: 'stop' | 'length' | 'error';
}

/** Hermes's finish_reason decision for a scripted partial/failed turn. */
function failure(mods: TurnModifiers): Failure {
    const partial = mods.finishReason === 'length';
    const failed = mods.finishReason === 'error' || Boolean(mods.agentIncomplete);
    const completed = !partial && !failed;
    let error = mods.errorMessage;
    if (error === undefined && partial) error = 'Response truncated: the model hit its output token limit';
    if (error === undefined && mods.finishReason === 'error') error = 'Agent run failed';
    let finishReason: Failure['finishReason'] = 'stop';
    if (partial && error && error.toLowerCase().includes('truncat')) finishReason = 'length';
    else if (failed || (!completed && error)) finishReason = 'error';
    return { partial, failed, completed, error, finishReason };
}

function hermesBlock(f: Failure): Record<string, unknown> {
    return {
        completed: f.completed,
        partial: f.partial,
        failed: f.failed,
        error: f.error ?? null,
        error_code: f.finishReason === 'length' ? 'output_truncated' : 'agent_error',
    };
}
