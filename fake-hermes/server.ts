/**
 * The HTTP server: reads and records each request, applies scripted rules,
 * then routes like Hermes's aiohttp app:
 *   body-limit middleware (413 before anything else, even auth)
 *   → router (unknown path: aiohttp "404: Not Found", wrong method: 405)
 *   → handler: auth (401 except /health, /v1/health) → drain check (agent routes) → work.
 * Every authenticated route is also served under `/p/<profile>/…` (a Hermes profile), with the same behaviour: the
 * prefix is taken off before rules and routing and kept as the request's `profile`. The unauthenticated health routes
 * are root-only, so `/p/<profile>/health` is a 404 like any unknown path.
 */
import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import { EventEmitter } from 'events';
import { AddressInfo } from 'net';
import { ChatCompletions } from './chat';
import { capabilitiesBody, health, healthDetailed, models } from './discovery';
import { AUTH_ERROR, errors, sendError } from './errors';
import { ReplyFn } from './model';
import { sendAiohttpCrash, sendAiohttpError, sendJson } from './respond';
import { applyReplacement, modifiersOf, replacesResponse, RuleBook } from './rules';
import { RunManager } from './runs';
import { SessionStore } from './sessions';
import { sleep } from './agent';
import { HermesMode, ReceivedTurn, RecordedRequest, RequestCtx, ResolvedOptions, parseJsonBody } from './types';

interface Route {
    method: string;
    pattern: RegExp;
    keys: string[];
    auth: boolean;
    /** Agent-serving route: refused while draining; `agent_incomplete` rules modify it. */
    agent: boolean;
    modes: HermesMode[];
    handler: (ctx: RequestCtx) => void | Promise<void>;
}

const ALL_MODES: HermesMode[] = ['v0.18.2', 'newer', 'old'];
const NOT_OLD: HermesMode[] = ['v0.18.2', 'newer'];

function route(method: string, template: string, handler: Route['handler'], opts: { auth?: boolean; agent?: boolean; modes?: HermesMode[] } = {}): Route {
    const keys: string[] = [];
    const source = template.replace(/\{(\w+)\}/g, (_m, key: string) => {
        keys.push(key);
        return '([^/]+)';
    });
    return {
        method,
        pattern: new RegExp(`^${source}$`),
        keys,
        auth: opts.auth ?? true,
        agent: opts.agent ?? false,
        modes: opts.modes ?? ALL_MODES,
        handler,
    };
}

/** `/p/<profile>/rest` → the profile (decoded) and `/rest`; any other path is on the root. */
function splitProfile(pathname: string): { profile?: string; path: string } {
    const m = /^\/p\/([^/]+)(\/.*)$/.exec(pathname);
    if (!m) return { path: pathname };
    try {
        return { profile: decodeURIComponent(m[1]), path: m[2] };
    } catch {
        return { profile: m[1], path: m[2] };
    }
}

export class FakeHermesServer {
    readonly requests: RecordedRequest[] = [];
    /** Runs created and chat completions accepted, in order, with their profile and model. */
    readonly turns: ReceivedTurn[] = [];
    readonly emitter = new EventEmitter();
    readonly store = new SessionStore(this.opts);
    readonly rules = new RuleBook();
    readonly agents = new Set<AbortController>();
    readonly runs: RunManager;
    readonly chat: ChatCompletions;
    replyFn: ReplyFn | null = null;
    draining = false;
    readonly startedAt = Date.now();
    private readonly server: Server;
    private readonly routes: Route[];

    constructor(readonly opts: ResolvedOptions) {
        this.emitter.setMaxListeners(0);
        const deps = { opts, store: this.store, emitter: this.emitter, replyFn: () => this.replyFn, turns: this.turns };
        this.runs = new RunManager(deps);
        this.chat = new ChatCompletions({ ...deps, agents: this.agents });
        const s = this.store;
        const r = this.runs;
        this.routes = [
            route('GET', '/health', (c) => health(c, opts), { auth: false }),
            route('GET', '/v1/health', (c) => health(c, opts), { auth: false }),
            route('GET', '/health/detailed', (c) =>
                healthDetailed(c, opts, {
                    startedAt: this.startedAt,
                    activeRuns: r.activeCount(),
                    activeAgents: r.activeCount() + this.agents.size,
                }),
            ),
            route('GET', '/v1/models', (c) => models(c, opts)),
            route('GET', '/v1/capabilities', (c) => sendJson(c.res, 200, capabilitiesBody(opts)), { modes: NOT_OLD }),
            route('POST', '/v1/chat/completions', (c) => this.chat.handle(c), { agent: true }),
            route('POST', '/v1/runs', (c) => r.create(c), { agent: true, modes: NOT_OLD }),
            route('GET', '/v1/runs/{run_id}', (c) => r.get(c), { modes: NOT_OLD }),
            route('GET', '/v1/runs/{run_id}/events', (c) => r.events(c), { modes: NOT_OLD }),
            route('POST', '/v1/runs/{run_id}/approval', (c) => r.approval(c), { modes: NOT_OLD }),
            route('POST', '/v1/runs/{run_id}/stop', (c) => r.stop(c), { modes: NOT_OLD }),
            route('POST', '/v1/runs/{run_id}/steer', (c) => r.steer(c), { modes: ['newer'] }),
            route('GET', '/api/sessions', (c) => s.list(c), { modes: NOT_OLD }),
            route('POST', '/api/sessions', (c) => s.create(c), { modes: NOT_OLD }),
            route('GET', '/api/sessions/{session_id}', (c) => s.get(c), { modes: NOT_OLD }),
            route('PATCH', '/api/sessions/{session_id}', (c) => s.patch(c), { modes: NOT_OLD }),
            route('DELETE', '/api/sessions/{session_id}', (c) => s.remove(c), { modes: NOT_OLD }),
            route('GET', '/api/sessions/{session_id}/messages', (c) => s.messagesEndpoint(c), { modes: NOT_OLD }),
            route('POST', '/api/sessions/{session_id}/fork', (c) => s.fork(c), { modes: NOT_OLD }),
        ];
        this.server = createServer((req, res) => {
            res.on('error', () => undefined);
            this.handle(req, res).catch(() => {
                if (!res.headersSent) sendAiohttpCrash(res);
                else res.destroy();
            });
        });
        this.server.on('clientError', (_err, socket) => socket.destroy());
    }

    listen(): Promise<string> {
        return new Promise((resolve, reject) => {
            this.server.once('error', reject);
            this.server.listen(this.opts.port, this.opts.host, () => {
                const { port } = this.server.address() as AddressInfo;
                resolve(`http://${this.opts.host}:${port}`);
            });
        });
    }

    close(): Promise<void> {
        return new Promise((resolve) => {
            this.server.close(() => resolve());
            this.server.closeAllConnections();
        });
    }

    reset(): void {
        for (const abort of this.agents) abort.abort();
        this.agents.clear();
        this.runs.reset();
        this.chat.reset();
        this.store.reset();
        this.rules.clear();
        this.requests.length = 0;
        this.turns.length = 0;
        this.replyFn = null;
        this.draining = false;
    }

    private async readBody(req: IncomingMessage): Promise<{ raw: string; bytes: number; tooLarge: boolean }> {
        const chunks: Buffer[] = [];
        let bytes = 0;
        let tooLarge = false;
        for await (const chunk of req) {
            const buf = chunk as Buffer;
            bytes += buf.length;
            // Keep draining past the limit (so the client gets the 413) but stop storing.
            if (bytes > this.opts.maxBodyBytes) tooLarge = true;
            else chunks.push(buf);
        }
        return { raw: tooLarge ? '' : Buffer.concat(chunks).toString('utf8'), bytes, tooLarge };
    }

    private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
        const method = (req.method ?? 'GET').toUpperCase();
        const url = req.url ?? '/';
        const parsedUrl = new URL(url, 'http://fake-hermes');
        const { profile, path } = splitProfile(parsedUrl.pathname);
        const query: Record<string, string> = {};
        parsedUrl.searchParams.forEach((v, k) => (query[k] = v));
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) {
            if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
        }
        const declaredLength = headers['content-length'];
        const { raw, bytes, tooLarge } = await this.readBody(req);
        const parsed = parseJsonBody(raw);
        const recorded: RecordedRequest = {
            method,
            path,
            ...(profile !== undefined ? { profile } : {}),
            url,
            query,
            headers,
            body: raw,
            bodyBytes: bytes,
            ...(parsed.ok ? { json: parsed.value } : {}),
            at: Date.now(),
        };
        this.requests.push(recorded);
        this.emitter.emit('request', recorded);

        const resolved = this.resolve(method === 'HEAD' ? 'GET' : method, path, profile !== undefined);
        const ctx: RequestCtx = {
            req,
            res,
            method,
            path,
            params: resolved.params,
            query,
            headers,
            raw,
            recorded,
            mods: {},
        };

        const rule = this.rules.take(recorded);
        if (rule) {
            if (rule.delayMs) await sleep(rule.delayMs);
            if (replacesResponse(rule, Boolean(resolved.route?.agent))) return applyReplacement(ctx, rule, this.opts);
            ctx.mods = modifiersOf(rule);
        }

        if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
            if (declaredLength !== undefined && !/^\d+$/.test(declaredLength.trim())) {
                return sendError(res, 400, errors.invalidContentLength());
            }
            if (tooLarge) return sendError(res, 413, errors.bodyTooLarge());
        }

        if (!resolved.route) {
            if (resolved.allowed.length > 0) {
                return sendAiohttpError(res, 405, 'Method Not Allowed', [['Allow', resolved.allowed.join(',')]]);
            }
            return sendAiohttpError(res, 404, 'Not Found');
        }
        const routeDef = resolved.route;
        if (routeDef.auth && !this.authorized(headers)) return sendError(res, 401, AUTH_ERROR);
        if (routeDef.agent && this.draining) return sendError(res, 503, errors.draining(), [['Retry-After', '1']]);
        await routeDef.handler(ctx);
    }

    private authorized(headers: Record<string, string>): boolean {
        const auth = headers.authorization ?? '';
        return auth.startsWith('Bearer ') && auth.slice(7).trim() === this.opts.apiKey;
    }

    private resolve(method: string, path: string, profiled: boolean): { route?: Route; params: Record<string, string>; allowed: string[] } {
        const allowed: string[] = [];
        for (const candidate of this.routes) {
            if (!candidate.modes.includes(this.opts.mode)) continue;
            if (profiled && !candidate.auth) continue;
            const m = candidate.pattern.exec(path);
            if (!m) continue;
            if (candidate.method !== method) {
                allowed.push(candidate.method);
                continue;
            }
            const params: Record<string, string> = {};
            candidate.keys.forEach((key, i) => {
                try {
                    params[key] = decodeURIComponent(m[i + 1]);
                } catch {
                    params[key] = m[i + 1];
                }
            });
            return { route: candidate, params, allowed };
        }
        return { params: {}, allowed: [...new Set(allowed)].sort() };
    }
}
