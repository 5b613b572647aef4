import { admitCommand, CommandAdmission } from './commandAdmission';
import { HermesConfig } from '../settings/config';

/**
 * What a person's request needs in the room it names: `read` for what only they will see (a
 * private answer, a list of their own sessions), `post` for what the room sees or what changes
 * its conversation (a public answer, a reset, a resume, a decision on a turn).
 */
export type Need = 'read' | 'post';

/**
 * The facts the gate gathers about one request, each answered by the server's data, never by
 * the request: the client chose the room id, message id, thread id and view id it sent.
 */
export interface AccessFacts {
    caller: { id: string; username: string };
    botId: string;
    /** The room the request names, as the server has it; absent when no such room exists. */
    room?: { type: string; directMemberCount?: number };
    callerIsMember: boolean;
    botIsMember: boolean;
    /** A message the request names: whether it is in that room (absent: none named). */
    messageInRoom?: boolean;
    /** A thread the request names: whether its root is in that room (absent: none named). */
    threadInRoom?: boolean;
    need: Need;
    /** Whether the caller may post there (a read-only room lets only `post-readonly` holders). */
    callerMayPost: boolean;
}

export type AccessRefusal =
    Exclude<CommandAdmission, { admit: true }>['reason'] | 'no-room' | 'caller-not-member' | 'message-elsewhere' | 'thread-elsewhere' | 'may-not-post';

/**
 * The one rule every person's request passes before anything is read for it or written: the
 * message rules (not the bot itself, not an ignored sender, inside allowed_user_ids, a room
 * type the app serves, the bot a member), then what the server does not check for apps on a
 * slash command or a UIKit interaction: the caller is a member of the room, the message and the
 * thread named are in that room, and the caller may post there when the request needs it.
 */
export function accessRefusal(f: AccessFacts, config: Pick<HermesConfig, 'allowedUserIds' | 'ignoreSenders'> | undefined): AccessRefusal | undefined {
    if (!f.room) {
        // No room to admit in; the bot's own request still stays silent.
        return f.caller.id === f.botId ? 'own-command' : 'no-room';
    }
    const admission = admitCommand(f.caller, f.room, { botId: f.botId, botIsMember: f.botIsMember }, config);
    if (!admission.admit) {
        return admission.reason;
    }
    if (!f.callerIsMember) {
        return 'caller-not-member';
    }
    if (f.messageInRoom === false) {
        return 'message-elsewhere';
    }
    if (f.threadInRoom === false) {
        return 'thread-elsewhere';
    }
    if (f.need === 'post' && !f.callerMayPost) {
        return 'may-not-post';
    }
    return undefined;
}
