import { codeBlock, visibleCommand } from '../approvals/approvalView';
import { ButtonsView } from '../delivery/chatPort';
import { Translate } from '../i18n/messages';
import { Place } from '../commands/cronCommandPorts';

/*
 * What the model asks to have done in a person's name through the MCP write tools (issue 37
 * §4), kept until that person decides: the exact text and target they are shown, and what
 * became of it. Nothing is posted or scheduled before their click.
 */

export const WRITE_ACTION = 'hermes-write';
/** How long a request waits for its person; a click after that is refused and nothing is done. */
export const WRITE_TTL_MS = 15 * 60_000;
/** The longest text a request may carry: shown whole in the approval, below the server's message size. */
export const WRITE_MAX_CHARS = 3_000;
/** Requests awaiting approval at once per asker token (one turn): a model looping on a write tool shows no more than this. */
export const MAX_PENDING_PER_TOKEN = 3;

/** Where a request acts: a room, or a thread in it, as the server had it when checked (a scheduled prompt's place). */
export type WriteTarget = Place;

export interface WriteRequest {
    /** 16 hex characters. */
    id: string;
    kind: 'post' | 'schedule';
    askerId: string;
    askerUsername: string;
    /** The conversation the asker token was given in: the approval is shown there. */
    conversation: { roomId: string; threadId?: string };
    target: WriteTarget;
    /** The message to post, or the prompt to schedule. */
    text: string;
    /** A schedule in `/hermes cron add`'s words. */
    schedule?: string;
    createdAt: number;
    state: 'pending' | 'done' | 'declined' | 'expired' | 'failed';
    /** The approval message, once posted. */
    approvalMessageId?: string;
    /** A digest of the asker token it was proposed with (never the token): counts the token's pending requests. */
    tokenDigest?: string;
}

/** Whether a request still waits for its person. */
export function isPending(rec: WriteRequest, now: number): boolean {
    return rec.state === 'pending' && now - rec.createdAt <= WRITE_TTL_MS;
}

export type WriteChoice = 'approve' | 'decline';

/** Button value: `<request id>|approve` or `|decline`. */
function writeValue(id: string, choice: WriteChoice): string {
    return `${id}|${choice}`;
}

export function parseWriteValue(value: string | undefined): { id: string; choice: WriteChoice } | undefined {
    const m = /^([a-f0-9]{16})\|(approve|decline)$/.exec(value ?? '');
    return m ? { id: m[1], choice: m[2] as WriteChoice } : undefined;
}

/**
 * What a click may do: only the person the request was made for decides (not an admin: the
 * text goes out in that person's name), once, before it expires, on the approval message it
 * was shown in.
 */
export function clickRefusal(
    rec: WriteRequest,
    click: { userId: string; roomId: string; messageId?: string },
    now: number,
): 'not-yours' | 'not-pending' | 'expired' | undefined {
    if (rec.conversation.roomId !== click.roomId || (click.messageId !== undefined && rec.approvalMessageId !== click.messageId)) {
        return 'not-pending';
    }
    if (rec.askerId !== click.userId) {
        return 'not-yours';
    }
    if (rec.state !== 'pending') {
        return 'not-pending';
    }
    return isPending(rec, now) ? undefined : 'expired';
}

/** The target as people read it: `#name`, with its thread, or "your DM with the bot". */
export function targetLabel(target: WriteTarget, t: Translate): string {
    const room = target.kind === 'dm' || !target.roomName ? t('write_target_dm') : `#${target.roomName}`;
    return target.threadId ? t('write_target_thread', { room }) : room;
}

/** The approval message: the target and the exact text, whole, with Approve and Decline. */
export function writeApprovalView(rec: WriteRequest, t: Translate): ButtonsView {
    const target = targetLabel(rec.target, t);
    const text =
        rec.kind === 'post'
            ? t('write_request_post', { target, asker: rec.askerUsername, text: codeBlock(visibleCommand(rec.text)), minutes: WRITE_TTL_MS / 60_000 })
            : t('write_request_schedule', {
                  target,
                  asker: rec.askerUsername,
                  schedule: codeBlock(visibleCommand(rec.schedule ?? '')),
                  text: codeBlock(visibleCommand(rec.text)),
                  minutes: WRITE_TTL_MS / 60_000,
              });
    return {
        text,
        buttons: [
            {
                actionId: WRITE_ACTION,
                label: t(rec.kind === 'post' ? 'write_button_post' : 'write_button_schedule'),
                value: writeValue(rec.id, 'approve'),
                style: 'primary',
            },
            { actionId: WRITE_ACTION, label: t('write_button_decline'), value: writeValue(rec.id, 'decline'), style: 'danger' },
        ],
    };
}

/**
 * The text posted for an approved `post_message`: what the person approved, `@all`/`@here`
 * made inert (the bot may notify a whole room; the person perhaps may not), and a line saying
 * in whose name it was posted.
 */
export function postedText(rec: WriteRequest, t: Translate): string {
    const quiet = rec.text.replace(/([@＠])(all|here|channel)\b/giu, '$1\u200B$2');
    return `${quiet}\n\n${t('write_posted_for', { asker: rec.askerUsername })}`;
}
