import { HermesClient } from './client';
import { HermesError } from './errors';

/** One row of `GET /api/sessions/{id}/messages`, as far as the app reads it. */
export interface TranscriptMessage {
    role: string;
    content: string | null;
    tool_calls?: Array<{ function?: { name?: string } } | null> | null;
    tool_name?: string | null;
    /** Seconds since the epoch. */
    timestamp?: number;
}

/** What Hermes reports of one session (`GET /api/sessions/{id}` and the list). */
export interface HermesSessionInfo {
    id: string;
    title?: string;
    source?: string;
    /** ms since the epoch. */
    startedAt?: number;
    lastActive?: number;
    endedAt?: number;
    messageCount?: number;
}

export type TitleResult = 'set' | 'taken' | 'missing';

/** Hermes stores times as seconds since the epoch (floats); the app works in ms. */
function ms(value: unknown): number | undefined {
    return typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1000) : undefined;
}

function infoOf(raw: unknown): HermesSessionInfo | undefined {
    const r = (raw ?? {}) as Record<string, unknown>;
    const row = (r.session && typeof r.session === 'object' ? r.session : r) as Record<string, unknown>;
    const id = typeof row.id === 'string' ? row.id : typeof row.session_id === 'string' ? row.session_id : undefined;
    if (!id) {
        return undefined;
    }
    return {
        id,
        title: typeof row.title === 'string' && row.title ? row.title : undefined,
        source: typeof row.source === 'string' ? row.source : undefined,
        startedAt: ms(row.started_at),
        lastActive: ms(row.last_active ?? row.updated_at ?? row.ended_at ?? row.started_at),
        endedAt: ms(row.ended_at),
        messageCount: typeof row.message_count === 'number' ? row.message_count : undefined,
    };
}

const path = (id: string, rest = '') => `/api/sessions/${encodeURIComponent(id)}${rest}`;

function isStatus(error: unknown, status: number): boolean {
    return error instanceof HermesError && error.status === status;
}

/** Hermes's session endpoints (`/api/sessions…`), as the session commands use them. */
export class HermesSessions {
    constructor(private readonly hermes: HermesClient) {}

    /** Undefined when Hermes has no such session (yet). */
    public async info(id: string): Promise<HermesSessionInfo | undefined> {
        try {
            return infoOf(await this.hermes.json('GET', path(id)));
        } catch (error) {
            if (isStatus(error, 404)) {
                return undefined;
            }
            throw error;
        }
    }

    /**
     * The sessions Hermes has, latest activity first (every source on the host: the app's own
     * index says whose is whose). Only list rows carry `last_active`. At most 200 per page.
     */
    public async list(limit: number, offset = 0): Promise<HermesSessionInfo[]> {
        const body = (await this.hermes.json('GET', `/api/sessions?limit=${limit}&offset=${offset}`)) as { data?: unknown[]; sessions?: unknown[] };
        const rows = Array.isArray(body?.data) ? body.data : Array.isArray(body?.sessions) ? body.sessions : [];
        return rows.map(infoOf).filter((s): s is HermesSessionInfo => Boolean(s));
    }

    /**
     * Sets a title; Hermes keeps titles unique (exact match) and refuses one another session
     * has with `400 invalid_title` "Title '…' is already in use by session …" (transcripts 4x).
     */
    public async setTitle(id: string, title: string): Promise<TitleResult> {
        try {
            await this.hermes.json('PATCH', path(id), { title });
            return 'set';
        } catch (error) {
            if (isStatus(error, 404)) {
                return 'missing';
            }
            if (error instanceof HermesError && error.status === 400 && error.code === 'invalid_title' && /already in use/i.test(error.detail)) {
                return 'taken';
            }
            throw error;
        }
    }

    /** Marks a session ended, as the gateway does before a reset (`end_reason`). */
    public async end(id: string, reason: string): Promise<void> {
        try {
            await this.hermes.json('PATCH', path(id), { end_reason: reason });
        } catch (error) {
            if (!isStatus(error, 404)) {
                throw error;
            }
        }
    }

    /** The whole transcript with tool calls and times; undefined when Hermes has no such session. */
    public async transcript(id: string): Promise<TranscriptMessage[] | undefined> {
        try {
            const body = (await this.hermes.json('GET', path(id, '/messages'))) as { data?: unknown[] };
            return (Array.isArray(body?.data) ? body.data : []).filter(
                (m): m is TranscriptMessage => Boolean(m) && typeof (m as TranscriptMessage).role === 'string',
            );
        } catch (error) {
            if (isStatus(error, 404)) {
                return undefined;
            }
            throw error;
        }
    }
}
