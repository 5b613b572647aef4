import { PersonalText, renderFor } from '../../src/i18n/messages';
import { ContextMessage } from '../../src/context/contextMessage';
import { HistoryPort } from '../../src/context/historyPort';
import { ButtonsView, LiveChatPort, PostedMessage, ReplyTarget } from '../../src/delivery/chatPort';
import { BotMessageKind, MessageMark } from '../../src/delivery/messageKind';
import { HermesClient } from '../../src/hermes/client';
import { LiveTurns } from '../../src/hermes/liveTurns';
import { HermesTransport, HttpRequest, HttpResult, StreamResult } from '../../src/hermes/transport';
import { DEFAULT_OPTIONS, HermesConfig } from '../../src/settings/config';
import { freshRecord, SessionPort, SessionRecord } from '../../src/sessions/sessionRecord';
import { TickJob, TickPorts } from '../../src/turns/tickPorts';
import { ApprovalDecision, TurnRecord, SentRecord } from '../../src/turns/turnRecord';
import { TurnStore } from '../../src/turns/turnStore';
import { IntakePorts } from '../../src/intake/intakePorts';

/** Turn records in memory, copied in and out like a database would (no shared objects). */
export class MemoryTurnStore implements TurnStore {
    public readonly records = new Map<string, TurnRecord>();
    public readonly stops = new Map<string, string>();
    public readonly decisions = new Map<string, ApprovalDecision>();
    public saves = 0;
    /** The app process is dead: every call fails until the test revives it (a restart). */
    public dead = false;

    public alive(): void {
        if (this.dead) {
            throw new Error('the app process is dead');
        }
    }

    public async get(id: string): Promise<TurnRecord | undefined> {
        this.alive();
        const r = this.records.get(id);
        return r ? clone(r) : undefined;
    }

    public async save(record: TurnRecord, opts?: { textKept?: boolean }): Promise<void> {
        this.alive();
        this.saves++;
        const stored = clone(record);
        if (opts?.textKept) {
            // As the engine store: the head alone; the text and outcome stay what was stored before (none for a new turn).
            const before = this.records.get(record.id);
            for (const field of ['user', 'system', 'recap', 'delivery'] as const) {
                (stored as unknown as Record<string, unknown>)[field] = before ? clone(before)[field] : undefined;
            }
        }
        this.records.set(record.id, stored);
    }

    public async openInSession(sessionKey: string): Promise<TurnRecord[]> {
        return [...this.records.values()].filter((r) => r.sessionKey === sessionKey && r.phase !== 'done').map(clone);
    }

    public async open(): Promise<TurnRecord[]> {
        return [...this.records.values()].filter((r) => r.phase !== 'done').map(clone);
    }

    /** Marks of waiting turns, by the turn they wait for (TurnStore.waitOn). */
    public readonly marks = new Map<string, Set<string>>();

    public async waitOn(waiterId: string, blockerIds: string[]): Promise<string[]> {
        this.alive();
        for (const b of blockerIds) {
            this.marks.set(b, new Set([...(this.marks.get(b) ?? []), waiterId]));
        }
        // As the engine store: a blocker gone, or waiting itself by now, is returned (its mark dropped).
        const gone = blockerIds.filter((b) => !this.records.has(b) || Boolean(this.records.get(b)?.waiting));
        gone.forEach((b) => this.marks.get(b)?.delete(waiterId));
        return gone;
    }

    public async remove(id: string, also = { stop: true, decisions: true }): Promise<{ waiters: number }> {
        this.records.delete(id);
        const waiters = this.marks.get(id)?.size ?? 0;
        this.marks.delete(id);
        if (also.stop) {
            this.stops.delete(id);
        }
        for (const key of also.decisions ? [...this.decisions.keys()].filter((k) => k.startsWith(`${id}:`)) : []) {
            this.decisions.delete(key);
        }
        return { waiters };
    }

    public readonly sents = new Map<string, SentRecord>();

    public async recordSent(id: string, sent: SentRecord): Promise<void> {
        this.alive();
        this.sents.set(id, clone(sent));
    }

    public async sent(id: string): Promise<SentRecord | undefined> {
        this.alive();
        return this.sents.has(id) ? clone(this.sents.get(id)) : undefined;
    }

    public async dropSent(id: string): Promise<void> {
        this.alive();
        this.sents.delete(id);
    }

    public async requestStop(id: string, by: string): Promise<void> {
        this.stops.set(id, by);
    }

    public async stopRequest(id: string): Promise<string | undefined> {
        return this.stops.get(id);
    }

    public async decide(turnId: string, decision: ApprovalDecision): Promise<void> {
        this.decisions.set(`${turnId}:${decision.messageId}`, clone(decision));
    }

    public async decision(turnId: string, messageId: string): Promise<ApprovalDecision | undefined> {
        const d = this.decisions.get(`${turnId}:${messageId}`);
        return d ? clone(d) : undefined;
    }
}

export class MemorySessions implements SessionPort {
    public readonly records = new Map<string, SessionRecord>();
    public async get(key: string): Promise<SessionRecord> {
        return this.records.get(key) ?? freshRecord(key);
    }
    public async save(record: SessionRecord): Promise<void> {
        this.records.set(record.key, { ...record });
    }
}

export interface ChatMessage extends PostedMessage {
    target: ReplyTarget;
    kind: BotMessageKind;
    buttons?: ButtonsView;
    removed?: boolean;
}

/** The bot's side of a room, in memory: posts, edits, removals, whispers. */
export class MemoryChat implements LiveChatPort {
    public readonly messages: ChatMessage[] = [];
    public readonly whispers: Array<{ userId: string; text: string; buttons?: ButtonsView }> = [];
    public edits = 0;
    /** Set by a test: called right after the next post, before its id reaches the app (to kill the process there). */
    public afterNextPost?: () => void;
    public dead = false;
    private next = 0;

    constructor(private readonly now: () => number) {}

    public async post(target: ReplyTarget, text: string, kind: BotMessageKind, opts: { turnId?: string; buttons?: ButtonsView } = {}): Promise<string> {
        if (this.dead) {
            throw new Error('the app process is dead');
        }
        const id = `m${++this.next}`;
        this.messages.push({
            id,
            target,
            text,
            kind,
            createdAt: this.now(),
            mark: kind === 'answer' ? undefined : { kind, turnId: opts.turnId },
            buttons: opts.buttons,
        });
        const after = this.afterNextPost;
        this.afterNextPost = undefined;
        after?.();
        if (this.dead) {
            throw new Error('the app process died after posting');
        }
        return id;
    }

    public async edit(messageId: string, _roomId: string, text: string, mark: MessageMark | undefined, buttons?: ButtonsView): Promise<void> {
        const m = this.messages.find((x) => x.id === messageId && !x.removed);
        if (!m) {
            throw new Error('A message must exist to update.');
        }
        this.edits++;
        Object.assign(m, { text, mark, buttons });
    }

    public async remove(messageId: string): Promise<void> {
        const m = this.messages.find((x) => x.id === messageId);
        if (m) {
            m.removed = true;
        }
    }

    public async typing(): Promise<() => Promise<void>> {
        return async () => undefined;
    }

    public async botMessages(target: ReplyTarget): Promise<PostedMessage[]> {
        return this.visible().filter((m) => m.target.roomId === target.roomId && m.target.threadId === target.threadId);
    }

    public async whisper(userId: string, _target: ReplyTarget, text: PersonalText, buttons?: ButtonsView): Promise<void> {
        this.whispers.push({ userId, text: renderFor(text), buttons });
    }

    /** The bot's reactions, in the order they were asked for. */
    public readonly reactions: Array<{ messageId: string; emoji: string; on: boolean }> = [];

    public async react(messageId: string, emoji: string, on: boolean): Promise<void> {
        this.reactions.push({ messageId, emoji, on });
    }

    public visible(): ChatMessage[] {
        return this.messages.filter((m) => !m.removed);
    }

    public answers(): ChatMessage[] {
        return this.visible().filter((m) => m.kind === 'answer');
    }
}

/**
 * Hermes runs, scripted per test: every run is `running` until the test sets its status.
 * The event stream stays open and silent (as after a restart, when another subscriber had
 * it), so the app learns everything by polling.
 */
export class ScriptedRuns implements HermesTransport {
    public readonly statuses = new Map<string, Record<string, unknown>>();
    public readonly requests: HttpRequest[] = [];
    /** Answers the next run creations get instead of a run (Hermes's error envelopes), in order. */
    public readonly createFailures: Array<{ status: number; headers?: Record<string, string>; code: string }> = [];
    /** Hermes's sessions' messages (GET /api/sessions/{id}/messages), by session id; none for others. */
    public readonly transcripts = new Map<string, Array<{ role: string; content: string }>>();
    /** What a new run's status starts as. */
    public initialStatus: Record<string, unknown> = { status: 'running' };
    private runs = 0;

    public async send(request: HttpRequest): Promise<HttpResult> {
        this.requests.push(request);
        const path = new URL(request.url).pathname;
        if (request.method === 'POST' && path === '/v1/runs' && this.createFailures.length > 0) {
            const failure = this.createFailures.shift() as { status: number; headers?: Record<string, string>; code: string };
            return {
                status: failure.status,
                headers: { 'content-type': 'application/json', ...(failure.headers ?? {}) },
                body: JSON.stringify({ error: { message: failure.code, type: 'error', code: failure.code } }),
            };
        }
        if (request.method === 'POST' && path === '/v1/runs') {
            const id = `run_${++this.runs}`;
            // Hermes keeps the run's question in its session's transcript.
            const body = JSON.parse(String(request.body ?? '{}')) as { session_id?: string; input?: unknown };
            if (body.session_id && typeof body.input === 'string') {
                this.transcripts.set(body.session_id, [...(this.transcripts.get(body.session_id) ?? []), { role: 'user', content: body.input }]);
            }
            this.statuses.set(id, { ...this.initialStatus });
            return json(202, { run_id: id, status: 'started' });
        }
        const m = /^\/v1\/runs\/([^/]+)(\/stop|\/approval)?$/.exec(path);
        if (m && request.method === 'GET') {
            return json(200, { run_id: m[1], ...(this.statuses.get(m[1]) ?? { status: 'running' }) });
        }
        if (m && m[2] === '/stop') {
            this.statuses.set(m[1], { status: 'cancelled' });
            return json(200, { run_id: m[1], status: 'stopping' });
        }
        if (m && m[2] === '/approval') {
            return json(200, { ok: true });
        }
        const session = /^\/api\/sessions\/([^/]+)\/messages$/.exec(path)?.[1];
        if (session) {
            return json(200, { data: this.transcripts.get(decodeURIComponent(session)) ?? [] });
        }
        if (path.startsWith('/api/sessions/')) {
            return json(200, { data: [] });
        }
        return json(404, { error: { message: 'not found' } });
    }

    /** Per run: pushes run events down its open event stream (as SSE frames). */
    public readonly eventStreams = new Map<string, (event: Record<string, unknown>) => void>();

    public stream(request: HttpRequest, onText: (text: string) => void, signal?: AbortSignal): Promise<StreamResult> {
        this.requests.push(request);
        const run = /^\/v1\/runs\/([^/]+)\/events$/.exec(new URL(request.url).pathname)?.[1];
        if (run) {
            this.eventStreams.set(run, (event) => onText(`data: ${JSON.stringify(event)}\n\n`));
        }
        return new Promise((resolve) => signal?.addEventListener('abort', () => resolve({ status: 499, headers: {}, body: '' })));
    }

    public count(method: string, path: RegExp): number {
        return this.requests.filter((r) => r.method === method && path.test(new URL(r.url).pathname)).length;
    }
}

function json(status: number, body: unknown): HttpResult {
    return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

function clone<T>(value: T): T {
    return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * Agenda's rule on a controllable clock: jobs run one at a time, in due order, and only
 * when the clock reaches them. Counts every job per turn.
 */
/** Threads and rooms as lists of messages; counts the reads. */
export class MemoryHistory implements HistoryPort {
    public readonly messages: ContextMessage[] = [];
    public reads = 0;
    public failing = false;

    public async mainChannel(roomId: string, before: { id: string; createdAt: Date }): Promise<ContextMessage[]> {
        this.reads++;
        return this.before(before).filter((m) => !m.threadId);
    }

    public async thread(threadId: string, before: { id: string; createdAt: Date }): Promise<ContextMessage[]> {
        this.reads++;
        if (this.failing) {
            throw new Error('thread read failed');
        }
        const all = this.before(before).filter((m) => m.id === threadId || m.threadId === threadId);
        return [...all.filter((m) => m.id === threadId), ...all.filter((m) => m.id !== threadId)];
    }

    public async message(id: string): Promise<ContextMessage | undefined> {
        this.reads++;
        return this.messages.find((m) => m.id === id);
    }

    private before(before: { id: string; createdAt: Date }): ContextMessage[] {
        return this.messages
            .filter((m) => m.id !== before.id && m.createdAt.getTime() <= before.createdAt.getTime())
            .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    }
}

export class VirtualScheduler {
    /** Each scheduler starts later than every one before: the app keeps per-process state by turn id. */
    public static latest = 1_000_000;
    public time = (VirtualScheduler.latest += 1_000_000_000);
    private seq = 0;
    public readonly pending: Array<{ id: string; job: TickJob; at: number }> = [];
    public readonly ran: TickJob[] = [];

    public schedule(job: TickJob, delayMs: number): string {
        const id = `job${++this.seq}`;
        this.pending.push({ id, job, at: this.time + Math.max(0, delayMs) });
        return id;
    }

    public cancel(id: string): void {
        const at = this.pending.findIndex((p) => p.id === id);
        if (at !== -1) {
            this.pending.splice(at, 1);
        }
    }

    /** Chain jobs of one turn not yet run (wake-ups from a stream are not part of the chain). */
    public pendingFor(turnId: string): number {
        return this.pending.filter((p) => p.job.turnId === turnId && !p.job.wake).length;
    }

    /** Runs every job due up to `until`, one at a time, moving the clock to each job's time. */
    public async runUntil(until: number, run: (job: TickJob) => Promise<void>): Promise<void> {
        for (;;) {
            this.pending.sort((a, b) => a.at - b.at);
            let due = this.pending[0];
            if (!due || due.at > until) {
                // Work the app started in the background (a submission, a stream) may schedule a wake-up: let it.
                await new Promise((r) => setImmediate(r));
                await new Promise((r) => setImmediate(r));
                this.pending.sort((a, b) => a.at - b.at);
                due = this.pending[0];
                if (!due || due.at > until) {
                    break;
                }
            }
            this.pending.shift();
            this.time = Math.max(this.time, due.at);
            this.ran.push(due.job);
            await run({ ...due.job, jobId: due.id });
        }
        this.time = until;
    }
}

export const TEST_CONFIG: HermesConfig = {
    ...DEFAULT_OPTIONS,
    hermesUrl: 'http://hermes.test',
    hermesApiKey: 'k'.repeat(20),
    hermesTransport: 'runs',
    progress: 'status',
    // The turn path's tests send several turns of one person in one session and follow each: each
    // its own turn, as before busy_input_mode (follow-ups merged or steered: followUps.test.ts).
    busyInputMode: 'queue',
};

/** The send claims made on each store (the engine's are first-stored-wins receipts): the first of a key wins. */
const sendClaims = new WeakMap<object, Set<string>>();
function firstClaim(store: object, key: string): boolean {
    const taken = sendClaims.get(store) ?? new Set<string>();
    sendClaims.set(store, taken);
    const first = !taken.has(key);
    taken.add(key);
    return first;
}

/** Tick ports over the memory fakes above; `sched` is the virtual scheduler. */
export function memoryTickPorts(over: Partial<TickPorts> & { sched: VirtualScheduler; transport?: HermesTransport; config?: HermesConfig }) {
    const config = over.config ?? TEST_CONFIG;
    const transport = over.transport ?? new ScriptedRuns();
    const store = new MemoryTurnStore();
    const chat = new MemoryChat(() => over.sched.time);
    const logs: string[] = [];
    const log = {
        info: (m: string) => logs.push(m),
        warn: (m: string) => logs.push(m),
        error: (m: string) => logs.push(m),
        debug: (m: string) => logs.push(m),
    };
    const ports: TickPorts = {
        config,
        hermes: new HermesClient(transport, config),
        capabilities: async () => ({ runs: true, runsLoadHistory: true, version: 'test' }) as never,
        store,
        sessions: new MemorySessions(),
        chat,
        history: new MemoryHistory(),
        botId: 'BOT',
        server: async () => ({ maxMessageSize: 5000, siteUrl: '' }),
        live: new LiveTurns(),
        schedule: async (job, delay) => over.sched.schedule(job, delay),
        cancel: async (id) => over.sched.cancel(id),
        claimSend: async (key) => firstClaim(ports.store, key),
        log: log as never,
        now: () => over.sched.time,
        ...over,
    };
    return { ports, store, chat, transport, logs };
}

/** A queued turn as startTurn stores it. */
export function queuedTurn(id: string, over: Partial<TurnRecord> = {}): TurnRecord {
    return {
        id,
        createdAt: VirtualScheduler.latest,
        seq: VirtualScheduler.latest,
        chain: `chain-${id}`,
        sessionKey: 'agent:main:rocketchat:channel:R1:U1',
        roomId: 'R1',
        roomType: 'c',
        kind: 'room',
        askerId: 'U1',
        askerUsername: 'alice',
        system: 'system text',
        user: 'user text',
        phase: 'queued',
        progress: [],
        attempts: 0,
        ...over,
    };
}

/** Lets work the app started in the background (a submission, its save) settle: ten turns of the event loop. */
export async function settleBackground(): Promise<void> {
    for (let i = 0; i < 10; i++) {
        await new Promise((r) => setImmediate(r));
    }
}

/**
 * An intake's ports over in-memory parts (intake/takeMessage.ts): a DM bot, no history, a server
 * of 5,000-character messages; `over` replaces any of them (the tests' schedule and claim record
 * what they do).
 */
export function intakePorts(over: Partial<IntakePorts> & Pick<IntakePorts, 'turns' | 'chat'>): IntakePorts {
    const noLog = () => undefined;
    return {
        config: TEST_CONFIG,
        hermes: new HermesClient(new ScriptedRuns(), TEST_CONFIG),
        bot: { id: 'BOT', username: 'hermes' },
        history: { mainChannel: async () => [], thread: async () => [], message: async () => undefined },
        sessions: new MemorySessions(),
        live: new LiveTurns(),
        server: async () => ({ maxMessageSize: 5000, siteUrl: '' }),
        schedule: async () => undefined,
        claim: async () => undefined,
        log: { info: noLog, warn: noLog, error: noLog, debug: noLog },
        now: () => Date.now(),
        ...over,
    };
}
