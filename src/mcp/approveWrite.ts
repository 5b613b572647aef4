import { PersonalText, Translate } from '../i18n/messages';
import { LogPort } from '../security/safeLog';
import { WritePort } from './writeTools';
import { clickRefusal, postedText, targetLabel, WriteChoice, WriteRequest, WriteTarget } from './writeRequest';

/*
 * A click on a write request's approval (mcp/writeRequest.ts): only its person, once, before it
 * expires. An approval re-checks the target as it stands now (the person may have left the room
 * since), then posts or schedules exactly what was shown; the approval message then says what
 * became of it, without buttons.
 */

export interface ApproveWritePorts {
    get: (id: string) => Promise<WriteRequest | undefined>;
    save: (rec: WriteRequest) => Promise<void>;
    /** True for the first of racing decisions on one request (two clicks, two instances). */
    claim: (id: string) => Promise<boolean>;
    target: WritePort['target'];
    /** Posts as the bot; the new message's id. Rejects when the server refuses the post. */
    post: (target: WriteTarget, text: string) => Promise<string>;
    /** Adds the scheduled prompt with `/hermes cron add`'s checks as they stand now: its private confirmation, or why not. */
    schedule: (rec: WriteRequest, target: WriteTarget) => Promise<{ added: string } | { refusal: string }>;
    /** Replaces the approval message's text and removes its buttons. */
    settle: (rec: WriteRequest, text: string) => Promise<void>;
    /** A private line to the person who clicked, in their language. */
    tell: (text: PersonalText) => Promise<void>;
    link: (target: WriteTarget, messageId: string) => string | undefined;
    /** The room's language (the approval message is public). */
    t: Translate;
    now: () => number;
    log: LogPort;
}

export type WriteOutcome = 'done' | 'declined' | 'failed' | 'expired' | 'not-yours' | 'not-pending';

export async function decideWrite(
    click: { id: string; choice: WriteChoice; userId: string; username: string; roomId: string; messageId?: string },
    ports: ApproveWritePorts,
): Promise<WriteOutcome> {
    const rec = await ports.get(click.id);
    const refusal = rec ? clickRefusal(rec, click, ports.now()) : 'not-pending';
    if (!rec || refusal === 'not-yours' || refusal === 'not-pending') {
        await ports.tell((t) => t(refusal === 'not-yours' ? 'write_not_yours' : 'write_not_pending'));
        return refusal === 'not-yours' ? 'not-yours' : 'not-pending';
    }
    if (!(await ports.claim(`write:${rec.id}`))) {
        await ports.tell((t) => t('write_not_pending'));
        return 'not-pending';
    }
    const target = targetLabel(rec.target, ports.t);
    const settle = async (state: WriteRequest['state'], text: string) => {
        await ports.save({ ...rec, state });
        await ports.settle(rec, text);
    };
    if (refusal === 'expired') {
        await settle('expired', ports.t('write_expired', { target }));
        await ports.tell((t) => t('write_expired', { target }));
        return 'expired';
    }
    if (click.choice === 'decline') {
        await settle('declined', ports.t('write_declined', { target, by: click.username }));
        ports.log.info(`MCP write request ${rec.id} declined by user ${click.userId}.`);
        return 'declined';
    }
    const now = await ports.target(rec.askerId, rec.target.roomId, rec.target.threadId);
    if (!now.ok) {
        ports.log.warn(`MCP write request ${rec.id} of user ${rec.askerId} not done: ${now.reason} in room ${rec.target.roomId} now.`);
        await settle('failed', ports.t('write_failed_target', { target }));
        return 'failed';
    }
    if (rec.kind === 'schedule') {
        const added = await ports.schedule(rec, now.target);
        if ('refusal' in added) {
            await settle('failed', ports.t('write_failed', { target, reason: added.refusal }));
            return 'failed';
        }
        await settle('done', ports.t('write_scheduled', { target, by: click.username }));
        await ports.tell(added.added);
        ports.log.info(`MCP write request ${rec.id}: prompt scheduled in room ${rec.target.roomId} for user ${rec.askerId}.`);
        return 'done';
    }
    let posted: string;
    try {
        posted = await ports.post(now.target, postedText(rec, ports.t));
    } catch (e) {
        ports.log.warn(`MCP write request ${rec.id}: the server refused the post in room ${rec.target.roomId} (${(e as Error).name}).`);
        await settle('failed', ports.t('write_failed_target', { target }));
        return 'failed';
    }
    const link = ports.link(now.target, posted);
    await settle('done', ports.t('write_posted', { target: link ? `[${target}](${link})` : target, by: click.username }));
    ports.log.info(`MCP write request ${rec.id}: posted message ${posted} in room ${rec.target.roomId} for user ${rec.askerId}.`);
    return 'done';
}
