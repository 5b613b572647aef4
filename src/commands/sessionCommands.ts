import { HermesSessionInfo, HermesSessions } from '../hermes/sessionsApi';
import { translator } from '../i18n/messages';
import { LogPort } from '../security/safeLog';
import { recap } from '../sessions/recap';
import { distinctNewestFirst, OwnedSession, SessionIndexPort } from '../sessions/sessionIndex';
import { freshRecord, SessionPort } from '../sessions/sessionRecord';
import { cleanTitle, newestOfLineage, nextInLineage, shownTitle } from '../sessions/titles';
import { inUseElsewhere, MemberOf, reachable, resumableIn } from '../sessions/sessionAccess';
import { TurnStore } from '../turns/turnStore';
import { formatStamp } from '../time/timestamp';

/** What the session commands reach: Hermes's session API, the app's index and records. */
export interface SessionCommandPorts {
    api: HermesSessions;
    index: SessionIndexPort;
    sessions: SessionPort;
    turns: TurnStore;
    log: LogPort;
    timeZone: string;
    isAdmin: boolean;
    now: () => number;
    /** The reader's language preference (the replies are private); absent: the server's. */
    language?: string;
    /**
     * Whether the person running the command is a member of a room now: the index says where
     * they once asked, this says where they still may read. Absent: no room's sessions at all.
     */
    memberOf?: MemberOf;
}

const PAGE_SIZE = 10;
/** Sessions looked at when resuming by title (their titles come from Hermes, one request each). */
const MAX_CANDIDATES = 50;
/** Hermes's largest list page. */
const LIST_PAGE = 200;
/** An id prefix shorter than this is too likely to name several sessions. */
const MIN_PREFIX = 4;

/** `/hermes title [text]`: shows or sets the title of this conversation's session. */
export async function titleCommand(args: string, key: string, ports: SessionCommandPorts): Promise<string> {
    const t = translator(ports.language);
    const record = await ports.sessions.get(key);
    if (!args.trim()) {
        // In a shared thread the title may be another member's words: shown as plain text.
        const info = await ports.api.info(record.sessionId);
        if (info?.title) {
            return t('title_is', { title: shownTitle(info.title) });
        }
        if (record.pendingTitle) {
            return t('title_pending', { title: shownTitle(record.pendingTitle) });
        }
        return record.autoTitle ? t('title_auto', { title: shownTitle(record.autoTitle) }) : t('title_none');
    }
    const title = cleanTitle(args);
    if (!title) {
        return t('title_usage');
    }
    const result = await ports.api.setTitle(record.sessionId, title);
    if (result === 'taken') {
        return t('title_taken', { title, suggestion: nextInLineage(title) });
    }
    if (result === 'missing') {
        // Hermes creates the session with its first turn; the title waits for it (seed 002: a title set before the session exists is applied when it starts).
        await ports.sessions.save({ ...record, pendingTitle: title });
        return t('title_queued', { title });
    }
    if (record.pendingTitle) {
        await ports.sessions.save({ ...record, pendingTitle: undefined });
    }
    return t('title_set', { title });
}

/** A session as listed: the index entry, what Hermes says of it, the title to show. */
interface Listed {
    entry: OwnedSession;
    info?: HermesSessionInfo;
    title: string;
}

/**
 * What Hermes says of each: one list request covers recent sessions (it alone carries the last
 * activity); a session older than that page is asked for by id.
 */
async function enrich(entries: OwnedSession[], api: HermesSessions): Promise<Listed[]> {
    const recent = new Map((await api.list(LIST_PAGE).catch((): HermesSessionInfo[] => [])).map((s) => [s.id, s]));
    const infos = await Promise.all(entries.map((e) => recent.get(e.sessionId) ?? api.info(e.sessionId).catch(() => undefined)));
    return entries.map((entry, i) => ({ entry, info: infos[i], title: infos[i]?.title ?? entry.autoTitle ?? entry.sessionId }));
}

/**
 * The sessions a person may see: theirs in this scope (a shared thread's belong to the thread),
 * or all of theirs; either way only of rooms they are a member of now.
 */
export async function visible(userId: string, key: string, all: boolean, ports: { index: SessionIndexPort; memberOf?: MemberOf }): Promise<OwnedSession[]> {
    return distinctNewestFirst(await reachable(all ? await ports.index.owned(userId) : await ports.index.inScope(key), ports.memberOf));
}

/** `/hermes sessions [all] [page]`: newest first, 10 per page; only the asker sees it. */
export async function sessionsCommand(args: string, userId: string, key: string, ports: SessionCommandPorts): Promise<string> {
    const t = translator(ports.language);
    const words = args.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const all = words.includes('all');
    const page = Math.max(1, Number(words.find((w) => /^\d+$/.test(w)) ?? 1));
    const current = (await ports.sessions.get(key)).sessionId;
    const entries = await visible(userId, key, all, ports);
    if (entries.length === 0) {
        return t(all ? 'sessions_none_all' : 'sessions_none');
    }
    const pages = Math.ceil(entries.length / PAGE_SIZE);
    const shown = await enrich(entries.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE), ports.api);
    const lines = [t(all ? 'sessions_header_all' : 'sessions_header', { count: entries.length })];
    for (const s of shown) {
        const active = s.info?.lastActive ?? s.entry.startedAt;
        const parts = [
            `**${shownTitle(s.title)}**`,
            formatStamp(new Date(active), ports.timeZone),
            t('sessions_messages', { count: s.info?.messageCount ?? 0 }),
            `\`${s.entry.sessionId}\``,
        ];
        if (s.entry.sessionId === current && s.entry.key === key) {
            parts.push(t('sessions_current'));
        }
        lines.push(`• ${parts.join(' · ')}`);
    }
    if (page < pages) {
        lines.push(t('sessions_more', { page, pages, next: `${all ? 'all ' : ''}${page + 1}` }));
    }
    return lines.join('\n');
}

/**
 * `/hermes resume <title|id|prefix>`: this conversation continues an earlier session of the
 * asker's — or, for an admin, any session Hermes has (how a CLI session moves into the
 * chat). A title resumes the newest of its lineage. The next answer starts with where the
 * session stood. Never while a turn of this conversation is running; only sessions of rooms the
 * asker is a member of now; a shared session only in its own conversation (sessionAccess.ts);
 * never a session in use in another conversation, an admin's included.
 */
export async function resumeCommand(
    args: string,
    who: { id: string },
    key: string,
    scope: Omit<OwnedSession, 'sessionId' | 'startedAt' | 'key'>,
    ports: SessionCommandPorts,
): Promise<string> {
    const t = translator(ports.language);
    const query = args.trim();
    if (!query) {
        return t('resume_usage');
    }
    if ((await ports.turns.openInSession(key)).length > 0) {
        return t('resume_busy');
    }
    const known = await reachable([...(await ports.index.owned(who.id)), ...(await ports.index.inScope(key))], ports.memberOf);
    // A session is resumable here when one of its entries allows it (its owner's, or this conversation's).
    const here = new Set(known.filter((e) => resumableIn(e, key)).map((e) => e.sessionId));
    const mine = distinctNewestFirst(known).slice(0, MAX_CANDIDATES);
    const listed = await enrich(mine, ports.api);
    let candidates: Candidate[] = listed.map((l) => ({
        id: l.entry.sessionId,
        title: l.title,
        lastActive: l.info?.lastActive ?? l.entry.startedAt,
        sharedElsewhere: !here.has(l.entry.sessionId),
    }));
    if (ports.isAdmin) {
        const hermes = await ports.api.list(MAX_CANDIDATES).catch((): HermesSessionInfo[] => []);
        candidates = [
            ...candidates,
            ...hermes.filter((h) => !candidates.some((c) => c.id === h.id)).map((h) => ({ id: h.id, title: h.title ?? h.id, lastActive: h.lastActive })),
        ];
    }
    const found = await pick(query, candidates, ports);
    if (found.kind === 'ambiguous') {
        return t('resume_ambiguous', { query, ids: found.ids.map((id) => `\`${id}\``).join(', ') });
    }
    if (found.kind === 'none') {
        return t(ports.isAdmin ? 'resume_none_admin' : 'resume_none', { query });
    }
    const target = found.session;
    const title = shownTitle(target.title);
    if (target.sharedElsewhere && !ports.isAdmin) {
        return t('resume_shared_elsewhere', { title });
    }
    const record = await ports.sessions.get(key);
    if (record.sessionId === target.id) {
        return t('resume_already', { title });
    }
    if (await inUseElsewhere(target.id, key, known, ports)) {
        ports.log.info(`Session ${key} did not resume ${target.id} for ${who.id}: it is in use in another conversation.`);
        return t('resume_elsewhere', { title });
    }
    const transcript = await ports.api.transcript(target.id);
    await ports.sessions.save({
        ...freshRecord(key, record.generation + 1),
        storedAt: record.storedAt,
        sessionId: target.id,
        // The session has a history: no DM seed, and a thread gets one blind pass (context/frontier.ts).
        turns: 1,
        recap: transcript ? recap(transcript, title) : undefined,
    });
    await ports.index.add(who.id, { ...scope, key, sessionId: target.id, startedAt: ports.now(), autoTitle: target.title });
    ports.log.info(`Session ${key} resumed ${target.id} for ${who.id}.`);
    return t('resume_done', { title });
}

/** A session `resume` may name; `sharedElsewhere`: another conversation's shared session, listed to say so rather than "none". */
interface Candidate {
    id: string;
    title: string;
    lastActive?: number;
    sharedElsewhere?: boolean;
}

type Pick = { kind: 'one'; session: Candidate } | { kind: 'ambiguous'; ids: string[] } | { kind: 'none' };

/** By exact id, then a unique id prefix, then a title's lineage; an admin may name any session by its exact id. */
async function pick(query: string, candidates: Candidate[], ports: SessionCommandPorts): Promise<Pick> {
    const exact = candidates.find((c) => c.id === query);
    if (exact) {
        return { kind: 'one', session: exact };
    }
    if (query.length >= MIN_PREFIX && !/\s/.test(query)) {
        const prefixed = candidates.filter((c) => c.id.startsWith(query));
        if (prefixed.length === 1) {
            return { kind: 'one', session: prefixed[0] };
        }
        if (prefixed.length > 1) {
            return { kind: 'ambiguous', ids: prefixed.slice(0, 5).map((c) => c.id) };
        }
    }
    // A title names the newest of its lineage this person may resume here, before one they may not.
    const allowed = candidates.filter((c) => !c.sharedElsewhere);
    const byTitle = newestOfLineage(allowed, query) ?? newestOfLineage(candidates, query);
    if (byTitle) {
        return { kind: 'one', session: byTitle };
    }
    if (ports.isAdmin) {
        const info = await ports.api.info(query).catch(() => undefined);
        if (info) {
            return { kind: 'one', session: { id: info.id, title: info.title ?? info.id } };
        }
    }
    return { kind: 'none' };
}
