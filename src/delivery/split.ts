/**
 * Splits an answer into messages of at most `limit` characters (Rocket.Chat refuses longer
 * ones), preferring paragraph, then line, then word boundaries. A chunk that ends inside a
 * code fence closes it, and the next chunk reopens it with the same opener, so every message
 * renders on its own. `firstReserve` keeps room in the first chunk for a quote/mention prefix.
 */
export function splitMessage(text: string, limit: number, firstReserve = 0): string[] {
    if (limit < 40) {
        throw new Error('message limit too small to split into');
    }
    const closer = '\n```';
    const chunks: string[] = [];
    let rest = text;
    let openFence: string | undefined;
    while (rest.length > 0) {
        const prefix = openFence ? `${openFence}\n` : '';
        const budget = limit - (chunks.length === 0 ? firstReserve : 0) - prefix.length;
        if (rest.length <= budget) {
            chunks.push(prefix + rest);
            break;
        }
        // Leave room for a closing fence in case the cut lands inside a code block.
        const cut = chooseCut(rest, Math.max(1, budget - closer.length));
        const piece = rest.slice(0, cut);
        const fence = fenceAfter(piece, openFence);
        chunks.push(prefix + piece.replace(/\s+$/, '') + (fence ? closer : ''));
        rest = rest.slice(cut).replace(/^\n+/, '');
        openFence = fence;
    }
    return chunks.filter((c) => c.trim().length > 0);
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
    return max;
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
