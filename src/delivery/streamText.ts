import { withoutMedia } from './mediaTags';

/** Ends an answer still being written (Hermes's own gateways show the same block); the final edit has none. */
export const STREAM_CURSOR = ' ▉';

/**
 * What of an answer still being written may be shown: whole words only, since a word cut
 * short may be a half-typed `@name` (someone else, or nobody) or link; its MEDIA: tags left
 * out as the final answer leaves them; trimmed as the final answer is. `all`: the text has
 * stopped growing here (an approval request), its last word is whole.
 */
export function shownSoFar(text: string, all = false): string {
    const end = all ? text.length : lastSpace(text);
    return end <= 0 ? '' : withoutMedia(text.slice(0, end)).text.trim();
}

function lastSpace(text: string): number {
    for (let i = text.length - 1; i >= 0; i--) {
        if (/\s/.test(text[i])) {
            return i;
        }
    }
    return -1;
}

/** A short fingerprint of a text (FNV-1a, 32 bits): enough to tell whether an answer repeats what was streamed. */
export function textPrint(text: string): string {
    let hash = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) {
        hash ^= text.charCodeAt(i);
        hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    return hash.toString(16).padStart(8, '0');
}
