import { inertReferences } from './contextReferences';

/*
 * Text from other people made safe to put in front of the model or in a message: nothing
 * that moves or hides text, no line that starts where the app's own lines start, no live
 * reference in a name. Used by the context block, files, sessions, schedules and views alike,
 * so it lives below all of them.
 */

/** What continuation lines start with: column 0 is reserved for lines the app writes. */
export const CONTINUATION_INDENT = '  ';

/**
 * Removes what could move text around or hide it: control characters (tab and line breaks
 * aside) and the bidirectional overrides/isolates that can make a line read differently
 * than it is. Line breaks are normalised to \n: a lone CR too, which Hermes (Python's
 * splitlines) and a model read as a break, so it must get the continuation indent as well.
 */
export function neutralise(text: string): string {
    return (
        text
            .replace(/\r\n?/g, '\n')
            .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u0085\u2028\u2029\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g, '')
            // Broken UTF-16 (a lone surrogate) becomes the replacement character, not invalid JSON downstream.
            .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    );
}

/** Every line after the first is indented, blank ones included, so no user line reaches column 0. */
export function indentContinuation(text: string): string {
    return text
        .split('\n')
        .map((line, i) => (i === 0 ? line : `${CONTINUATION_INDENT}${line}`))
        .join('\n');
}

/**
 * A name as a single-line label: no breaks, no brackets that could fake a marker, no live
 * reference (names and file names are chosen by other people).
 */
export function label(name: string): string {
    return inertReferences(neutralise(name).replace(/\s+/g, ' ').replace(/[[\]]/g, '').trim()) || 'unknown';
}

/** The first `max` UTF-16 units of `text`, one less rather than half a surrogate pair. */
export function cutAtCodePoint(text: string, max: number): string {
    if (text.length <= max) {
        return text;
    }
    const end = max > 0 && /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : Math.max(0, max);
    return text.slice(0, end);
}
