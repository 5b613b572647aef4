import { ContextMessage } from '../context/contextMessage';
import { label } from '../security/inertText';
import { formatStamp } from '../time/timestamp';
import { PostedFile } from '../context/contextMessage';
import { classifyFile } from './fileKinds';

/**
 * context_files: the files of the turn's context (the messages its block hands over, and the message its trigger
 * quotes) for Hermes, read like the trigger's own when the turn is sent (turns/turnFiles.ts). Which ones is decided
 * here, on plain values: nothing is read, so a turn whose context has no files costs no call at all.
 */

/** A file of a context message, to read when the turn is sent. Stored in the turn record: names and ids, never content. */
export interface ContextFile extends PostedFile {
    messageId: string;
    /** The sender's username, as the message's context line shows it. */
    from: string;
    /** The bot's own message (`(you)`, as in the context line). */
    fromBot?: boolean;
    /** The message's time (ms): its context line shows it. */
    at: number;
    /** The message the trigger quotes (its reply pointer). */
    quoted?: boolean;
}

export interface ContextFiles {
    /** The files to read, in the order they are tried: the quoted message's, then the newest message's first. */
    files: ContextFile[];
    /** `context_files` when they were picked. */
    max: number;
    /** Files not tried: over `max`, or of a type Hermes cannot read (named by their context line already). */
    overCount: number;
    unreadable: number;
}

export interface PickInput {
    /** The messages the turn's context block hands over, chronological. */
    messages: ContextMessage[];
    /** The message the trigger quotes, when its pointer is shown. */
    quoted?: ContextMessage;
    /** context_files: how many files at most (the whole context: the quote's and the block's together). */
    max: number;
    botId: string;
    /** Never picked again: the trigger's own files. */
    exclude?: PostedFile[];
    /** Picked by an earlier step: a thread turn's quote is picked when it is asked, its block when it is sent. */
    picked?: ContextFiles;
}

/**
 * The context's files, newest first after the quoted message's: at most `max`, each file once (by id). A file whose
 * type Hermes cannot take at all is not tried (no read); it is counted for the one line that says so. Undefined when
 * the context has no files.
 */
export function pickContextFiles(input: PickInput): ContextFiles | undefined {
    const out: ContextFiles = {
        files: [...(input.picked?.files ?? [])],
        max: input.max,
        overCount: input.picked?.overCount ?? 0,
        unreadable: input.picked?.unreadable ?? 0,
    };
    const seen = new Set([...(input.exclude ?? []), ...out.files].map((f) => f.id));
    const ordered = [...(input.quoted ? [{ m: input.quoted, quoted: true }] : []), ...[...input.messages].reverse().map((m) => ({ m, quoted: false }))];
    for (const { m, quoted } of ordered) {
        for (const file of m.uploads ?? []) {
            if (seen.has(file.id)) {
                continue;
            }
            seen.add(file.id);
            if (classifyFile(file.name, file.type).kind === 'other') {
                out.unreadable++;
            } else if (out.files.length >= input.max) {
                out.overCount++;
            } else {
                out.files.push({
                    ...file,
                    messageId: m.id,
                    from: m.senderUsername,
                    at: m.createdAt.getTime(),
                    ...(m.senderId === input.botId ? { fromBot: true } : {}),
                    ...(quoted ? { quoted: true } : {}),
                });
            }
        }
    }
    return out.files.length + out.overCount + out.unreadable > 0 ? out : undefined;
}

/**
 * Whose file it is, after its name: `posted by alice at 2026-10-06 11:58 +02:00` — the sender and time its context
 * line shows, so Hermes can tell which message it came with — and `in the message replied to` for the quoted one.
 * The name is neutralised like a context line's sender (one line, no brackets, references inert).
 */
export function ownerOf(file: ContextFile, timeZone: string): string {
    const who = `${label(file.from)}${file.fromBot ? ' (you)' : ''}`;
    return `posted by ${who} at ${formatStamp(new Date(file.at), timeZone)}${file.quoted ? ' in the message replied to' : ''}`;
}

const files = (n: number) => `${n} ${n === 1 ? 'file' : 'files'}`;

/** The one line for the files not tried; undefined when every file of the context was tried. */
export function notTriedLine(c: ContextFiles): string | undefined {
    const parts = [
        ...(c.overCount > 0 ? [`${files(c.overCount)} over the limit of ${c.max}`] : []),
        ...(c.unreadable > 0 ? [`${files(c.unreadable)} not of a readable type`] : []),
    ];
    return parts.length > 0 ? `[Not sent from the context: ${parts.join(', ')}]` : undefined;
}
