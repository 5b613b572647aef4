/**
 * Hermes's session store (state.db) and the `/api/sessions*` endpoints, as
 * v0.18.2 serves them (docs/hermes-sessions-api.md; recorded in
 * test/fixtures/hermes-transcripts/40_… to 87_…). References are to Hermes at
 * 306e2d2: `api_server.py` = gateway/platforms/api_server.py, `state` = hermes_state.py.
 *
 * `messages` is the public `hermes.sessions` map: session id → transcript, in
 * the row shape of GET /api/sessions/{id}/messages (transcript 32). A session
 * exists exactly when it has an entry there. Tests may seed it with bare
 * `{role, content}` objects (missing fields are filled in, and written back,
 * the first time they are served; the session row then looks like one made by
 * POST /api/sessions), or call `seedSession` for a full row (e.g. a CLI session).
 *
 * What the fake keeps from Hermes, on purpose:
 * - Session objects carry `_session_response`'s keys in its order; GET/PATCH/POST
 *   answers have no `last_active`/`preview` (those come from the list query only).
 * - Rows an agent turn created (chat completions, runs) look like AIAgent's:
 *   source `api_server`, user_id null, model = `agentModel`, system prompt and
 *   model config stored, token counters, estimated cost 0.0, title null.
 *   The api_server never auto-titles (only the gateway/CLI/TUI/ACP call the title generator).
 * - Titles: sanitised, ≤ 100 characters, unique (case-sensitive) across all sessions;
 *   blank/null clears. Failures are `400 invalid_title` with Hermes's messages.
 * - The list: newest activity first (last message, else start), ties by start then id;
 *   sub-agent and compression children hidden, compression roots projected to their tip,
 *   archived rows hidden; `has_more` is `len(page) == limit`.
 * - Messages of a session are read from `resolve_resume_session_id`: the compression tip,
 *   then the newest child with messages — so an API fork's parent answers with the fork's
 *   transcript (transcript 76).
 * - Fork: ends the source `branched` (first end wins), copies its messages with their
 *   timestamps, titles the fork with `get_next_title_in_lineage` ("x #2", "fork", "fork #2");
 *   a title error answers 400 but the fork and the `branched` end stay (transcript 77).
 */
import { randomBytes } from 'crypto';
import { bareError, errors, openaiError, sendError } from './errors';
import { pyFloat, PyFloat, pyJson, pyTruthy } from './pyJson';
import { sendJson } from './respond';
import { USAGE_PER_CALL } from './model';
import type { MessageDraft, Usage } from './agent';
import type { ConvMessage } from './model';
import { isDict, parseJsonBody, RequestCtx, ResolvedOptions } from './types';

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

/** The `sessions` row, as far as the fake needs it (hermes_state.py SCHEMA_SQL). */
export interface SessionRow {
    source: string;
    user_id: string | null;
    model: string | null;
    title: string | null;
    started_at: number;
    ended_at: number | null;
    end_reason: string | null;
    parent_session_id: string | null;
    system_prompt: string | null;
    model_config: Record<string, unknown> | null;
    input_tokens: number;
    output_tokens: number;
    cache_read_tokens: number;
    cache_write_tokens: number;
    reasoning_tokens: number;
    estimated_cost_usd: number | null;
    actual_cost_usd: number | null;
    api_call_count: number;
    archived: boolean;
}

/** A message for `seedSession`; ids and (by default) timestamps are assigned. */
interface SeedMessage {
    role: string;
    content: unknown;
    tool_calls?: unknown[] | null;
    tool_call_id?: string | null;
    tool_name?: string | null;
    /** Unix seconds. Default: started_at + 1 ms per message. */
    timestamp?: number;
    token_count?: number | null;
    finish_reason?: string | null;
    reasoning?: string | null;
    reasoning_content?: string | null;
}

/**
 * A session created outside the app (Hermes CLI, another gateway platform, a cron job…).
 * Column names are Hermes's. Defaults describe a finished CLI turn of the scripted model.
 */
export interface SeedSession {
    id: string;
    /** Default 'cli'. Hermes writes 'cli', 'api_server', 'telegram', 'discord', 'cron', 'tool', 'subagent'… */
    source?: string;
    title?: string | null;
    /** Default: the `agentModel` option ('fake-echo-1'). */
    model?: string | null;
    user_id?: string | null;
    /** Unix seconds. Default: now. */
    started_at?: number;
    ended_at?: number | null;
    end_reason?: string | null;
    parent_session_id?: string | null;
    /** Default: a stand-in system prompt (has_system_prompt true); null for none. */
    system_prompt?: string | null;
    /** Default: AIAgent's `{max_iterations, reasoning_config, max_tokens}`; `{_branched_from: id}` marks a CLI /branch. */
    model_config?: Record<string, unknown> | null;
    /** Defaults: 11/7 tokens and one API call per assistant message, cost 0.0 (what the scripted model reports). */
    input_tokens?: number;
    output_tokens?: number;
    api_call_count?: number;
    estimated_cost_usd?: number | null;
    /** Hidden from GET /api/sessions (Hermes's soft hide). */
    archived?: boolean;
    messages?: SeedMessage[];
}

type Dict = Record<string, unknown>;

export const now = (): number => (performance.timeOrigin + performance.now()) / 1000;

/** Stand-in for the system prompt AIAgent stores (`has_system_prompt` only says whether one exists). */
const AGENT_SYSTEM_PROMPT = '<Hermes system prompt>';
const agentModelConfig = (): Dict => ({ max_iterations: 90, reasoning_config: null, max_tokens: null });

/** `_session_response` keys, in order (api_server.py:1806-1813). */
const SESSION_KEYS = [
    'id',
    'source',
    'user_id',
    'model',
    'title',
    'started_at',
    'ended_at',
    'end_reason',
    'message_count',
    'tool_call_count',
    'input_tokens',
    'output_tokens',
    'cache_read_tokens',
    'cache_write_tokens',
    'reasoning_tokens',
    'estimated_cost_usd',
    'actual_cost_usd',
    'api_call_count',
    'parent_session_id',
    'last_active',
    'preview',
    '_lineage_root_id',
] as const;

// ------------------------------------------------------------------ Python helpers

/** Characters Python's `str.isspace()` / `re` `\s` treat as whitespace. */
const PY_WS = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_WS_RUN = new RegExp(`[${PY_WS}]+`, 'g');
const PY_WS_EDGES = new RegExp(`^[${PY_WS}]+|[${PY_WS}]+$`, 'g');

function pyStrip(s: string): string {
    return s.replace(PY_WS_EDGES, '');
}

/** Python `str(value)` for a JSON value. */
function pyStr(value: unknown): string {
    if (value === null || value === undefined) return 'None';
    if (typeof value === 'string') return value;
    if (typeof value === 'boolean') return value ? 'True' : 'False';
    if (typeof value === 'number') return String(value);
    return pyRepr(value);
}

function pyRepr(value: unknown): string {
    if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
    if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
    if (isDict(value)) {
        return `{${Object.entries(value)
            .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
            .join(', ')}}`;
    }
    return pyStr(value);
}

/** Python `int(value)` for a query string, or undefined where it raises. */
function pyInt(raw: string | undefined): number | undefined {
    if (raw === undefined) return undefined;
    const m = /^[+-]?\d+(?:_\d+)*$/.exec(pyStrip(raw));
    return m ? Number(m[0].replace(/_/g, '')) : undefined;
}

/** `_parse_nonnegative_int` (api_server.py:1796). */
function nonNegativeInt(raw: string | undefined, fallback: number, max: number): number {
    const n = pyInt(raw);
    if (n === undefined || n < 0) return fallback;
    return Math.min(n, max);
}

/** `_coerce_request_bool` for a query string (api_server.py:122). */
function requestBool(raw: string | undefined, fallback: boolean): boolean {
    if (raw === undefined) return fallback;
    const v = raw.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    return fallback;
}

/** SQLite LIKE folds ASCII letters only. */
const likeFold = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const codePoints = (s: string): number => [...s].length;

const MAX_TITLE_LENGTH = 100;

/** `SessionDB.sanitize_title` (state:2971): cleaned title or null; throws Hermes's ValueError text. */
export function sanitizeTitle(title: string): string | null {
    if (!title) return null;
    let cleaned = title.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '');
    cleaned = cleaned.replace(/[\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufffc\ufff9-\ufffb]/g, '');
    cleaned = pyStrip(cleaned.replace(PY_WS_RUN, ' '));
    if (!cleaned) return null;
    const length = codePoints(cleaned);
    if (length > MAX_TITLE_LENGTH) throw new Error(`Title too long (${length} chars, max ${MAX_TITLE_LENGTH})`);
    return cleaned;
}

/** `gateway.session._is_path_unsafe`. */
function pathUnsafe(s: string): boolean {
    if (!s) return false;
    if (s.includes('..') || s.includes('/') || s.includes('\\')) return true;
    return /^\p{L}:/u.test(s);
}

/** v0.18.2's rules for X-Hermes-Session-Id (api_server.py:2319-2328): control/path characters first, then length. */
export function sessionIdProblem(id: string): string | null {
    if (/[\r\n\0]/.test(id) || pathUnsafe(id)) return 'Invalid session ID';
    if (codePoints(id) > 256) return 'Session ID too long';
    return null;
}

/** Validate X-Hermes-Session-Key; returns the raw key (v0.18.2 echoes it verbatim) or an error. */
export function sessionKeyHeader(ctx: RequestCtx): { key?: string; error?: () => void } {
    const raw = (ctx.headers['x-hermes-session-key'] ?? '').trim();
    if (!raw) return {};
    if (/[\r\n\0]/.test(raw)) return { error: () => sendError(ctx.res, 400, bareError('Invalid session key')) };
    if (codePoints(raw) > 256) return { error: () => sendError(ctx.res, 400, bareError('Session key too long')) };
    return { key: raw };
}

/** `f"api_{int(time.time())}_{uuid.uuid4().hex[:8]}"`. */
function generatedId(): string {
    return `api_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
}

/** A tool call as Hermes stores it on an assistant message (transcript 59). */
export function hermesToolCall(name: string, args: unknown, id = 'call_' + randomBytes(5).toString('hex')): Dict {
    return {
        id,
        call_id: id,
        response_item_id: id.replace(/^call_/, 'fc_'),
        type: 'function',
        function: { name, arguments: typeof args === 'string' ? args : pyJson(args) },
    };
}

const tsValue = (t: number | PyFloat | undefined): number | undefined => (t instanceof PyFloat ? t.value : t);
const marker = (row: SessionRow, key: string): boolean => row.model_config !== null && row.model_config[key] !== undefined && row.model_config[key] !== null;

export class SessionStore {
    readonly messages = new Map<string, StoredMessage[]>();
    private readonly rowsById = new Map<string, SessionRow>();
    private nextMessageId = 1;

    constructor(private readonly opts: Pick<ResolvedOptions, 'agentModel' | 'modelName'>) {}

    reset(): void {
        this.messages.clear();
        this.rowsById.clear();
        this.nextMessageId = 1;
    }

    has(id: string): boolean {
        return this.messages.has(id);
    }

    /** Ids of existing sessions. */
    ids(): string[] {
        return [...this.messages.keys()];
    }

    // ------------------------------------------------------------------ rows

    private bareRow(init: Partial<SessionRow> = {}): SessionRow {
        return {
            source: 'api_server',
            user_id: null,
            model: null,
            title: null,
            started_at: now(),
            ended_at: null,
            end_reason: null,
            parent_session_id: null,
            system_prompt: null,
            model_config: null,
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            reasoning_tokens: 0,
            estimated_cost_usd: null,
            actual_cost_usd: null,
            api_call_count: 0,
            archived: false,
            ...init,
        };
    }

    /** The row of an existing session (created lazily for sessions seeded through the map). */
    row(id: string): SessionRow {
        let row = this.rowsById.get(id);
        if (!row) {
            row = this.bareRow();
            this.rowsById.set(id, row);
        }
        return row;
    }

    /** Create the session if missing (`create_session`: an existing row is kept). */
    ensure(id: string, init: Partial<SessionRow> = {}): StoredMessage[] {
        let list = this.messages.get(id);
        if (!list) {
            list = [];
            this.messages.set(id, list);
            this.rowsById.set(id, this.bareRow(init));
        } else {
            this.row(id);
        }
        return list;
    }

    private deleteRow(id: string): void {
        this.messages.delete(id);
        this.rowsById.delete(id);
    }

    // ------------------------------------------------------------------ titles

    /** `set_session_title` (state:3051): sanitise, enforce uniqueness, set or clear. Throws Hermes's ValueError text. */
    setTitle(id: string, raw: string): void {
        const title = sanitizeTitle(raw);
        if (title) {
            for (const other of this.ids()) {
                if (other === id || this.row(other).title !== title) continue;
                if (this.isCompressionAncestor(other, id)) this.row(other).title = null;
                else throw new Error(`Title '${title}' is already in use by session ${other}`);
            }
        }
        this.row(id).title = title;
    }

    /** `setTitle`, returning Hermes's error text instead of throwing it. */
    private trySetTitle(id: string, raw: string): string | null {
        try {
            this.setTitle(id, raw);
            return null;
        } catch (e) {
            return (e as Error).message;
        }
    }

    /** `get_next_title_in_lineage` (state:3197). */
    nextTitleInLineage(baseTitle: string): string {
        const m = /^(.*?) #(\d+)$/s.exec(baseTitle);
        const base = m ? m[1] : baseTitle;
        const prefix = likeFold(`${base} #`);
        const existing = this.ids()
            .map((id) => this.row(id).title)
            .filter((t): t is string => t !== null && (t === base || likeFold(t).startsWith(prefix)));
        if (existing.length === 0) return base;
        let max = 1;
        for (const t of existing) {
            const n = /^.* #(\d+)$/s.exec(t);
            if (n) max = Math.max(max, Number(n[1]));
        }
        return `${base} #${max + 1}`;
    }

    /** `_is_compression_ancestor`: walking parent links of compression-ended parents from `descendant` reaches `ancestor`. */
    private isCompressionAncestor(ancestor: string, descendant: string): boolean {
        const seen = new Set<string>();
        let cur = descendant;
        while (!seen.has(cur)) {
            seen.add(cur);
            const parentId = this.rowsById.get(cur)?.parent_session_id;
            if (!parentId || !this.has(parentId) || this.row(parentId).end_reason !== 'compression') return false;
            if (parentId === ancestor) return true;
            cur = parentId;
        }
        return false;
    }

    // ------------------------------------------------------------------ lifecycle

    /** `end_session`: the first end wins. */
    end(id: string, reason: string): void {
        const row = this.row(id);
        if (row.ended_at !== null) return;
        row.ended_at = now();
        row.end_reason = reason;
    }

    /** The conversation a model would be given (get_messages_as_conversation). */
    history(id: string): ConvMessage[] {
        return (this.messages.get(id) ?? []).map((m) => ({ role: m.role, content: m.content }));
    }

    /**
     * Persist an agent turn's new messages (chat completions, runs). Like AIAgent, the turn
     * creates the row if needed and fills what a bare row lacks (model, system prompt, model config).
     */
    append(id: string, drafts: MessageDraft[], extra: { systemPrompt?: string | null; usage?: Usage } = {}): void {
        const list = this.ensure(id);
        const row = this.row(id);
        row.model ??= this.opts.agentModel;
        row.system_prompt ??= extra.systemPrompt || AGENT_SYSTEM_PROMPT;
        row.model_config ??= agentModelConfig();
        row.estimated_cost_usd = row.estimated_cost_usd ?? 0;
        if (extra.usage) {
            row.input_tokens += extra.usage.input_tokens;
            row.output_tokens += extra.usage.output_tokens;
            row.api_call_count += Math.max(1, Math.round(extra.usage.total_tokens / USAGE_PER_CALL.total_tokens));
        } else {
            row.api_call_count += 1;
        }
        for (const draft of drafts) list.push(this.complete(id, { ...draft }));
    }

    /**
     * Context compression rotated `from` into `to` (compression.in_place: false): the old
     * session ends 'compression', the continuation is its child and gets the numbered title.
     */
    rotate(from: string, to: string): void {
        if (from === to) return;
        const old = this.ensure(from);
        const oldRow = this.row(from);
        const oldTitle = oldRow.title;
        this.end(from, 'compression');
        if (!this.messages.has(to)) {
            this.ensure(to, {
                parent_session_id: from,
                model: oldRow.model ?? this.opts.agentModel,
                model_config: agentModelConfig(),
                system_prompt: oldRow.system_prompt ?? AGENT_SYSTEM_PROMPT,
                estimated_cost_usd: 0,
            });
            const list = this.messages.get(to) as StoredMessage[];
            for (const m of old) list.push(this.complete(to, { ...m, id: undefined, timestamp: undefined, session_id: undefined }));
            if (oldTitle) {
                try {
                    this.setTitle(to, this.nextTitleInLineage(oldTitle));
                } catch {
                    // Hermes logs and goes on (conversation_compression.py:958-963).
                }
            }
        }
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

    /** Rows as served (insertion/id order), filling (and keeping) fields of seeded messages. */
    rows(id: string): StoredMessage[] {
        const list = this.messages.get(id) ?? [];
        for (let i = 0; i < list.length; i++) {
            if (list[i].id === undefined || list[i].timestamp === undefined || list[i].session_id === undefined) {
                list[i] = this.complete(id, list[i]);
            }
            if (typeof list[i].timestamp === 'number') list[i].timestamp = pyFloat(list[i].timestamp as number);
        }
        return [...list].sort((a, b) => (a.id as number) - (b.id as number));
    }

    /** A session "created outside the app". Throws on an existing id or a bad/taken title, like Hermes would refuse it. */
    seed(spec: SeedSession): void {
        if (!spec || typeof spec.id !== 'string' || !spec.id) throw new Error('seedSession: id is required');
        if (this.has(spec.id)) throw new Error(`seedSession: session already exists: ${spec.id}`);
        const messages = spec.messages ?? [];
        const calls = messages.filter((m) => m.role === 'assistant').length;
        const started = spec.started_at ?? now();
        this.ensure(spec.id, {
            source: spec.source ?? 'cli',
            user_id: spec.user_id ?? null,
            model: spec.model === undefined ? this.opts.agentModel : spec.model,
            started_at: started,
            ended_at: spec.ended_at ?? null,
            end_reason: spec.end_reason ?? null,
            parent_session_id: spec.parent_session_id ?? null,
            system_prompt: spec.system_prompt === undefined ? AGENT_SYSTEM_PROMPT : spec.system_prompt,
            model_config: spec.model_config === undefined ? agentModelConfig() : spec.model_config,
            input_tokens: spec.input_tokens ?? USAGE_PER_CALL.input_tokens * calls,
            output_tokens: spec.output_tokens ?? USAGE_PER_CALL.output_tokens * calls,
            api_call_count: spec.api_call_count ?? calls,
            estimated_cost_usd: spec.estimated_cost_usd === undefined ? 0 : spec.estimated_cost_usd,
            archived: spec.archived ?? false,
        });
        const problem = spec.title === undefined || spec.title === null ? null : this.trySetTitle(spec.id, spec.title);
        if (problem) {
            this.deleteRow(spec.id);
            throw new Error(`seedSession: ${problem}`);
        }
        const list = this.messages.get(spec.id) as StoredMessage[];
        messages.forEach((m, i) =>
            list.push(
                this.complete(spec.id, {
                    ...m,
                    id: undefined,
                    session_id: undefined,
                    timestamp: pyFloat(m.timestamp ?? started + (i + 1) / 1000),
                }),
            ),
        );
    }

    // ------------------------------------------------------------------ queries

    private lastActive(id: string): number {
        let last: number | undefined;
        for (const m of this.rows(id)) {
            const t = tsValue(m.timestamp);
            if (t !== undefined && (last === undefined || t > last)) last = t;
        }
        return last ?? this.row(id).started_at;
    }

    private children(id: string): string[] {
        return this.ids().filter((c) => this.row(c).parent_session_id === id);
    }

    /** A child that continues a conversation (not a /branch, not a delegate, not a 'tool' session). */
    private isContinuationCandidate(child: string): boolean {
        const row = this.row(child);
        return !marker(row, '_branched_from') && !marker(row, '_delegate_from') && row.source !== 'tool';
    }

    /** `get_compression_tip` (state:3232). */
    compressionTip(id: string): string {
        const seen = new Set([id]);
        let cur = id;
        for (let i = 0; i < 100; i++) {
            if (this.row(cur).end_reason !== 'compression') return cur;
            const rank = (c: string): number => {
                const r = this.row(c);
                return r.end_reason === 'compression' ? 0 : r.ended_at === null ? 1 : 2;
            };
            const next = this.children(cur)
                .filter((c) => this.isContinuationCandidate(c))
                .sort(
                    (a, b) =>
                        rank(a) - rank(b) ||
                        this.lastActive(b) - this.lastActive(a) ||
                        this.row(b).started_at - this.row(a).started_at ||
                        (b < a ? -1 : b > a ? 1 : 0),
                )[0];
            if (!next || seen.has(next)) return cur;
            seen.add(next);
            cur = next;
        }
        return cur;
    }

    /** `resolve_resume_session_id` (state:4343): the session whose messages GET …/messages serves. */
    resolveResume(id: string): string {
        const start = this.compressionTip(id);
        let cur = start;
        let best: string | undefined;
        const seen = new Set([cur]);
        for (let i = 0; i < 32; i++) {
            if ((this.messages.get(cur) ?? []).length > 0) best = cur;
            const child = this.children(cur)
                .filter((c) => this.isContinuationCandidate(c))
                .sort((a, b) => this.row(b).started_at - this.row(a).started_at || (b < a ? -1 : b > a ? 1 : 0))[0];
            if (!child || seen.has(child)) break;
            seen.add(child);
            cur = child;
        }
        return best ?? start;
    }

    /** Rows `list_sessions_rich` admits without include_children: roots and /branch children. */
    private listable(id: string): boolean {
        const row = this.row(id);
        if (marker(row, '_delegate_from')) return false;
        if (row.parent_session_id === null || marker(row, '_branched_from')) return true;
        const parentId = row.parent_session_id;
        if (!this.has(parentId)) return false;
        const parent = this.row(parentId);
        return parent.end_reason === 'branched' && parent.ended_at !== null && row.started_at >= parent.ended_at;
    }

    /** MAX activity over the session and its compression continuations (the list's sort key). */
    private effectiveLastActive(id: string): number {
        let best = this.lastActive(id);
        const seen = new Set([id]);
        const walk = (cur: string): void => {
            if (this.row(cur).end_reason !== 'compression') return;
            for (const c of this.children(cur)) {
                if (seen.has(c) || !this.isContinuationCandidate(c)) continue;
                seen.add(c);
                best = Math.max(best, this.lastActive(c));
                walk(c);
            }
        };
        walk(id);
        return best;
    }

    /** `preview`: first user message with content, newlines as spaces, 60 characters + "...". */
    private preview(id: string): string {
        const first = this.rows(id)
            .filter((m) => m.role === 'user' && m.content !== null && m.content !== undefined)
            .sort((a, b) => (tsValue(a.timestamp) as number) - (tsValue(b.timestamp) as number) || (a.id as number) - (b.id as number))[0];
        if (!first) return '';
        const stored =
            typeof first.content === 'string'
                ? first.content
                : typeof first.content === 'number'
                  ? String(first.content)
                  : '\u0000json:' + JSON.stringify(first.content);
        const raw = pyStrip([...stored.replace(/[\n\r]/g, ' ')].slice(0, 63).join(''));
        const chars = [...raw];
        return chars.slice(0, 60).join('') + (chars.length > 60 ? '...' : '');
    }

    /** `_session_response` of a row (+ the list's computed fields when given). */
    sessionObject(id: string, listed?: { last_active: number; preview: string; _lineage_root_id?: string; from?: string }): Dict {
        const row = this.row(id);
        const shown = listed?.from ?? id;
        const rows = this.rows(shown);
        const values: Dict = {
            ...row,
            id: shown,
            started_at: pyFloat(row.started_at),
            ended_at: row.ended_at === null ? null : pyFloat(row.ended_at),
            estimated_cost_usd: row.estimated_cost_usd === null ? null : pyFloat(row.estimated_cost_usd),
            actual_cost_usd: row.actual_cost_usd === null ? null : pyFloat(row.actual_cost_usd),
            message_count: rows.length,
            tool_call_count: rows.reduce((n, m) => n + (Array.isArray(m.tool_calls) ? m.tool_calls.length : pyTruthy(m.tool_calls) ? 1 : 0), 0),
        };
        if (listed?.from && listed.from !== id) {
            // Compression projection: the tip's identity and activity on the root's row.
            const tip = this.row(listed.from);
            Object.assign(values, {
                ended_at: tip.ended_at === null ? null : pyFloat(tip.ended_at),
                end_reason: tip.end_reason,
                title: tip.title,
                model: tip.model,
                system_prompt: tip.system_prompt,
            });
        }
        const out: Dict = {};
        for (const key of SESSION_KEYS) {
            if (key === 'last_active' || key === 'preview' || key === '_lineage_root_id') {
                if (!listed || listed[key] === undefined) continue;
                out[key] = key === 'last_active' ? pyFloat(listed.last_active) : listed[key];
                continue;
            }
            out[key] = values[key];
        }
        out.has_system_prompt = Boolean(values.system_prompt);
        out.has_model_config = Boolean(row.model_config);
        return out;
    }

    /** The page GET /api/sessions serves. */
    listPage(opts: { source?: string; limit: number; offset: number; includeChildren: boolean }): Dict[] {
        const ids = this.ids().filter((id) => {
            const row = this.row(id);
            if (row.archived) return false;
            if (!opts.includeChildren && !this.listable(id)) return false;
            return !opts.source || row.source === opts.source;
        });
        const key = new Map(ids.map((id) => [id, this.effectiveLastActive(id)]));
        ids.sort((a, b) => (key.get(b) as number) - (key.get(a) as number) || this.row(b).started_at - this.row(a).started_at || (b < a ? -1 : b > a ? 1 : 0));
        return ids.slice(opts.offset, opts.offset + opts.limit).map((id) => {
            const tip = !opts.includeChildren && this.row(id).end_reason === 'compression' ? this.compressionTip(id) : id;
            if (tip !== id) {
                return this.sessionObject(id, { from: tip, last_active: this.lastActive(tip), preview: this.preview(tip), _lineage_root_id: id });
            }
            return this.sessionObject(id, { last_active: this.lastActive(id), preview: this.preview(id) });
        });
    }

    // ------------------------------------------------------------------ endpoints

    /** `_read_json_body`: the body must be a JSON object (an empty body is invalid JSON). */
    private jsonObject(ctx: RequestCtx): Dict | undefined {
        const parsed = parseJsonBody(ctx.raw);
        if (!parsed.ok) {
            sendError(ctx.res, 400, openaiError('Invalid JSON in request body'));
            return undefined;
        }
        if (!isDict(parsed.value)) {
            sendError(ctx.res, 400, openaiError('Request body must be a JSON object'));
            return undefined;
        }
        return parsed.value;
    }

    private exists(ctx: RequestCtx, id: string): boolean {
        if (this.has(id)) return true;
        sendError(ctx.res, 404, errors.sessionNotFound(id));
        return false;
    }

    /** GET /api/sessions (api_server.py:1860). */
    list(ctx: RequestCtx): void {
        const limit = nonNegativeInt(ctx.query.limit, 50, 200);
        const offset = nonNegativeInt(ctx.query.offset, 0, 1_000_000);
        const data = this.listPage({
            source: ctx.query.source || undefined,
            limit,
            offset,
            includeChildren: requestBool(ctx.query.include_children, false),
        });
        sendJson(ctx.res, 200, { object: 'list', data, limit, offset, has_more: data.length === limit });
    }

    /** POST /api/sessions (api_server.py:1889). */
    create(ctx: RequestCtx): void {
        const body = this.jsonObject(ctx);
        if (!body) return;
        const raw = pyTruthy(body.id) ? body.id : body.session_id;
        const id = pyTruthy(raw) ? pyStrip(pyStr(raw)) : generatedId();
        if (!id || /[\r\n\0]/.test(id) || pathUnsafe(id)) {
            return sendError(ctx.res, 400, openaiError('Invalid session ID', { code: 'invalid_session_id' }));
        }
        if (codePoints(id) > 256) return sendError(ctx.res, 400, openaiError('Session ID too long', { code: 'invalid_session_id' }));
        if (this.has(id)) return sendError(ctx.res, 409, errors.sessionExists(id));
        const model = pyTruthy(body.model) ? body.model : this.opts.modelName;
        const systemPrompt = body.system_prompt;
        if (systemPrompt !== undefined && systemPrompt !== null && typeof systemPrompt !== 'string') {
            return sendError(ctx.res, 400, openaiError('system_prompt must be a string', { code: 'invalid_system_prompt' }));
        }
        this.ensure(id, { model: model ? pyStr(model) : null, system_prompt: (systemPrompt as string | null | undefined) ?? null });
        if (body.title !== undefined && body.title !== null) {
            try {
                this.setTitle(id, pyStr(body.title));
            } catch (e) {
                this.deleteRow(id);
                return sendError(ctx.res, 400, openaiError((e as Error).message, { code: 'invalid_title' }));
            }
        }
        sendJson(ctx.res, 201, { object: 'hermes.session', session: this.sessionObject(id) });
    }

    /** GET /api/sessions/{id} (api_server.py:1927). */
    get(ctx: RequestCtx): void {
        const id = ctx.params.session_id;
        if (!this.exists(ctx, id)) return;
        sendJson(ctx.res, 200, { object: 'hermes.session', session: this.sessionObject(id) });
    }

    /** PATCH /api/sessions/{id} (api_server.py:1937): 404 first, then the body; title before end_reason. */
    patch(ctx: RequestCtx): void {
        const id = ctx.params.session_id;
        if (!this.exists(ctx, id)) return;
        const body = this.jsonObject(ctx);
        if (!body) return;
        const unknown = Object.keys(body)
            .filter((k) => k !== 'title' && k !== 'end_reason')
            .sort();
        if (unknown.length > 0) {
            return sendError(ctx.res, 400, openaiError(`Unsupported session fields: ${unknown.join(', ')}`, { code: 'unsupported_session_field' }));
        }
        if ('title' in body) {
            try {
                this.setTitle(id, body.title === null ? '' : pyStr(body.title));
            } catch (e) {
                return sendError(ctx.res, 400, openaiError((e as Error).message, { code: 'invalid_title' }));
            }
        }
        if (pyTruthy(body.end_reason)) this.end(id, pyStr(body.end_reason));
        sendJson(ctx.res, 200, { object: 'hermes.session', session: this.sessionObject(id) });
    }

    /** DELETE /api/sessions/{id} (api_server.py:1965): children are orphaned, delegate children go too. */
    remove(ctx: RequestCtx): void {
        const id = ctx.params.session_id;
        if (!this.exists(ctx, id)) return;
        const drop = (sid: string): void => {
            for (const child of this.children(sid)) {
                if (marker(this.row(child), '_delegate_from')) drop(child);
                else this.row(child).parent_session_id = null;
            }
            this.deleteRow(sid);
        };
        drop(id);
        sendJson(ctx.res, 200, { object: 'hermes.session.deleted', id, deleted: true });
    }

    /** GET /api/sessions/{id}/messages (api_server.py:1978): every message, no paging, of the resolved session. */
    messagesEndpoint(ctx: RequestCtx): void {
        const id = ctx.params.session_id;
        if (!this.exists(ctx, id)) return;
        const resolved = this.resolveResume(id);
        sendJson(ctx.res, 200, { object: 'list', session_id: resolved, data: this.rows(resolved) });
    }

    /** POST /api/sessions/{id}/fork (api_server.py:1996). */
    fork(ctx: RequestCtx): void {
        const source = ctx.params.session_id;
        if (!this.exists(ctx, source)) return;
        const body = this.jsonObject(ctx);
        if (!body) return;
        const requested = pyTruthy(body.id) ? body.id : pyTruthy(body.session_id) ? body.session_id : undefined;
        const id = requested === undefined ? generatedId() : pyStrip(pyStr(requested));
        if (!id || /[\r\n\0]/.test(id)) {
            return sendError(ctx.res, 400, openaiError('Invalid session ID', { code: 'invalid_session_id' }));
        }
        if (this.has(id)) return sendError(ctx.res, 409, errors.sessionExists(id));
        const sourceRow = this.row(source);
        this.end(source, 'branched');
        this.ensure(id, {
            model: sourceRow.model,
            system_prompt: sourceRow.system_prompt,
            parent_session_id: source,
            // Created after the source's end, as Hermes's row is (the list shows it as a branch).
            started_at: Math.max(now(), sourceRow.ended_at ?? 0),
        });
        const list = this.messages.get(id) as StoredMessage[];
        for (const m of this.rows(source)) {
            list.push(
                this.complete(id, {
                    ...m,
                    id: undefined,
                    session_id: undefined,
                    reasoning: m.role === 'assistant' ? m.reasoning : null,
                    reasoning_content: m.role === 'assistant' ? m.reasoning_content : null,
                }),
            );
        }
        const title = body.title === undefined || body.title === null ? this.nextTitleInLineage(sourceRow.title || 'fork') : pyStr(body.title);
        try {
            this.setTitle(id, title);
        } catch (e) {
            return sendError(ctx.res, 400, openaiError((e as Error).message, { code: 'invalid_title' }));
        }
        sendJson(ctx.res, 201, { object: 'hermes.session', session: this.sessionObject(id) });
    }
}
