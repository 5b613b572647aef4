import { ContextMessage } from './contextMessage';
import { inertReferences } from '../security/contextReferences';
import { indentContinuation, label, neutralise } from '../security/inertText';
import { formatStamp } from '../time/timestamp';

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
