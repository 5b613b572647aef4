import { mentions, stripMentions } from '../admission/mention';
import { isSessionReset, parseTextCommand } from '../admission/textCommand';
import { ContextMessage } from './contextMessage';

export interface WindowOptions {
    askerId: string;
    botId: string;
    botUsername: string;
    /** A per-person session (room main channel, or a thread with thread_sessions_per_user). */
    perPerson: boolean;
    /** history_min_messages: how far back a window that starts at the bot's reply reaches at least. */
    min: number;
    /** history_max_messages. */
    max: number;
}

/** What the context shows at all: no system messages, none of the app's notices or progress. */
export function isContextWorthy(m: ContextMessage, botId: string): boolean {
    if (m.isSystem) {
        return false;
    }
    return m.senderId !== botId || m.botKind === undefined || m.botKind === 'answer';
}

/**
 * Where the context starts, in `history` (chronological, all before the trigger, already in
 * the turn's scope):
 * - per-person session: right after the asker's previous mention of the bot — what came
 *   before is already in their session. A previous `/new` or `/reset` ends the search (the
 *   session restarted there); other commands were not turns and are skipped.
 * - otherwise, or without a previous mention: at the bot's last answer, reaching back at
 *   least `min` messages.
 * At most `max` messages, the newest kept.
 */
export function selectWindow(history: ContextMessage[], opts: WindowOptions): ContextMessage[] {
    const worthy = (m: ContextMessage) => isContextWorthy(m, opts.botId);
    const cut = opts.perPerson ? afterPreviousMention(history, opts) : undefined;
    let window: ContextMessage[];
    if (cut !== undefined) {
        window = history.slice(cut).filter(worthy);
    } else {
        const shown = history.filter(worthy);
        window = shown.slice(fromBotsLastAnswer(shown, opts));
    }
    return window.slice(Math.max(0, window.length - opts.max));
}

function afterPreviousMention(history: ContextMessage[], opts: WindowOptions): number | undefined {
    for (let i = history.length - 1; i >= 0; i--) {
        const m = history[i];
        if (m.senderId !== opts.askerId || m.isSystem || !mentions(m.text, opts.botUsername)) {
            continue;
        }
        const command = parseTextCommand(stripMentions(m.text, opts.botUsername));
        if (command && !isSessionReset(command)) {
            continue;
        }
        return i + 1;
    }
    return undefined;
}

function fromBotsLastAnswer(worthy: ContextMessage[], opts: WindowOptions): number {
    let lastAnswer = -1;
    for (let i = worthy.length - 1; i >= 0; i--) {
        if (worthy[i].senderId === opts.botId) {
            lastAnswer = i;
            break;
        }
    }
    // Without any answer of the bot, everything up to `max` is context.
    const start = lastAnswer === -1 ? 0 : lastAnswer;
    return Math.max(0, Math.min(start, worthy.length - opts.min));
}

/**
 * True once reading older messages cannot change the window: the asker's previous mention
 * (per person) or the bot's last answer with `min` messages is in hand, or `max` messages are.
 * Lets the reader stop after the first page in the common case.
 */
export function windowSettled(history: ContextMessage[], opts: WindowOptions): boolean {
    if (opts.perPerson && afterPreviousMention(history, opts) !== undefined) {
        return true;
    }
    const shown = history.filter((m) => isContextWorthy(m, opts.botId));
    if (shown.length >= opts.max) {
        return true;
    }
    const lastAnswer = shown.map((m) => m.senderId).lastIndexOf(opts.botId);
    return !opts.perPerson && lastAnswer !== -1 && shown.length >= opts.min;
}
