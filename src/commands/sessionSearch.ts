import { formatStamp } from '../time/timestamp';
import { HermesError } from '../hermes/errors';
import { HermesSessionInfo } from '../hermes/sessionsApi';
import { translator } from '../i18n/messages';
import { queryWords, transcriptHits } from '../sessions/search';
import { OwnedSession } from '../sessions/sessionIndex';
import { shownTitle } from '../sessions/titles';
import { SessionCommandPorts, visible } from './sessionCommands';

/** Sessions searched per command, newest first (one transcript read each). */
const MAX_SESSIONS = 20;
/** Transcripts read at once. */
const BATCH = 5;
const MAX_RESULTS = 10;

/** Where a session's conversation is in the web client (its room, or its thread). */
export type ConversationLink = (entry: OwnedSession) => string | undefined;

/**
 * `/hermes search [all] <words>`: the asker's own sessions, here or all of them (of rooms they
 * are a member of now, as `/hermes sessions` lists them), searched for messages holding every
 * word; at most 10 results, private. Hermes's api_server offers no search over HTTP, so the app
 * reads the transcripts of the asker's newest sessions. When
 * Hermes cannot be read, the answer says so — never "no results" (seed 001: search is a
 * state, not an empty list).
 */
export async function searchCommand(args: string, userId: string, key: string, link: ConversationLink, ports: SessionCommandPorts): Promise<string> {
    const t = translator(ports.language);
    const all = /^all\b/i.test(args.trim());
    const words = queryWords(all ? args.trim().slice(3) : args);
    if (words.length === 0) {
        return t('search_usage');
    }
    const entries = (await visible(userId, key, all, ports)).slice(0, MAX_SESSIONS);
    if (entries.length === 0) {
        return t(all ? 'sessions_none_all' : 'sessions_none');
    }
    const results: Array<{ entry: OwnedSession; at?: number; snippet: string }> = [];
    const failures: string[] = [];
    for (let i = 0; i < entries.length; i += BATCH) {
        const batch = entries.slice(i, i + BATCH);
        const read = await Promise.allSettled(batch.map((e) => ports.api.transcript(e.sessionId)));
        read.forEach((r, j) => {
            if (r.status === 'rejected') {
                failures.push(r.reason instanceof HermesError ? r.reason.kind : 'error');
                return;
            }
            for (const hit of transcriptHits(r.value ?? [], words)) {
                results.push({ entry: batch[j], at: hit.at, snippet: hit.snippet });
            }
        });
    }
    if (failures.length === entries.length) {
        ports.log.warn(`Session search for ${userId} failed: Hermes could not be read (${failures[0]}).`);
        return t('search_unavailable', { reason: failures[0] });
    }
    const shown = results.sort((a, b) => (b.at ?? 0) - (a.at ?? 0)).slice(0, MAX_RESULTS);
    // Titles Hermes holds (set by someone, or from the CLI) beat the app's automatic ones: one list request.
    const titles =
        shown.length > 0
            ? new Map((await ports.api.list(200).catch((): HermesSessionInfo[] => [])).map((h) => [h.id, h.title]))
            : new Map<string, string | undefined>();
    const lines: string[] = [];
    if (shown.length === 0) {
        lines.push(t('search_no_match', { words: words.join(' '), count: entries.length - failures.length }));
    } else {
        lines.push(t('search_header', { words: words.join(' '), count: results.length }));
        for (const r of shown) {
            const where = link(r.entry);
            const stamp = r.at ? formatStamp(new Date(r.at), ports.timeZone) : '';
            const title = shownTitle(titles.get(r.entry.sessionId) ?? r.entry.autoTitle ?? r.entry.sessionId);
            lines.push(`• **${title}** · ${[stamp, `“${r.snippet}”`, where ? `[${t('search_open')}](${where})` : ''].filter(Boolean).join(' · ')}`);
        }
    }
    if (failures.length > 0) {
        lines.push(t('search_partial', { failed: failures.length, total: entries.length, reason: failures[0] }));
    }
    return lines.join('\n');
}
