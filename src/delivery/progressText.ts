import { ToolProgress } from '../hermes/chat';
import { t } from '../i18n/messages';

/** How many tool lines the status message shows (the newest). */
const MAX_LINES = 8;

const EMOJI: Record<string, string> = {
    terminal: '💻',
    web_search: '🔎',
    web_extract: '🌐',
    browser: '🌐',
    read_file: '📄',
    write_file: '✏️',
    patch: '✏️',
    search_files: '🔍',
    delegate_task: '🤝',
    memory: '🧠',
};

/** `💻 terminal: ls -la`, one line, bounded. */
export function toolLine(p: ToolProgress): string {
    const emoji = p.emoji ?? EMOJI[p.tool] ?? '🔧';
    const label = (p.label ?? '')
        .replace(/[\r\n]+/g, ' ')
        .replace(/`/g, "'")
        .trim()
        .slice(0, 120);
    return `${emoji} ${p.tool}${label ? `: ${label}` : ''}`;
}

/** The single status message: one working line, plus the tools so far when progress is `tools`. */
export function progressText(mode: 'status' | 'tools', lines: string[]): string {
    const head = t('progress_working');
    if (mode === 'status' || lines.length === 0) {
        return head;
    }
    const shown = lines.slice(-MAX_LINES);
    const more = lines.length - shown.length;
    return [head, ...(more > 0 ? [t('progress_more', { count: more })] : []), ...shown].join('\n');
}
