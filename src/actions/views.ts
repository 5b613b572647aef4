import { formatStamp } from '../time/timestamp';
import { shownTitle } from '../sessions/titles';
import { Block, plainText } from '../delivery/blocks';
import { ButtonsView } from '../delivery/chatPort';
import { t as serverT, Translate } from '../i18n/messages';
import { Totals } from '../usage/usage';
import { shortCount } from '../usage/usage';

/** Action ids of the app's buttons and surfaces. */
export const ACTIONS = {
    ask: 'hermes-ask',
    summarize: 'hermes-summarize',
    catchUp: 'hermes-catch-up',
    panel: 'hermes-panel',
    panelStop: 'hermes-panel-stop',
    panelRefresh: 'hermes-panel-refresh',
    panelNew: 'hermes-panel-new',
    panelRetry: 'hermes-panel-retry',
    panelUndo: 'hermes-panel-undo',
    panelResume: 'hermes-panel-resume',
} as const;

const section = (text: string, blockId?: string): Block => ({ type: 'section', ...(blockId ? { blockId } : {}), text: { type: 'mrkdwn', text } });
const button = (actionId: string, label: string, value: string, style?: 'primary' | 'danger') => ({
    type: 'button',
    actionId,
    text: plainText(label),
    value,
    ...(style ? { style } : {}),
});

/** The view id carries what a submit or a click inside the view needs (a view submit carries no room). */
function askViewId(roomId: string, messageId: string): string {
    return `hermes-ask|${roomId}|${messageId}`;
}
function panelViewId(roomId: string, threadId?: string): string {
    return `hermes-panel|${roomId}|${threadId ?? ''}`;
}
export function parseViewId(id: string | undefined): { kind: string; roomId: string; other?: string } | undefined {
    const m = /^(hermes-ask|hermes-panel)\|([A-Za-z0-9_-]{1,64})\|([A-Za-z0-9_-]{0,64})$/.exec(id ?? '');
    return m ? { kind: m[1], roomId: m[2], other: m[3] || undefined } : undefined;
}

/** "Ask Hermes about this": the message quoted, a question, where the answer goes. */
export function askModal(roomId: string, messageId: string, quoted: string, t: Translate = serverT) {
    return {
        id: askViewId(roomId, messageId),
        type: 'modal',
        title: plainText(t('action_ask_title')),
        blocks: [
            section(`> ${quoted}`, 'quoted'),
            {
                type: 'input',
                blockId: 'question',
                label: plainText(t('action_ask_question')),
                element: { type: 'plain_text_input', actionId: 'question', multiline: true },
            },
            {
                type: 'input',
                blockId: 'where',
                label: plainText(t('action_ask_where')),
                element: {
                    type: 'static_select',
                    actionId: 'where',
                    initialValue: 'thread',
                    options: [
                        { text: plainText(t('action_ask_where_thread')), value: 'thread' },
                        { text: plainText(t('action_ask_where_private')), value: 'private' },
                    ],
                },
            },
        ],
        submit: { type: 'button', actionId: 'submit', text: plainText(t('action_ask_submit')), style: 'primary', blockId: 'submit', appId: '' },
    };
}

interface PanelTurn {
    id: string;
    elapsedMs: number;
    tools: string[];
    /** A pending approval of this turn: its text and buttons, the same the room's approval message offers. */
    approval?: ButtonsView;
    queued: boolean;
}

export interface PanelModel {
    roomId: string;
    threadId?: string;
    turns: PanelTurn[];
    /** Each with its session id: the value of its Resume button. `own`: the person's own (only those can be resumed here). */
    sessions: Array<{ id: string; title: string; lastActive?: number; current: boolean; own: boolean }>;
    /** The person may resume sessions (`resume` in command_allowlist, or an admin). */
    canResume: boolean;
    /** The person may retry and undo here (command_allowlist, or an admin): the buttons show. */
    canRetry: boolean;
    canUndo: boolean;
    /** What the last click did, when it has something to say (a resume's answer). */
    notice?: string;
    today: Totals;
    timeZone: string;
}

/** The run panel: only the person's own turns, sessions and usage here. */
export function panelView(m: PanelModel, t: Translate = serverT) {
    const blocks: Block[] = [...(m.notice ? [section(m.notice), { type: 'divider' }] : []), section(`*${t('panel_turns')}*`)];
    if (m.turns.length === 0) {
        blocks.push(section(t('panel_no_turn')));
    }
    for (const turn of m.turns) {
        const state = turn.queued
            ? t('panel_queued')
            : turn.approval
              ? t('panel_approval')
              : t('panel_running', { seconds: Math.round(turn.elapsedMs / 1000) });
        const tools = turn.tools.slice(-5).map((l) => `• ${l}`);
        blocks.push(section([state, ...tools].join('\n')));
        if (turn.approval) {
            // The same buttons as the approval message: a click here is decided by the same handler, with the same checks.
            blocks.push(section(turn.approval.text));
            blocks.push({ type: 'actions', elements: turn.approval.buttons.map((b) => button(b.actionId, b.label, b.value, b.style)) });
        }
        blocks.push({ type: 'actions', elements: [button(ACTIONS.panelStop, t('panel_stop'), turn.id, 'danger')] });
    }
    blocks.push({ type: 'divider' });
    blocks.push(section(`*${t('panel_sessions')}*`));
    if (m.sessions.length === 0) {
        blocks.push(section(t('sessions_none')));
    }
    // One section per session, with Resume beside each of the person's own that is not the current one.
    for (const s of m.sessions.slice(0, 5)) {
        // A title anyone in a shared thread could set: shown as plain text.
        const line = `• **${shownTitle(s.title)}**${s.lastActive ? ` · ${formatStamp(new Date(s.lastActive), m.timeZone)}` : ''}${s.current ? ` · ${t('sessions_current')}` : ''}`;
        const resume = m.canResume && s.own && !s.current;
        blocks.push({ ...section(line), ...(resume ? { accessory: button(ACTIONS.panelResume, t('panel_resume'), s.id) } : {}) });
    }
    blocks.push({ type: 'divider' });
    blocks.push(section(`*${t('panel_usage')}*\n${t('usage_line', { turns: m.today.turns, in: shortCount(m.today.in), out: shortCount(m.today.out) })}`));
    blocks.push({
        type: 'actions',
        elements: [
            button(ACTIONS.panelRefresh, t('panel_refresh'), m.roomId),
            button(ACTIONS.panelNew, t('panel_new'), m.roomId),
            ...(m.canRetry ? [button(ACTIONS.panelRetry, t('panel_retry'), m.roomId)] : []),
            ...(m.canUndo ? [button(ACTIONS.panelUndo, t('panel_undo'), m.roomId)] : []),
        ],
    });
    return { id: panelViewId(m.roomId, m.threadId), type: 'contextualBar', title: plainText(t('panel_title')), blocks };
}
