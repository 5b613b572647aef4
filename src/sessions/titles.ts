import { neutralise } from '../security/inertText';
import { ZWSP } from '../security/contextReferences';
import { personText } from './recap';

/**
 * Session titles as Hermes keeps them (seed 002, "Title Rules"): unique, at most 100
 * characters, without control characters, zero-width characters or direction overrides;
 * any other Unicode is fine. The app cleans a title the same way before sending it, so what
 * the person sees confirmed is what Hermes stored.
 */
const MAX_TITLE_CHARS = 100;

/** Words an automatic title takes from the asker's first message. */
const AUTO_TITLE_WORDS = 6;
const AUTO_TITLE_CHARS = 60;

export function cleanTitle(raw: string): string {
    const cleaned = raw
        // Invisible and direction characters go; breaks and other controls separate words.
        .replace(/[\u200B-\u200F\u202A-\u202E\u2060-\u206F\uFEFF\u061C]/g, '')
        .replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029]/g, ' ')
        .replace(/\s+/g, ' ')
        .trim();
    return [...cleaned].slice(0, MAX_TITLE_CHARS).join('').trim();
}

/**
 * A session's title until someone names it or Hermes reports its own: the first words of
 * the asker's first message, without the app's context block, mentions, links or markup. No
 * model call: it costs nothing and says only what the person wrote.
 */
export function autoTitle(userText: string): string | undefined {
    const text = personText(userText)
        .replace(/\[[^\]]*\]\([^)]*\)/g, ' ')
        .replace(/https?:\/\/\S+/g, ' ')
        .replace(/[@#][\w.-]+/g, ' ')
        .replace(/[`*_~>|[\]()]/g, ' ');
    const words = cleanTitle(text).split(' ').filter(Boolean).slice(0, AUTO_TITLE_WORDS);
    const title = [...words.join(' ')].slice(0, AUTO_TITLE_CHARS).join('').trim();
    return title.length > 0 ? title : undefined;
}

/**
 * A title as the app shows it in its lists, search results and answers: plain text. Anyone in a
 * shared thread can name its session, and the others see that title in their own lists, so it
 * must not format their message: no emphasis, code, quote or table marks, no Markdown or
 * `<url|text>` link (a live link under harmless words), no mention that notifies (`@all`), no
 * channel link, no address the client links by itself. Marks become spaces; an underscore
 * inside a word stays (`rc_ab12_g0`, `deploy_notes`), as no parser reads it as emphasis; `@`,
 * `#` and `://` get an invisible zero-width space, so the words still read as written.
 */
export function shownTitle(title: string): string {
    const plain = neutralise(title)
        .replace(/[*~`|<>[\]\\]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, ' ')
        .replace(/([@#＠])/g, `$1${ZWSP}`)
        .replace(/:\/\//g, `:${ZWSP}//`)
        .replace(/\bwww\./gi, (w) => `${w}${ZWSP}`)
        .replace(/\s+/g, ' ')
        .trim();
    return plain || '…';
}

/** `my project #3` → base `my project`, number 3; a title without a number is the lineage's first. */
export function lineageOf(title: string): { base: string; n: number } {
    const m = /^(.*\S) #(\d{1,6})$/.exec(title);
    return m ? { base: m[1], n: Number(m[2]) } : { base: title, n: 1 };
}

/** The title to suggest when `title` is taken: the next number of its lineage. */
export function nextInLineage(title: string): string {
    const { base, n } = lineageOf(title);
    return cleanTitle(`${base} #${n + 1}`);
}

/**
 * Which of `candidates` a title names: one of its lineage (`my project`, `my project #2`, …),
 * compared without case, the newest (highest number, then latest activity) winning — as
 * `hermes -c "my project"` resumes `my project #3`.
 */
export function newestOfLineage<T extends { title?: string; lastActive?: number }>(candidates: T[], query: string): T | undefined {
    const want = lineageOf(cleanTitle(query)).base.toLowerCase();
    const matches = candidates
        .filter((c) => c.title && lineageOf(c.title).base.toLowerCase() === want)
        .sort((a, b) => lineageOf(b.title as string).n - lineageOf(a.title as string).n || (b.lastActive ?? 0) - (a.lastActive ?? 0));
    return matches[0];
}
