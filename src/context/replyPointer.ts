import { ContextMessage } from './contextMessage';
import { cutAtCodePoint, label, neutralise } from '../security/inertText';
import { inertReferences } from '../security/contextReferences';

/**
 * Only the start of a message is searched for a message link: the web client puts its quote
 * links first, and a bound keeps the work on a hostile 5,000-character message small.
 */
const SCAN_LIMIT = 4000;
/** What the quoted text is cut to in the pointer: enough to recognise, not a second copy of the room. */
const POINTER_MAX = 500;
/** A Rocket.Chat message id (Random.id() is 17 characters; imported and app ids vary, so a bound, not an exact shape). */
const MESSAGE_ID = /^[A-Za-z0-9_-]{1,64}$/;
/**
 * An absolute http(s) link, up to what ends a link in markdown (`)`), in `<url|label>` or in
 * prose. One character class repeated: no nested quantifier, so no catastrophic backtracking.
 */
const LINK = /https?:\/\/[^\s<>()[\]"'`|]+/gi;
/** One web-client quote link at `lastIndex`: a markdown link with a blank label, and what blank follows it. */
const QUOTE_LINK = /[^\S\n]*\[[^\S\n]*\]\([^()\s]*\)\s*/y;

/** Scheme + host (lower case, default port dropped, as URL gives it) and path of Site_Url without its trailing slashes. */
function siteBase(siteUrl: string): { origin: string; path: string } | undefined {
    try {
        const site = new URL(siteUrl.trim());
        if (site.protocol !== 'https:' && site.protocol !== 'http:') {
            return undefined;
        }
        return { origin: site.origin, path: site.pathname.replace(/\/+$/, '') };
    } catch {
        return undefined;
    }
}

/**
 * The id of the first link in `text` to a message on this server: an absolute link whose
 * scheme and host are Site_Url's (URL compares them case-insensitively), whose path is under
 * Site_Url's path, and whose `msg` query parameter looks like a message id. Any room path
 * counts (`/channel/…`, `/group/…`, `/direct/…`, `/live/…`, with or without `/thread/…`), as
 * for the server, which quotes any link to itself carrying `msg`. Links to other hosts —
 * `https://chat.example.com.evil.net`, `https://chat.example.com@evil.net` too — are skipped,
 * and so are relative links: the server does not render those as quotes, so the person saw
 * no reply. Without a usable Site_Url nothing counts, since no link can be told to be ours.
 */
export function quotedMessageId(text: string, siteUrl: string): string | undefined {
    const site = siteBase(siteUrl);
    if (!site) {
        return undefined;
    }
    const scanned = text.slice(0, SCAN_LIMIT);
    for (const match of scanned.matchAll(LINK)) {
        // A link the bound cut through could carry a shortened id: another message's, perhaps.
        if (text.length > SCAN_LIMIT && (match.index ?? 0) + match[0].length >= SCAN_LIMIT) {
            break;
        }
        const id = messageIdOf(match[0].replace(/[.,;:!?]+$/, ''), site);
        if (id) {
            return id;
        }
    }
    return undefined;
}

function messageIdOf(candidate: string, site: { origin: string; path: string }): string | undefined {
    let link: URL;
    try {
        link = new URL(candidate);
    } catch {
        return undefined;
    }
    if (link.origin !== site.origin || !(link.pathname === site.path || link.pathname.startsWith(`${site.path}/`))) {
        return undefined;
    }
    const id = link.searchParams.get('msg');
    return id !== null && MESSAGE_ID.test(id) ? id : undefined;
}

/**
 * `text` without the quote links it starts with (`[ ](url)`, as the web client's Quote and
 * Reply actions write them, several in a row possibly) and the blanks after them: the label is
 * blank, so the person saw a quote, not a link, and what they typed is the rest.
 */
export function stripQuoteLinks(text: string): string {
    let at = 0;
    for (;;) {
        QUOTE_LINK.lastIndex = at;
        if (!QUOTE_LINK.exec(text)) {
            break;
        }
        at = QUOTE_LINK.lastIndex;
    }
    return at === 0 ? text : text.slice(at);
}

/**
 * The quoted text as one inert line: neutralised and references made inert as room context
 * is, line breaks and runs of blanks as one space (it must not open a line of its own), `"`
 * as `'` (it must not end the quote early), cut at 500 UTF-16 units with `…` when cut.
 */
function quotedText(text: string): string {
    const line = inertReferences(neutralise(stripQuoteLinks(text)).replace(/\s+/g, ' ').replace(/"/g, "'")).trim();
    const cut = cutAtCodePoint(line, POINTER_MAX);
    return cut.length < line.length ? `${cut}…` : line;
}

/**
 * The line put right before the asker's message when it quotes another one:
 * `[Replying to your previous message: "…"]` for the bot's own message,
 * `[Replying to alice: "…"]` for anyone else's.
 */
export function pointerLine(target: { senderId: string; senderUsername: string; text: string }, botId: string): string {
    const who = botId !== '' && target.senderId === botId ? 'your previous message' : label(target.senderUsername);
    return `[Replying to ${who}: "${quotedText(target.text)}"]`;
}

/**
 * The pointer for the asker's message, if it quotes a message that may be shown here. No
 * link: no read. Otherwise one read; a failed read, a message that is gone or hidden, a
 * system message, or one from another room (which the asker's room may not see) — unless
 * the asker wrote it — lose the pointer, never the turn. The log names the cause with ids
 * only: the text is someone's message.
 */
export async function pointerFor(input: PointerInput): Promise<string | undefined> {
    return (await quotedFor(input))?.line;
}

interface PointerInput {
    text: string;
    siteUrl: string;
    roomId: string;
    askerId: string;
    botId: string;
    read: (id: string) => Promise<ContextMessage | undefined>;
    log?: (msg: string) => void;
}

/** pointerFor's line with the message it points at (whose files context_files may send): the same read, the same rules. */
export async function quotedFor(input: PointerInput): Promise<{ line: string; target: ContextMessage } | undefined> {
    const id = quotedMessageId(input.text, input.siteUrl);
    if (!id) {
        return undefined;
    }
    const drop = (cause: string): undefined => {
        input.log?.(`Reply pointer to message ${id} left out: ${cause}.`);
        return undefined;
    };
    let target: ContextMessage | undefined;
    try {
        target = await input.read(id);
    } catch {
        return drop('the message could not be read');
    }
    if (!target) {
        return drop('no such message visible now');
    }
    if (target.isSystem) {
        return drop('a system message');
    }
    const askerWroteIt = input.askerId !== '' && target.senderId === input.askerId;
    if (target.roomId !== input.roomId && !askerWroteIt) {
        return drop(`it is in room ${target.roomId ?? 'unknown'}, not ${input.roomId}`);
    }
    return { line: pointerLine(target, input.botId), target };
}
