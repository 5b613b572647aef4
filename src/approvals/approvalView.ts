import { ButtonsView } from '../delivery/chatPort';
import { ApprovalRequest } from '../hermes/client';
import { t, MessageKey } from '../i18n/messages';
import { APPROVAL_ACTION, approvalValue } from './approvalPolicy';

const LABEL: Record<string, MessageKey> = {
    once: 'approval_button_once',
    session: 'approval_button_session',
    always: 'approval_button_always',
    deny: 'approval_button_deny',
};

/** Code spans cannot hold a backtick run longer than their fence: cut commands to one line, no backticks. */
function inlineCode(text: string): string {
    const flat = text.replace(/[\r\n]+/g, ' ').replace(/`/g, "'").slice(0, 500);
    return flat.length > 0 ? `\`${flat}\`` : '_(no command shown)_';
}

export function approvalText(request: ApprovalRequest, askerUsername: string): string {
    return t('approval_request', { command: inlineCode(request.command), description: request.description || '—', asker: askerUsername });
}

export function approvalButtons(turnId: string, request: ApprovalRequest, askerUsername: string, choices: string[]): ButtonsView {
    return {
        text: approvalText(request, askerUsername),
        buttons: choices.map((c) => ({ actionId: APPROVAL_ACTION, label: t(LABEL[c]), value: approvalValue(turnId, c), style: c === 'deny' ? 'danger' : c === 'once' ? 'primary' : undefined })),
    };
}

export function decidedText(request: ApprovalRequest, by: string, choice: string): string {
    return t(choice === 'deny' ? 'approval_denied' : 'approval_approved', { command: inlineCode(request.command), by, choice: t(LABEL[choice] ?? 'approval_button_once') });
}

export function timedOutText(request: ApprovalRequest): string {
    return t('approval_timed_out', { command: inlineCode(request.command) });
}
