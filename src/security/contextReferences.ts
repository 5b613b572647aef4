/** Zero-width space: invisible to people, but it breaks Hermes's `@file:`-style reference syntax. */
export const ZWSP = '\u200B';

/*
 * Hermes expands `@file:`, `@folder:`, `@git:`, `@url:`, `@diff` and `@staged` in every
 * message from a chat platform before the model runs — reading files, running git, fetching
 * URLs — with no tool call, approval or allowlist involved. Its pattern, in
 * agent/context_references.py of Hermes (v0.18.2, commit 306e2d2), is:
 *
 *   REFERENCE_PATTERN = re.compile(
 *       rf"(?<![\w/])@(?:(?P<simple>diff|staged)\b|(?P<kind>file|folder|git|url):(?P<value>{_QUOTED_REFERENCE_VALUE}(?::\d+(?:-\d+)?)?|\S+))"
 *   )
 *   _QUOTED_REFERENCE_VALUE = r'(?:`[^`\n]+`|"[^"\n]+"|\'[^\'\n]+\')'
 *
 * Python's `\w`, `\b` and `\S` are Unicode-aware there: `@diff-please` and `@staged.` are
 * references (`\b` holds before `-` and `.`), `@diffuse` and `@diff_x` are not.
 */

/** Python's `\s` (str.isspace): JavaScript's `\s` without U+FEFF, with U+001C–U+001F and U+0085. */
const PY_SPACE = '\\t-\\r\\x1C-\\x20\\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
/** Python's Unicode `\w`: letters, numbers, underscore. */
const PY_WORD = '\\p{L}\\p{N}_';

/**
 * Hermes's pattern as JavaScript, to tell whether Hermes would expand something. A quoted
 * value starts with a non-space character, so "at least one non-space after the colon"
 * decides the `kind:` forms just as `\S+` or a quoted value does.
 */
const HERMES_REFERENCE = new RegExp(`(?<![${PY_WORD}/])@(?:(?:diff|staged)(?![${PY_WORD}])|(?:file|folder|git|url):[^${PY_SPACE}])`, 'u');

/**
 * What gets a ZWSP after its `@`: every match of Hermes's pattern, widened where widening
 * costs nothing but an invisible character — no look-behind (`a@file:x` too), any case, the
 * full-width `＠`, invisible characters between `@` and the word (in case a later Hermes
 * normalises either), any `file:`-style prefix whatever follows, and `@diff`/`@staged`
 * followed by anything but an ASCII word character (Hermes's `\b` depends on the Unicode
 * version of its Python; this does not). An `@` already followed by a ZWSP is left alone.
 */
const REFERENCE = /([@＠])(?!\u200B)(?=[\u200B-\u200D\u2060\uFEFF]*(?:file:|folder:|git:|url:|(?:diff|staged)(?![A-Za-z0-9_])))/giu;

export function inertReferences(text: string): string {
    return text.replace(REFERENCE, `$1${ZWSP}`);
}

/** True if `text` holds a reference Hermes would expand, by Hermes's own pattern (tests and the corpus check). */
export function hasLiveReference(text: string): boolean {
    return HERMES_REFERENCE.test(text);
}
