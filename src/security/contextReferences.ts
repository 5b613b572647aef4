/** Zero-width space: invisible to people, but it breaks Hermes's `@file:`-style reference syntax. */
export const ZWSP = '\u200B';

/**
 * Hermes expands `@file:`, `@folder:`, `@git:`, `@url:`, `@diff` and `@staged` in every
 * message from a chat platform before the model runs — reading files, running git, fetching
 * URLs — with no tool call, approval or allowlist involved. A ZWSP after the `@` makes each
 * one plain text. Case-insensitive, and the full-width `＠` too, in case a later Hermes
 * normalises it; a reference already broken by invisible characters stays broken.
 */
const REFERENCE = /([@＠])(?=[\u200B-\u200D\u2060\uFEFF]*(?:file:|folder:|git:|url:|diff(?![\w-])|staged(?![\w-])))/giu;

export function inertReferences(text: string): string {
    return text.replace(REFERENCE, `$1${ZWSP}`);
}

/** True if `text` still holds a reference Hermes would expand (for tests and the corpus check). */
export function hasLiveReference(text: string): boolean {
    return /@(?:file:|folder:|git:|url:|diff(?![\w-])|staged(?![\w-]))/i.test(text);
}
