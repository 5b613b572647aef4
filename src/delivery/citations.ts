/*
 * Links in an answer to messages of this server (issue 37 §3). Rocket.Chat renders a link to one
 * of its messages as a quote of that message, with the poster's rights: the bot's. An answer
 * that links a message of a room the asker cannot read would show it to everyone reading the
 * answer. So before an answer is posted, every such link whose message the asker may not read is
 * taken out: a Markdown link keeps its words, a bare address goes.
 */

/** The web client's message addresses: `/channel|group|direct/<room>?msg=<id>` (delivery/quote.ts writes them). */
function linkPattern(siteUrl: string): RegExp {
    const base = siteUrl.replace(/\/+$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(`${base}/(?:channel|group|direct)/[^\\s?#)\\]]+\\?(?:[^\\s#)\\]]*&)?msg=([A-Za-z0-9]{1,64})[^\\s)\\]]*`, 'g');
}

/** The message ids an answer links to on this server, each once. */
export function linkedMessageIds(text: string, siteUrl: string): string[] {
    if (!siteUrl || !text.includes('msg=')) {
        return [];
    }
    return [...new Set([...text.matchAll(linkPattern(siteUrl))].map((m) => m[1]))];
}

/** The answer without its links to `forbidden` messages: `[words](link)` keeps the words, a bare link goes. */
export function withoutLinks(text: string, siteUrl: string, forbidden: ReadonlySet<string>): string {
    if (forbidden.size === 0) {
        return text;
    }
    const pattern = linkPattern(siteUrl);
    const markdown = new RegExp(`\\[([^\\]\\n]*)\\]\\((${pattern.source})\\)`, 'g');
    const idIn = (link: string) => new RegExp(pattern.source).exec(link)?.[1] ?? '';
    return text
        .replace(markdown, (whole, words: string, link: string) => (forbidden.has(idIn(link)) ? words : whole))
        .replace(pattern, (link, id: string) => (forbidden.has(id) ? '' : link));
}
