/**
 * Hermes's session store (state.db) and the `/api/sessions*` endpoints.
 *
 * `messages` is the public `hermes.sessions` map: session id → transcript, in
 * the row shape of GET /api/sessions/{id}/messages (transcript 32). Tests may
 * seed it with bare `{role, content}` objects; missing fields (id, timestamp,
 * ...) are filled in, and written back, the first time they are served.
 *
 * The message shape is verbatim from transcript 32. The session object,
 * list, create/patch/delete/fork shapes are not in the transcripts; they follow
 * Hermes's newer source (`_session_response`), trimmed to the fields v0.18.2's
 * contract names.
 */
import { bareError, errors, openaiError, sendError } from './errors';
import { pyFloat, PyFloat } from './pyJson';
import { sendJson } from './respond';
import type { MessageDraft, Usage } from './agent';
import type { ConvMessage } from './model';
import { isDict, parseJsonBody, RequestCtx } from './types';

export interface StoredMessage {
    id?: number;
    session_id?: string;
    role: string;
    content: unknown;
    tool_call_id?: string | null;
    tool_calls?: unknown[] | null;
    tool_name?: string | null;
    timestamp?: number | PyFloat;
    token_count?: number | null;
    finish_reason?: string | null;
    reasoning?: string | null;
    reasoning_content?: string | null;
}

interface SessionMeta {
    source: string;
    model: string | null;
    title: string | null;
    started_at: number;
    ended_at: number | null;
    end_reason: string | null;
    parent_session_id: string | null;
    system_prompt: string | null;
    input_tokens: number;
    output_tokens: number;
}

export const now = (): number => (performance.timeOrigin + performance.now()) / 1000;

/** v0.18.2's rules for a caller-chosen session id (hermes-api.md). */
export function sessionIdProblem(id: string): string | null {
    if (id.length > 256) return 'Session ID too long';
    if (/[\r\n\0]/.test(id) || id.includes('..') || id.includes('/') || id.includes('\\') || /^[A-Za-z]:/.test(id)) {
        return 'Invalid session ID';
    }
    return null;
}

/** Validate X-Hermes-Session-Key; returns the raw key (v0.18.2 echoes it verbatim) or an error. */
export function sessionKeyHeader(ctx: RequestCtx): { key?: string; error?: () => void } {
    const raw = (ctx.headers['x-hermes-session-key'] ?? '').trim();
    if (!raw) return {};
    if (/[\r\n\0]/.test(raw)) return { error: () => sendError(ctx.res, 400, bareError('Invalid session key')) };
    if (raw.length > 256) return { error: () => sendError(ctx.res, 400, bareError('Session key too long')) };
    return { key: raw };
}

export class SessionStore {
    readonly messages = new Map<string, StoredMessage[]>();
    private readonly meta = new Map<string, SessionMeta>();
    private nextMessageId = 1;

    reset(): void {
        this.messages.clear();
        this.meta.clear();
        this.nextMessageId = 1;
    }

    has(id: string): boolean {
        return this.messages.has(id);
    }

    ensure(id: string, init: Partial<SessionMeta> = {}): StoredMessage[] {
        let list = this.messages.get(id);
        if (!list) {
            list = [];
            this.messages.set(id, list);
        }
        this.metaOf(id, init);
        return list;
    }

    private metaOf(id: string, init: Partial<SessionMeta> = {}): SessionMeta {
        let meta = this.meta.get(id);
        if (!meta) {
            meta = {
                source: 'api_server',
                model: null,
                title: null,
                started_at: now(),
                ended_at: null,
                end_reason: null,
                parent_session_id: null,
                system_prompt: null,
                input_tokens: 0,
                output_tokens: 0,
                ...init,
            };
            this.meta.set(id, meta);
        }
        return meta;
    }

    /** The conversation a model would be given (get_messages_as_conversation). */
    history(id: string): ConvMessage[] {
        return (this.messages.get(id) ?? []).map((m) => ({ role: m.role, content: m.content }));
    }

    /** Persist a turn's new messages. */
    append(id: string, drafts: MessageDraft[], extra: { systemPrompt?: string | null; usage?: Usage } = {}): void {
        const list = this.ensure(id);
        const meta = this.metaOf(id);
        if (extra.systemPrompt) meta.system_prompt = extra.systemPrompt;
        if (extra.usage) {
            meta.input_tokens += extra.usage.input_tokens;
            meta.output_tokens += extra.usage.output_tokens;
        }
        for (const draft of drafts) list.push(this.complete(id, { ...draft }));
    }

    /** Context compression rotated `from` into `to`: the new session continues the transcript. */
    rotate(from: string, to: string): void {
        if (from === to) return;
        const old = this.ensure(from);
        const oldMeta = this.metaOf(from);
        if (!this.messages.has(to)) {
            this.ensure(to, { parent_session_id: from, system_prompt: oldMeta.system_prompt });
            this.append(
                to,
                old.map((m) => ({ ...m, id: undefined, timestamp: undefined, session_id: undefined }) as MessageDraft),
            );
        }
        oldMeta.ended_at = now();
        oldMeta.end_reason = 'compression';
    }

    private complete(sessionId: string, m: StoredMessage): StoredMessage {
        return {
            id: m.id ?? this.nextMessageId++,
            session_id: m.session_id ?? sessionId,
            role: m.role,
            content: m.content,
            tool_call_id: m.tool_call_id ?? null,
            tool_calls: m.tool_calls ?? null,
            tool_name: m.tool_name ?? null,
            timestamp: m.timestamp ?? pyFloat(now()),
            token_count: m.token_count ?? null,
            finish_reason: m.finish_reason ?? null,
            reasoning: m.reasoning ?? null,
            reasoning_content: m.reasoning_content ?? null,
        };
    }

    /** Rows as served, filling (and keeping) fields of seeded messages. */
    rows(id: string): StoredMessage[] {
        const list = this.messages.get(id) ?? [];
        for (let i = 0; i < list.length; i++) {
            if (list[i].id === undefined || list[i].timestamp === undefined || list[i].session_id === undefined) {
                list[i] = this.complete(id, list[i]);
            }
        }
        return list;
    }

    sessionObject(id: string): Record<string, unknown> {
        const meta = this.metaOf(id);
        const rows = this.rows(id);
        const firstUser = rows.find((m) => m.role === 'user');
        const last = rows[rows.length - 1];
        const lastTs = last?.timestamp instanceof PyFloat ? last.timestamp.value : (last?.timestamp as number | undefined);
        const preview = firstUser && typeof firstUser.content === 'string' ? firstUser.content.slice(0, 60) : null;
        return {
            id,
            source: meta.source,
            user_id: null,
            model: meta.model,
            title: meta.title,
            started_at: pyFloat(meta.started_at),
            ended_at: meta.ended_at === null ? null : pyFloat(meta.ended_at),
            end_reason: meta.end_reason,
            message_count: rows.length,
            tool_call_count: rows.reduce((n, m) => n + (Array.isArray(m.tool_calls) ? m.tool_calls.length : 0), 0),
            input_tokens: meta.input_tokens,
            output_tokens: meta.output_tokens,
            parent_session_id: meta.parent_session_id,
            last_active: pyFloat(lastTs ?? meta.started_at),
            preview,
            has_system_prompt: Boolean(meta.system_prompt),
            has_model_config: false,
        };
    }

    // ------------------------------------------------------------------ endpoints

    list(ctx: RequestCtx): void {
        const limit = nonNegativeInt(ctx.query.limit, 50, 200);
        const offset = nonNegativeInt(ctx.query.offset, 0, 1_000_000);
        const source = ctx.query.source;
        const ids = [...this.messages.keys()].filter((id) => !source || this.metaOf(id).source === source);
        const page = ids.slice(offset, offset + limit).map((id) => this.sessionObject(id));
        sendJson(ctx.res, 200, {
            object: 'list',
            data: page,
            limit,
            offset,
            has_more: offset + limit < ids.length,
        });
    }

    create(ctx: RequestCtx): void {
        const parsed = ctx.raw.trim() === '' ? { ok: true as const, value: {} } : parseJsonBody(ctx.raw);
        if (!parsed.ok || !isDict(parsed.value)) {
            return sendError(ctx.res, 400, openaiError('Invalid JSON in request body'));
        }
        const body = parsed.value;
        const requested = body.id ?? body.session_id;
        const id =
            requested === undefined || requested === null
                ? `api_${Math.floor(Date.now() / 1000)}_${Math.random().toString(16).slice(2, 10).padEnd(8, '0')}`
                : String(requested);
        if (id === '' || sessionIdProblem(id)) {
            return sendError(ctx.res, 400, openaiError('Invalid session ID', { code: 'invalid_session_id' }));
        }
        if (this.messages.has(id)) return sendError(ctx.res, 409, errors.sessionExists(id));
        this.ensure(id, {
            title: typeof body.title === 'string' ? body.title : null,
            system_prompt: typeof body.system_prompt === 'string' ? body.system_prompt : null,
        });
        sendJson(ctx.res, 201, { object: 'hermes.session', session: this.sessionObject(id) });
    }

    get(ctx: RequestCtx): void {
        const id = ctx.params.session_id;
        if (!this.messages.has(id)) return sendError(ctx.res, 404, errors.sessionNotFound(id));
        sendJson(ctx.res, 200, { object: 'hermes.session', session: this.sessionObject(id) });
    }

    patch(ctx: RequestCtx): void {
        const id = ctx.params.session_id;
        if (!this.messages.has(id)) return sendError(ctx.res, 404, errors.sessionNotFound(id));
        const parsed = parseJsonBody(ctx.raw);
        if (!parsed.ok || !isDict(parsed.value)) {
            return sendError(ctx.res, 400, openaiError('Invalid JSON in request body'));
        }
        const body = parsed.value;
        const unknown = Object.keys(body)
            .filter((k) => k !== 'title' && k !== 'end_reason')
            .sort();
        if (unknown.length > 0) {
            return sendError(ctx.res, 400, openaiError(`Unsupported session fields: ${unknown.join(', ')}`, { code: 'unsupported_session_field' }));
        }
        const meta = this.metaOf(id);
        if ('title' in body) meta.title = body.title === null ? null : String(body.title);
        if (body.end_reason) {
            meta.end_reason = String(body.end_reason);
            meta.ended_at = now();
        }
        sendJson(ctx.res, 200, { object: 'hermes.session', session: this.sessionObject(id) });
    }

    remove(ctx: RequestCtx): void {
        const id = ctx.params.session_id;
        if (!this.messages.has(id)) return sendError(ctx.res, 404, errors.sessionNotFound(id));
        this.messages.delete(id);
        this.meta.delete(id);
        sendJson(ctx.res, 200, { object: 'hermes.session.deleted', id, deleted: true });
    }

    messagesEndpoint(ctx: RequestCtx): void {
        const id = ctx.params.session_id;
        if (!this.messages.has(id)) return sendError(ctx.res, 404, errors.sessionNotFound(id));
        sendJson(ctx.res, 200, { object: 'list', session_id: id, data: this.rows(id) });
    }

    fork(ctx: RequestCtx): void {
        const source = ctx.params.session_id;
        if (!this.messages.has(source)) return sendError(ctx.res, 404, errors.sessionNotFound(source));
        const parsed = ctx.raw.trim() === '' ? { ok: true as const, value: {} } : parseJsonBody(ctx.raw);
        if (!parsed.ok || !isDict(parsed.value)) {
            return sendError(ctx.res, 400, openaiError('Invalid JSON in request body'));
        }
        const body = parsed.value;
        const requested = body.id ?? body.session_id;
        const id =
            requested === undefined || requested === null
                ? `api_${Math.floor(Date.now() / 1000)}_${Math.random().toString(16).slice(2, 10).padEnd(8, '0')}`
                : String(requested);
        if (id === '' || /[\r\n\0]/.test(id)) {
            return sendError(ctx.res, 400, openaiError('Invalid session ID', { code: 'invalid_session_id' }));
        }
        if (this.messages.has(id)) return sendError(ctx.res, 409, errors.sessionExists(id));
        const sourceMeta = this.metaOf(source);
        sourceMeta.end_reason = 'branched';
        sourceMeta.ended_at = now();
        this.ensure(id, {
            parent_session_id: source,
            system_prompt: sourceMeta.system_prompt,
            title: typeof body.title === 'string' ? body.title : `${sourceMeta.title ?? 'fork'} fork`,
        });
        this.append(
            id,
            this.rows(source).map((m) => ({ ...m, id: undefined, timestamp: undefined, session_id: undefined }) as MessageDraft),
        );
        sendJson(ctx.res, 201, { object: 'hermes.session', session: this.sessionObject(id) });
    }
}

function nonNegativeInt(raw: string | undefined, fallback: number, max: number): number {
    if (raw === undefined || !/^\d+$/.test(raw)) return fallback;
    return Math.min(Number(raw), max);
}
