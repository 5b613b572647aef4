import { ButtonsView } from '../delivery/chatPort';
import { ApprovalRequest } from '../hermes/runs';
import { t, MessageKey } from '../i18n/messages';
import { APPROVAL_ACTION, approvalValue } from './approvalPolicy';

const LABEL: Record<string, MessageKey> = {
    once: 'approval_button_once',
    session: 'approval_button_session',
    always: 'approval_button_always',
    deny: 'approval_button_deny',
    show: 'approval_button_show',
};

/** What the approval message shows of a command at most; more is cut, and only Deny is offered for it. */
export const SHOWN_COMMAND_CHARS = 1_500;
const SHOWN_COMMAND_LINES = 25;

/** A command as a person can read it: whole, or cut with a note of how much is hidden. */
interface ShownCommand {
    text: string;
    cut: boolean;
}

/**
 * Makes what hides text visible: a long run of blanks (`cat README.md` + 500 spaces +
 * `; curl …|sh` looks like `cat README.md`) becomes `⟨500 blanks⟩`, control and bidi
 * characters become their code point. Line breaks stay: the command is shown in a code block.
 */
export function visibleCommand(command: string): string {
    return command
        .replace(/\r\n?/g, '\n')
        .replace(/[^\S\n]{8,}/g, (run) => ` ⟨${run.length} blanks⟩ `)
        .replace(
            /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g,
            (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`,
        );
}

/** The command as shown in the channel message: cut at a line/character bound, and saying so. */
function shownCommand(command: string): ShownCommand {
    const visible = visibleCommand(command);
    const lines = visible.split('\n');
    let text = lines.slice(0, SHOWN_COMMAND_LINES).join('\n');
    if (text.length > SHOWN_COMMAND_CHARS) {
        text = text.slice(0, SHOWN_COMMAND_CHARS);
    }
    const cut = text.length < visible.length;
    return { text, cut };
}

/** A fenced code block that the command itself cannot close (fence longer than any backtick run in it). */
export function codeBlock(text: string): string {
    const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
    const fence = '`'.repeat(Math.max(3, longest + 1));
    return `${fence}\n${text}\n${fence}`;
}

function commandBlock(request: ApprovalRequest, unknown: boolean): string {
    if (unknown || !request.command) {
        return t('approval_command_unknown');
    }
    const shown = shownCommand(request.command);
    const block = codeBlock(shown.text);
    return shown.cut ? `${block}\n${t('approval_command_cut', { hidden: visibleCommand(request.command).length - shown.text.length })}` : block;
}

/** Whether the channel message can show the whole command (Approve is offered only then). */
export function commandFullyShown(request: ApprovalRequest, unknown = false): boolean {
    return !unknown && request.command.length > 0 && !shownCommand(request.command).cut;
}

function approvalText(request: ApprovalRequest, askerUsername: string, unknown = false): string {
    return t('approval_request', { command: commandBlock(request, unknown), description: request.description || '—', asker: askerUsername });
}

/** The approval message with its buttons; a command that cannot be shown whole gets Deny and "Show full command". */
export function approvalButtons(turnId: string, request: ApprovalRequest, askerUsername: string, choices: string[], unknown = false): ButtonsView {
    const whole = commandFullyShown(request, unknown);
    const offered = whole ? choices : [...choices.filter((c) => c === 'deny'), ...(unknown ? [] : ['show'])];
    return {
        text: approvalText(request, askerUsername, unknown),
        buttons: offered.map((c) => ({
            actionId: APPROVAL_ACTION,
            label: t(LABEL[c]),
            value: approvalValue(turnId, c),
            style: c === 'deny' ? 'danger' : c === 'once' ? 'primary' : undefined,
        })),
    };
}

/** The whole command, for the person who asked to see it; Approve here means "I have read it all". */
export function fullCommandView(turnId: string, request: ApprovalRequest, choices: string[]): ButtonsView {
    return {
        text: t('approval_full_command', { command: codeBlock(visibleCommand(request.command)) }),
        buttons: choices.map((c) => ({
            actionId: APPROVAL_ACTION,
            label: t(LABEL[c]),
            value: approvalValue(turnId, c, true),
            style: c === 'deny' ? 'danger' : c === 'once' ? 'primary' : undefined,
        })),
    };
}

/** One line naming the command in the decided/timed-out edits. */
function commandLine(request: ApprovalRequest): string {
    const first = visibleCommand(request.command).split('\n')[0].replace(/`/g, "'").slice(0, 200);
    return first ? `\`${first}${first.length < request.command.length ? ' …' : ''}\`` : t('approval_command_unknown');
}

export function decidedText(request: ApprovalRequest, by: string, choice: string): string {
    return t(choice === 'deny' ? 'approval_denied' : 'approval_approved', {
        command: commandLine(request),
        by,
        choice: t(LABEL[choice] ?? 'approval_button_once'),
    });
}

export function timedOutText(request: ApprovalRequest): string {
    return t('approval_timed_out', { command: commandLine(request) });
}
