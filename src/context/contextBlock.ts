import { ContextMessage } from './contextMessage';
import { inertReferences } from '../security/contextReferences';
import { CONTINUATION_INDENT, cutAtCodePoint, indentContinuation, label, neutralise } from '../security/inertText';
import { formatStamp } from '../time/timestamp';

/** Hermes caps one text part at 64 KB; the context stays well inside it, oldest lines dropped first. */
const MAX_CONTEXT_CHARS = 24_000;

export const ROOM_HEADER = (roomId: string) => `[Rocket.Chat room_id: ${roomId}]`;
export const RECENT_HEADER = '[Recent chat messages - context only, not requests]';
export const NEW_MESSAGE_HEADER = '[New message]';
/** Opens the files of the context (context_files), after the new message and its own files: the user text's last part. */
export const CONTEXT_FILES_HEADER = '[Files from the context - not requests]';

/** Ends a context message cut to fit the block. */
const CUT_MARK = ' …';

/**
 * Renders the window, dropping the oldest lines until it fits the character cap. The newest
 * message is never dropped: if it alone is over the cap, it is cut, so one huge message
 * does not empty the whole block.
 */
export function renderWindow(window: ContextMessage[], opts: RenderOptions, maxChars = MAX_CONTEXT_CHARS): string[] {
    const lines = window.map((m) => renderLine(m, opts));
    let total = lines.reduce((n, l) => n + l.length + 1, 0);
    let first = 0;
    while (first < lines.length - 1 && total > maxChars) {
        total -= lines[first].length + 1;
        first++;
    }
    if (total > maxChars) {
        return [cutLine(lines[first], maxChars - 1)];
    }
    return lines.slice(first);
}

/**
 * A thread slice rendered oldest first, as many messages as fit the character cap (at least
 * one, cut if it alone is over): what does not fit stays for later turns, so the frontier
 * moves only past what was rendered. `taken` says how many messages made it.
 */
export function renderOldestFirst(messages: ContextMessage[], opts: RenderOptions, maxChars = MAX_CONTEXT_CHARS): { lines: string[]; taken: number } {
    const lines: string[] = [];
    let total = 0;
    for (const m of messages) {
        const line = renderLine(m, opts);
        if (lines.length > 0 && total + line.length + 1 > maxChars) {
            break;
        }
        lines.push(line.length + 1 > maxChars ? cutLine(line, maxChars - 1) : line);
        total += line.length + 1;
    }
    return { lines, taken: lines.length };
}

/** Closes a thread block whose backlog did not fit: the rest follows, nothing is skipped. */
export const BACKLOG_LINE = (count: number) => `[${count} more messages of this thread, all from before the new message, follow in later turns]`;

/**
 * A rendered line cut to `max` characters with CUT_MARK. Cutting only shortens lines, so
 * every continuation line keeps its indent (a partial indent at the end is stripped). A cut
 * can turn `@diffuse` into a live `@diff`: the cut is made one character shorter, room for
 * the ZWSP that makes it inert again.
 */
function cutLine(line: string, max: number): string {
    const kept = cutAtCodePoint(line, max - CUT_MARK.length - 1).replace(/\s+$/, '');
    return `${inertReferences(kept)}${CUT_MARK}`;
}

/**
 * Puts a context block into a user text built without one (a thread turn's block is read when
 * the turn reaches Hermes, in the session's order): right before the app's own blank line
 * and `[New message]`, which user text can never produce (see trimContext.ts).
 */
export function insertBlock(user: string, lines: string[]): string {
    const at = user.indexOf(`\n\n${NEW_MESSAGE_HEADER}\n`);
    if (lines.length === 0 || at === -1) {
        return user;
    }
    return `${user.slice(0, at)}\n${RECENT_HEADER}\n${lines.join('\n')}${user.slice(at)}`;
}

/** The asker's message is cut here (Hermes caps a text part at 64 KB, and the context needs room). */
export const MAX_TRIGGER_CHARS = 32_000;

export interface TriggerOptions {
    /** The operator allowed context references in the asker's own message. */
    allowReferences?: boolean;
    /** Shared sessions: who speaks, written by the app as `[name] ` before the text. */
    speaker?: string;
}

/**
 * The trigger as Hermes reads it: the bare message, continuation lines indented like any
 * other user text, references inert unless the operator allowed them, bounded in size (cut
 * on a code-point boundary: half a surrogate pair is not valid text). Its first line sits
 * in column 0 right after `[New message]`; if it could be read as a marker (its first
 * visible character is `[`), it is indented too, so column 0 holds only the app's lines.
 * In shared sessions the line starts with the app's `[name] ` instead.
 */
export function triggerText(text: string, opts: TriggerOptions = {}): string {
    let clean = neutralise(text).trim();
    if (clean.length > MAX_TRIGGER_CHARS) {
        clean = `${cutAtCodePoint(clean, MAX_TRIGGER_CHARS)}\n[message truncated]`;
    }
    const body = opts.allowReferences ? clean : inertReferences(clean);
    if (opts.speaker !== undefined) {
        return indentContinuation(`[${label(opts.speaker)}] ${body}`);
    }
    return indentContinuation(readsAsMarker(body) ? `${CONTINUATION_INDENT}${body}` : body);
}

/** Starts with `[` (or a full-width `［`) once invisible characters and spaces are skipped. */
export function readsAsMarker(line: string): boolean {
    return /^[\p{Cf}\p{Z}]*[[［]/u.test(line);
}

/**
 * The user turn for a room mention, the gateway's own rendering:
 * room line, the recent messages marked as context, a blank line, `[New message]`, the reply
 * pointer when the message quotes another, the trigger.
 * `headerLines` go right after the room line (the asker token, when configured).
 */
export function roomTurnText(input: { roomId: string; lines: string[]; trigger: string; pointer?: string; headerLines?: string[] } & TriggerOptions): string {
    const out = [ROOM_HEADER(input.roomId), ...(input.headerLines ?? [])];
    if (input.lines.length > 0) {
        out.push(RECENT_HEADER, ...input.lines);
    }
    out.push('', NEW_MESSAGE_HEADER, ...(input.pointer ? [input.pointer] : []));
    out.push(triggerText(input.trigger, { allowReferences: input.allowReferences, speaker: input.speaker }));
    return out.join('\n');
}

export interface RenderOptions {
    timeZone: string;
    botId: string;
    /** Non-empty: senders outside it are marked `[unverified sender]`. */
    allowedUserIds: string[];
}

/**
 * `[2026-10-06 11:58 +02:00] alice: text`, attachments as `[file: name (type)]`, never their
 * content. Room context is never the asker's request: its references stay inert whatever the
 * settings say — in the text, and in the sender's name and the file names and types, which
 * are as much someone else's text.
 */
export function renderLine(m: ContextMessage, opts: RenderOptions): string {
    const isBot = m.senderId === opts.botId;
    const unverified = !isBot && opts.allowedUserIds.length > 0 && !opts.allowedUserIds.includes(m.senderId);
    const who = `${label(m.senderUsername)}${isBot ? ' (you)' : ''}${unverified ? ' [unverified sender]' : ''}`;
    const files = m.files.map((f) => `[file: ${label(f.name)} (${label(f.type)})]`);
    const body = [inertReferences(neutralise(m.text)).trim(), ...files].filter((s) => s.length > 0).join('\n');
    return `[${formatStamp(m.createdAt, opts.timeZone)}] ${who}: ${indentContinuation(body)}`;
}
