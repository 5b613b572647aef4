import { cutAtCodePoint, neutralise } from '../security/inertText';
import type { TranscriptMessage } from '../hermes/sessionsApi';
import { personText } from './recap';

/** Characters of context on each side of the first matching word in a snippet. */
const SNIPPET_SIDE = 70;

export interface TranscriptHit {
    /** ms since the epoch (Hermes's timestamp of the message), when known. */
    at?: number;
    role: 'user' | 'assistant';
    snippet: string;
}

/** The words of a query: lower-cased, at most 8, each at least 2 characters (FTS5-style plain words). */
export function queryWords(query: string): string[] {
    return [
        ...new Set(
            query
                .toLowerCase()
                .split(/[^\p{L}\p{N}_-]+/u)
                .filter((w) => w.length >= 2),
        ),
    ].slice(0, 8);
}

/**
 * The messages of a transcript that contain every word (person's and agent's text only; the
 * app's context block in a person's turn is not theirs and is skipped), newest first, each as
 * a one-line snippet around the first word with the words in bold.
 */
export function transcriptHits(transcript: TranscriptMessage[], words: string[]): TranscriptHit[] {
    const hits: TranscriptHit[] = [];
    for (const m of transcript) {
        if ((m.role !== 'user' && m.role !== 'assistant') || !m.content) {
            continue;
        }
        const text = flat(m.role === 'user' ? personText(m.content) : m.content);
        const lower = text.toLowerCase();
        if (words.length === 0 || !words.every((w) => lower.includes(w))) {
            continue;
        }
        hits.push({ at: typeof m.timestamp === 'number' ? Math.round(m.timestamp * 1000) : undefined, role: m.role, snippet: snippet(text, lower, words) });
    }
    return hits.reverse();
}

/** One line, no markup of its own: what the person or agent wrote cannot format the result list. */
function flat(text: string): string {
    return neutralise(text)
        .replace(/[*_`~|>[\]]/g, ' ')
        .replace(/\s+/g, ' ')
        .trim();
}

function snippet(text: string, lower: string, words: string[]): string {
    const first = Math.min(...words.map((w) => lower.indexOf(w)));
    const start = Math.max(0, first - SNIPPET_SIDE);
    const end = Math.min(text.length, first + SNIPPET_SIDE * 2);
    // One pass, longest word first, so overlapping words never nest their bold marks.
    const any = new RegExp(
        [...words]
            .sort((a, b) => b.length - a.length)
            .map(escapeRegExp)
            .join('|'),
        'gi',
    );
    const cut = cutAtCodePoint(text.slice(start), end - start).replace(any, (found) => `**${found}**`);
    return `${start > 0 ? '…' : ''}${cut}${end < text.length ? '…' : ''}`;
}

function escapeRegExp(s: string): string {
    return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
