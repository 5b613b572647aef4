import { ApprovalRequest } from '../hermes/runs';

export const APPROVAL_ACTION = 'hermes-approval';

/** Where an approval is asked, as far as the policy cares. */
export interface ApprovalPlace {
    /** A 1:1 DM with the bot. */
    isDirect: boolean;
    askerId: string;
    adminUserIds: string[];
}

/**
 * The choices offered for a pending approval: what Hermes offers, minus "always" (a
 * persistent approval changes the bot for everyone) except in an admin's own 1:1 DM.
 */
export function offeredChoices(request: ApprovalRequest, place: ApprovalPlace): string[] {
    const allowAlways = place.isDirect && place.adminUserIds.includes(place.askerId) && request.allowPermanent;
    const offered = request.choices.length > 0 ? request.choices : ['once', 'deny'];
    return offered.filter((c) => ['once', 'session', 'always', 'deny'].includes(c) && (c !== 'always' || allowAlways));
}

/** Only the asker, or an admin, may decide. */
export function mayDecide(userId: string, askerId: string, adminUserIds: string[]): boolean {
    return userId === askerId || adminUserIds.includes(userId);
}

/** Button value: `<turn id>|<choice>`, plus `|full` on the buttons under the whole command. */
export function approvalValue(turnId: string, choice: string, seenFull = false): string {
    return `${turnId}|${choice}${seenFull ? '|full' : ''}`;
}

export function parseApprovalValue(value: string | undefined): { turnId: string; choice: string; seenFull: boolean } | undefined {
    const m = /^([^|]{1,100})\|(once|session|always|deny|show)(\|full)?$/.exec(value ?? '');
    return m ? { turnId: m[1], choice: m[2], seenFull: Boolean(m[3]) } : undefined;
}

/** The text forms accepted while an approval is pending in the same conversation. */
export function textDecision(text: string): 'once' | 'deny' | undefined {
    const t = text.trim().toLowerCase();
    if (t === '/approve' || t === '!approve' || t === 'yes' || t === 'y') {
        return 'once';
    }
    if (t === '/deny' || t === '!deny' || t === 'no' || t === 'n') {
        return 'deny';
    }
    return undefined;
}
