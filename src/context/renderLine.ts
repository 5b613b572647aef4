import { ContextMessage } from './contextMessage';
import { inertReferences } from '../security/contextReferences';
import { formatStamp } from './timestamp';

/** What continuation lines start with: column 0 is reserved for lines the app writes. */
export const CONTINUATION_INDENT = '  ';

export interface RenderOptions {
    timeZone: string;
    botId: string;
    /** Non-empty: senders outside it are marked `[unverified sender]`. */
    allowedUserIds: string[];
}

/**
 * Removes what could move text around or hide it: control characters (tab and line breaks
 * aside) and the bidirectional overrides/isolates that can make a line read differently
 * than it is. Line breaks are normalised to \n.
 */
export function neutralise(text: string): string {
    return text
        .replace(/\r\n?/g, '\n')
        .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u0085\u2028\u2029\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g, '')
        // Broken UTF-16 (a lone surrogate) becomes the replacement character, not invalid JSON downstream.
        .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** Every line after the first is indented, blank ones included, so no user line reaches column 0. */
export function indentContinuation(text: string): string {
    return text
        .split('\n')
        .map((line, i) => (i === 0 ? line : `${CONTINUATION_INDENT}${line}`))
        .join('\n');
}

/** `[2026-10-06 11:58 +02:00] alice: text`, attachments as `[file: name (type)]`, never their content. */
export function renderLine(m: ContextMessage, opts: RenderOptions): string {
    const isBot = m.senderId === opts.botId;
    const unverified = !isBot && opts.allowedUserIds.length > 0 && !opts.allowedUserIds.includes(m.senderId);
    const who = `${sanitiseName(m.senderUsername)}${isBot ? ' (you)' : ''}${unverified ? ' [unverified sender]' : ''}`;
    const files = m.files.map((f) => `[file: ${sanitiseName(f.name)} (${sanitiseName(f.type)})]`);
    // Room context is never the asker's request: its references stay inert whatever the settings say.
    const body = [inertReferences(neutralise(m.text)).trim(), ...files].filter((s) => s.length > 0).join('\n');
    return `[${formatStamp(m.createdAt, opts.timeZone)}] ${who}: ${indentContinuation(body)}`;
}

/** Names and file names are single-line labels: no breaks, no brackets that could fake a marker. */
function sanitiseName(name: string): string {
    return neutralise(name).replace(/\s+/g, ' ').replace(/[[\]]/g, '').trim() || 'unknown';
}
