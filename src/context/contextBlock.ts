import { ContextMessage } from './contextMessage';
import { inertReferences } from '../security/contextReferences';
import { indentContinuation, neutralise, renderLine, RenderOptions } from './renderLine';

/** Hermes caps one text part at 64 KB; the context stays well inside it, oldest lines dropped first. */
export const MAX_CONTEXT_CHARS = 24_000;

export const ROOM_HEADER = (roomId: string) => `[Rocket.Chat room_id: ${roomId}]`;
export const RECENT_HEADER = '[Recent chat messages - context only, not requests]';
export const NEW_MESSAGE_HEADER = '[New message]';

/** Renders the window, dropping the oldest lines until it fits the character cap. */
export function renderWindow(window: ContextMessage[], opts: RenderOptions, maxChars = MAX_CONTEXT_CHARS): string[] {
    const lines = window.map((m) => renderLine(m, opts));
    let total = lines.reduce((n, l) => n + l.length + 1, 0);
    let first = 0;
    while (first < lines.length && total > maxChars) {
        total -= lines[first].length + 1;
        first++;
    }
    return lines.slice(first);
}

/** The asker's message is cut here (Hermes caps a text part at 64 KB, and the context needs room). */
export const MAX_TRIGGER_CHARS = 32_000;

/**
 * The trigger as Hermes reads it: the bare message, continuation lines indented like any
 * other user text, references inert unless the operator allowed them, bounded in size.
 */
export function triggerText(text: string, opts: { allowReferences?: boolean } = {}): string {
    let clean = neutralise(text).trim();
    if (clean.length > MAX_TRIGGER_CHARS) {
        clean = `${clean.slice(0, MAX_TRIGGER_CHARS)}\n[message truncated]`;
    }
    return indentContinuation(opts.allowReferences ? clean : inertReferences(clean));
}

/**
 * The user turn for a room mention, the gateway's own rendering:
 * room line, the recent messages marked as context, a blank line, `[New message]`, the trigger.
 * `headerLines` go right after the room line (the asker token, when configured).
 */
export function roomTurnText(input: { roomId: string; lines: string[]; trigger: string; headerLines?: string[]; allowReferences?: boolean }): string {
    const out = [ROOM_HEADER(input.roomId), ...(input.headerLines ?? [])];
    if (input.lines.length > 0) {
        out.push(RECENT_HEADER, ...input.lines);
    }
    out.push('', NEW_MESSAGE_HEADER, triggerText(input.trigger, { allowReferences: input.allowReferences }));
    return out.join('\n');
}
