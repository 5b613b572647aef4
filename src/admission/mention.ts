/** Characters a Rocket.Chat username may contain; a mention runs as long as they do. */
const USERNAME_CHAR = /[A-Za-z0-9._-]/;

function escapeRegExp(s: string): string {
    return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Finds `@<username>` as a whole mention: not inside a longer name (`@hermes-beta`,
 * `@hermes.bot` for `hermes`) and not inside an address (`mail@hermes`). A trailing `.`
 * ends a sentence, not a name, so `thanks @hermes.` still counts.
 */
export function findMentions(text: string, username: string): Array<{ start: number; end: number }> {
    const found: Array<{ start: number; end: number }> = [];
    const re = new RegExp(`@${escapeRegExp(username)}`, 'gi');
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
        const start = m.index;
        const end = start + m[0].length;
        const before = start > 0 ? text[start - 1] : '';
        if (before && (USERNAME_CHAR.test(before) || before === '@')) {
            continue;
        }
        const after = text[end] ?? '';
        const afterNext = text[end + 1] ?? '';
        const continuesName = after !== '' && USERNAME_CHAR.test(after) && !(after === '.' && !USERNAME_CHAR.test(afterNext));
        if (continuesName) {
            continue;
        }
        found.push({ start, end });
    }
    return found;
}

export function mentions(text: string, username: string): boolean {
    return findMentions(text, username).length > 0;
}

/** The message with the bot's mentions removed, so `@hermes /new` reads as `/new`. */
export function stripMentions(text: string, username: string): string {
    const spans = findMentions(text, username);
    let out = '';
    let last = 0;
    for (const { start, end } of spans) {
        out += text.slice(last, start);
        last = end;
        // `@hermes, do X` / `@hermes: do X`: the punctuation addressed the bot, drop it too.
        if (text[last] === ',' || text[last] === ':') {
            last += 1;
        }
    }
    out += text.slice(last);
    return out.replace(/[ \t]{2,}/g, ' ').trim();
}
