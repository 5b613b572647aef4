import { textPrint } from '../delivery/streamText';
import { TranscriptRow } from '../hermes/client';
import { Cut, SessionRecord } from './sessionRecord';

export type { Cut, TranscriptRow };

/*
 * Retry and undo on v0.18.2, whose runs take their history from the app: Hermes keeps every
 * exchange in the session's transcript (there is no route that drops one: PATCH takes a title
 * and an end reason, fork copies the whole transcript, api_server.py 1996–2041), so the app
 * remembers which rows of the transcript it no longer sends. An exchange is found again by a
 * print of the text Hermes was given, never by the text itself (a DM's words are not stored).
 */

/** An answered exchange of a conversation, as the usage row of its turn recorded it. */
export interface Exchange {
    /** The conversation's session key. */
    key: string;
    /** The turn's receipt (its id): what an undo marks, so the next undo reaches the one before. */
    receipt: string;
    /** The question's message: a retried answer quotes it, the retried line links it. */
    question: string;
    askerId: string;
    askerUsername: string;
    roomId: string;
    threadId?: string;
    /** The answer's posted messages. */
    answers: string[];
    /** The Hermes session that holds it: an exchange of an earlier session (before /new) is not the conversation's last. */
    sessionId: string;
    /** {@link inputPrint} of the text Hermes was given. */
    print: string;
    at: number;
}

/** Exchanges one session may leave out: a bound on the record, well past what people undo. */
export const MAX_CUTS = 100;

/** What identifies a turn's text in the transcript without keeping it. */
export function inputPrint(text: string): string {
    return textPrint(text);
}

/** The transcript as the app sends it: without the rows of undone exchanges (cuts of another session id do not apply). */
export function withoutCuts(rows: TranscriptRow[], cut: Cut | undefined, sessionId: string): TranscriptRow[] {
    const ranges = cut?.sessionId === sessionId ? cut.ranges : [];
    return rows.filter((r) => !ranges.some(([from, to]) => r.id !== undefined && r.id >= from && r.id <= to));
}

/** The history sent with a run: role and content only. */
export function historyOf(rows: TranscriptRow[]): Array<{ role: string; content: string }> {
    return rows.map((r) => ({ role: r.role, content: r.content }));
}

/**
 * The exchange of `print` in a transcript (already without its cuts): its question's row, the
 * latest with that print, through the last row before the next question. Undefined when no row
 * carries it (Hermes compressed the session, or the text went as images) or the rows have no ids.
 */
export function findExchange(rows: TranscriptRow[], print: string): { input: string; range: [number, number] } | undefined {
    for (let i = rows.length - 1; i >= 0; i--) {
        const row = rows[i];
        if (row.role !== 'user' || row.id === undefined || inputPrint(row.content) !== print) {
            continue;
        }
        let last = row.id;
        for (let j = i + 1; j < rows.length && rows[j].role !== 'user'; j++) {
            last = rows[j].id ?? last;
        }
        return { input: row.content, range: [row.id, last] };
    }
    return undefined;
}

/** The session record once an exchange is left out; undefined when it holds {@link MAX_CUTS} already. */
export function cutOut(session: SessionRecord, range: [number, number]): SessionRecord | undefined {
    const ranges = session.cut?.sessionId === session.sessionId ? session.cut.ranges : [];
    if (ranges.length >= MAX_CUTS) {
        return undefined;
    }
    return { ...session, cut: { sessionId: session.sessionId, ranges: [...ranges, range] } };
}

/** Where a conversation's exchanges are found and marked (the engine keeps them on the turns' usage rows). */
export interface ExchangePort {
    /** The conversation's answered exchanges not undone, newest first. */
    list(key: string): Promise<Exchange[]>;
    /** Marks one undone, so the next undo reaches the one before. */
    markUndone(key: string, receipt: string): Promise<void>;
}
