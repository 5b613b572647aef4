import type { TranscriptMessage } from '../hermes/sessionsApi';
import { cutAtCodePoint, neutralise } from '../security/inertText';
import { t } from '../i18n/messages';

const USER_CHARS = 300;
const ASSISTANT_CHARS = 200;
const ASSISTANT_LINES = 3;

/**
 * Where a resumed session stood, compact (seed 002, "Conversation Recap on Resume"): the
 * last exchange — the last person's message and what the agent did and said after it — long
 * messages cut (300 characters for the person, 200 characters or 3 lines for the agent), tool
 * calls collapsed to `[3 tool calls: terminal, web_search]`, system messages, tool results and
 * reasoning left out. Undefined when the transcript has no exchange yet.
 */
export function recap(messages: TranscriptMessage[], title: string): string | undefined {
    const lastUser = findLastIndex(messages, (m) => m.role === 'user' && Boolean(m.content?.trim()));
    if (lastUser === -1) {
        return undefined;
    }
    const after = messages.slice(lastUser + 1);
    const tools = after.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c?.function?.name || 'tool') : []));
    const answer = [...after].reverse().find((m) => m.role === 'assistant' && m.content?.trim())?.content ?? '';
    const lines = [t('recap_header', { title })];
    lines.push(`> ${t('recap_you')} ${oneLine(personText(messages[lastUser].content ?? ''), USER_CHARS)}`);
    const toolNote = tools.length > 0 ? `[${t('recap_tools', { count: tools.length, names: [...new Set(tools)].join(', ') })}] ` : '';
    if (toolNote || answer) {
        lines.push(`> ${t('recap_hermes')} ${toolNote}${agentText(answer)}`.trimEnd());
    }
    return lines.join('\n');
}

/**
 * What the person typed, out of the user text the app sent: the context block, the reply
 * pointer and the `[name] ` of a shared session are the app's, not theirs.
 */
export function personText(content: string): string {
    const marker = '\n[New message]\n';
    const at = content.lastIndexOf(marker);
    const own = at === -1 ? content : content.slice(at + marker.length);
    return own.replace(/^\[Replying to [^\n]*\]\n/, '').replace(/^\[[^\]\n]{1,80}\] /, '');
}

function agentText(content: string): string {
    const lines = neutralise(content).trim().split('\n').slice(0, ASSISTANT_LINES).join(' ');
    return oneLine(lines, ASSISTANT_CHARS);
}

/** One quoted line: no breaks, no markup that could end the quote, cut with `…`. */
function oneLine(text: string, max: number): string {
    const flat = neutralise(text).replace(/\s+/g, ' ').trim();
    return flat.length > max ? `${cutAtCodePoint(flat, max - 1).trimEnd()}…` : flat;
}

function findLastIndex<T>(items: T[], test: (item: T) => boolean): number {
    for (let i = items.length - 1; i >= 0; i--) {
        if (test(items[i])) {
            return i;
        }
    }
    return -1;
}
