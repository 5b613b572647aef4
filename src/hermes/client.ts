import { HermesConfig } from '../settings/config';
import { HermesCapabilities, NO_CAPABILITIES, parseCapabilities } from './capabilities';
import { chat, ChatAnswer, ChatTurn, chatStream, ToolProgress } from './chat';
import { HermesError } from './errors';
import { approve, createRun, RunEvent, runEvents, RunInput, runStatus, RunStatus, steerRun, stopRun } from './runs';
import { HermesTransport } from './transport';
import { HermesRoute, HermesWire, parseJson } from './wire';

/** A transcript row as the session messages route gives it (ids are the transcript's own, increasing): sessions/exchanges.ts leaves some out. */
export interface TranscriptRow {
    id?: number;
    role: string;
    content: string;
}

/**
 * A session transcript is read to be sent back as a run's history, and Hermes takes
 * request bodies up to 10,000,000 bytes; tool output in it can make it far larger than one answer.
 */
const MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024;

export interface HermesHealth {
    status: string;
    version?: string;
}

/**
 * The app's one handle on Hermes: what it speaks is split by transport (chat.ts, runs.ts) over
 * one wire (wire.ts); the server's own questions (health, capabilities) and its session API
 * are here.
 */
export class HermesClient {
    private readonly wire: HermesWire;

    constructor(
        private readonly transport: HermesTransport,
        private readonly config: HermesConfig,
        route: HermesRoute = {},
    ) {
        this.wire = new HermesWire(transport, config, route);
    }

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

    public chat(turn: ChatTurn): Promise<ChatAnswer> {
        return chat(this.wire, turn);
    }

    /**
     * The chat turn streamed, so tool progress arrives while the agent works. The connection
     * must stay open: Hermes interrupts the agent when the client leaves.
     */
    public chatStream(turn: ChatTurn, onProgress: (p: ToolProgress) => void, signal?: AbortSignal, onText?: (text: string) => void): Promise<ChatAnswer> {
        return chatStream(this.wire, turn, onProgress, signal, onText);
    }

    public createRun(run: RunInput): Promise<string> {
        return createRun(this.wire, run);
    }

    public runStatus(runId: string): Promise<RunStatus> {
        return runStatus(this.wire, runId);
    }

    /** Reads the run's event stream until it closes or `signal` aborts; each event to `onEvent`. */
    public runEvents(runId: string, onEvent: (e: RunEvent) => void, signal?: AbortSignal): Promise<void> {
        return runEvents(this.wire, runId, onEvent, signal);
    }

    public approve(runId: string, choice: string): Promise<void> {
        return approve(this.wire, runId, choice);
    }

    public steerRun(runId: string, input: string): Promise<boolean> {
        return steerRun(this.wire, runId, input);
    }

    public stopRun(runId: string): Promise<void> {
        return stopRun(this.wire, runId);
    }

    public async capabilities(): Promise<HermesCapabilities> {
        const health = await this.health();
        try {
            const result = await this.wire.call('GET', '/v1/capabilities', {});
            return parseCapabilities(parseJson(result.body), health.version);
        } catch (error) {
            // Servers before the capabilities document answer 404: chat completions only.
            if (error instanceof HermesError && error.status === 404) {
                return { ...NO_CAPABILITIES, version: health.version };
            }
            throw error;
        }
    }

    /** The session's transcript, for servers whose runs need it sent; a new session has none. Rows keep their ids: send {@link historyOf} them. */
    public async sessionMessages(sessionId: string): Promise<TranscriptRow[]> {
        try {
            const result = await this.wire.call('GET', `/api/sessions/${encodeURIComponent(sessionId)}/messages`, {}, undefined, MAX_TRANSCRIPT_BYTES);
            const rows = (parseJson(result.body) as { data?: Array<{ id?: unknown; role?: unknown; content?: unknown }> }).data ?? [];
            return (
                rows
                    .filter((r) => (r.role === 'user' || r.role === 'assistant') && typeof r.content === 'string' && r.content.length > 0)
                    // The row's id (the transcript's own, increasing) is what an undone exchange is left out by (sessions/exchanges.ts).
                    .map((r) => ({ ...(Number.isSafeInteger(r.id) ? { id: r.id as number } : {}), role: r.role as string, content: r.content as string }))
            );
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
        const result = await this.wire.call(method, path, headers, body === undefined ? undefined : JSON.stringify(body), maxBytes);
        return parseJson(result.body);
    }

    /** `/health` needs no key; used by status and start-up probes. */
    public async health(): Promise<HermesHealth> {
        const result = await this.wire.call('GET', '/health', {});
        const parsed = parseJson(result.body) as { status?: unknown; version?: unknown };
        if (typeof parsed?.status !== 'string') {
            throw new HermesError('malformed', '/health without a status');
        }
        return { status: parsed.status, version: typeof parsed.version === 'string' ? parsed.version : undefined };
    }
}
