import { t } from '../i18n/messages';

/**
 * At most this many messages per answer: a pathological answer must not flood a room (a
 * 25 KB answer once became 8,000 messages). The last one then ends with `answer_cut`.
 */
export const MAX_PARTS = 20;

/** A fence opener (```lang) longer than this is reopened as a plain fence. */
const MAX_FENCE_OPENER = 20;

/** Below this the split would be all overhead. */
const MIN_LIMIT = 40;

/**
 * Splits an answer into messages of at most `limit` characters (Rocket.Chat refuses longer
 * ones), preferring paragraph, then line, then word boundaries. A chunk that ends inside a
 * code fence closes it, and the next chunk reopens it, so every message renders on its own.
 * `firstReserve` keeps room in the first chunk for a quote/mention prefix; a prefix over half
 * the limit is not honoured in full, so the first chunk still carries text.
 * Fence overhead (reopener and closer) stays within a quarter of the limit each, so every
 * part after the first carries at least half the limit of the answer.
 */
export function splitMessage(text: string, limit: number, firstReserve = 0): string[] {
    if (limit < MIN_LIMIT) {
        throw new Error('message limit too small to split into');
    }
    const reserve = Math.max(0, Math.min(firstReserve, Math.floor(limit / 2)));
    // On a tiny limit the sentence would crowd out the answer: an ellipsis says it then.
    const cutMarker = t('answer_cut').length < limit / 4 ? `\n${t('answer_cut')}` : '\n…';
    const chunks: string[] = [];
    let rest = text;
    let openFence: string | undefined;
    while (rest.length > 0) {
        const prefix = openFence ? `${openFence}\n` : '';
        const room = limit - (chunks.length === 0 ? reserve : 0) - prefix.length;
        if (rest.length <= room) {
            chunks.push(prefix + rest);
            break;
        }
        const last = chunks.length === MAX_PARTS - 1;
        const part = fitPart(rest, room - (last ? cutMarker.length : 0), openFence, limit);
        chunks.push(prefix + part.text + (last ? cutMarker : ''));
        if (last) {
            break;
        }
        rest = rest.slice(part.cut).replace(/^\n+/, '');
        openFence = part.fence;
    }
    return chunks.filter((c) => c.trim().length > 0);
}

/**
 * The longest piece of `text` that fits `room` together with the fence closer it needs:
 * cut where chooseCut prefers, and cut shorter while a fence opened in the piece makes the
 * closer overflow.
 */
function fitPart(text: string, room: number, openBefore: string | undefined, limit: number): { text: string; cut: number; fence?: string } {
    let max = room;
    for (;;) {
        const cut = chooseCut(text, Math.max(1, max));
        const piece = text.slice(0, cut).replace(/\s+$/, '');
        const fence = reopener(fenceAfter(piece, openBefore), limit);
        const out = fence ? `${piece}\n${fenceRun(fence)}` : piece;
        if (out.length <= room || max <= 1) {
            return { text: out, cut, fence };
        }
        max -= Math.max(1, out.length - room);
    }
}

/**
 * How a fence left open is reopened (and closed): as written, unless the opener is long
 * (a huge info string once left two characters per part); then as a plain fence.
 */
function reopener(opener: string | undefined, limit: number): string | undefined {
    if (opener === undefined) {
        return undefined;
    }
    const cap = Math.min(MAX_FENCE_OPENER, Math.floor(limit / 4) - 1);
    if (opener.length <= cap) {
        return opener;
    }
    const run = fenceRun(opener);
    return run.length <= cap ? run : run.slice(0, 3);
}

/** The closing fence for an opener: its run of backticks or tildes (a ``` does not close ~~~). */
function fenceRun(opener: string): string {
    return /^(`+|~+)/.exec(opener)?.[1] ?? '```';
}

/** The best place to cut `text` at or before `max`: paragraph, line, then space; hard cut last. */
function chooseCut(text: string, max: number): number {
    if (text.length <= max) {
        return text.length;
    }
    const window = text.slice(0, max + 1);
    for (const sep of ['\n\n', '\n', ' ']) {
        const at = window.lastIndexOf(sep);
        if (at > max * 0.3) {
            return at + (sep === ' ' ? 1 : 0);
        }
    }
    // Never between the halves of a surrogate pair: each part must be valid text on its own.
    return max > 1 && /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
}

/** The fence opener (```lang) still open after `text`, given the one open before it. */
export function fenceAfter(text: string, openBefore: string | undefined): string | undefined {
    let open = openBefore;
    for (const line of text.split('\n')) {
        const m = /^\s*(```+|~~~+)(.*)$/.exec(line);
        if (!m) {
            continue;
        }
        if (open === undefined) {
            open = `${m[1]}${m[2].trim()}`;
        } else if (m[2].trim() === '' && line.trim().startsWith(open.replace(/[^`~].*$/, ''))) {
            open = undefined;
        }
    }
    return open;
}
