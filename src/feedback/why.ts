/*
 * After a 👎 (with `feedback_ask_why` on), the reactor is asked privately for one line of why:
 * a button under a private notice opens a one-field modal, and the line is stored beside the vote.
 * The button's value and the modal's id name the answer: a claim, checked against the caller's
 * own 👎 on that answer in that room before anything is shown or written.
 */
import { plainText } from '../delivery/blocks';
import { ButtonsView } from '../delivery/chatPort';
import { Translate } from '../i18n/messages';
import { cutAtCodePoint, neutralise } from '../security/inertText';
import { FeedbackPort, Vote } from './feedback';

export const WHY_ACTION = 'hermes-feedback-why';
const VIEW = 'hermes-feedback';
/** The longest line kept. */
export const WHY_MAX = 300;

/** The private notice after a 👎: its text and its one button, in the reactor's language. */
export function whyPrompt(answerId: string, t: Translate): ButtonsView {
    return { text: t('feedback_why_prompt'), buttons: [{ actionId: WHY_ACTION, label: t('feedback_why_button'), value: answerId }] };
}

export function whyViewId(roomId: string, answerId: string): string {
    return `${VIEW}|${roomId}|${answerId}`;
}

export function parseWhyViewId(id: string | undefined): { roomId: string; answerId: string } | undefined {
    const m = /^hermes-feedback\|([A-Za-z0-9_-]{1,64})\|([A-Za-z0-9_-]{1,64})$/.exec(id ?? '');
    return m ? { roomId: m[1], answerId: m[2] } : undefined;
}

/** The modal: one line, at most {@link WHY_MAX} characters. */
export function whyModal(roomId: string, answerId: string, t: Translate) {
    return {
        id: whyViewId(roomId, answerId),
        type: 'modal',
        title: plainText(t('feedback_why_title')),
        blocks: [
            {
                type: 'input',
                blockId: 'why',
                label: plainText(t('feedback_why_label')),
                element: { type: 'plain_text_input', actionId: 'why', multiline: false, maxLength: WHY_MAX },
            },
        ],
        submit: { type: 'button', actionId: 'submit', text: plainText(t('feedback_why_submit')), style: 'primary', blockId: 'submit', appId: '' },
    };
}

/** What is kept of what the person typed: one line, control characters made inert, cut at {@link WHY_MAX}. */
export function oneLine(text: string): string {
    return cutAtCodePoint(neutralise(text.replace(/\s+/g, ' ').trim()), WHY_MAX);
}

/**
 * The caller's own 👎 on that answer, in the room the request was admitted for: what makes the
 * claim good. Anything else (no vote, a 👍, another room's answer) is refused alike.
 */
export async function ownDownVote(feedback: Pick<FeedbackPort, 'current'>, answerId: string, userId: string, roomId: string): Promise<Vote | undefined> {
    const vote = await feedback.current(answerId, userId);
    return vote?.vote === 'down' && vote.roomId === roomId ? vote : undefined;
}

/** Stores the line beside the vote (the vote is otherwise unchanged). */
export async function saveWhy(feedback: Pick<FeedbackPort, 'put'>, vote: Vote, text: string): Promise<void> {
    await feedback.put({ ...vote, why: oneLine(text) });
}
