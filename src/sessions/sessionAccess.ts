import { OwnedSession, SessionIndexPort } from './sessionIndex';
import { isSharedKey } from './sessionKey';
import { SessionPort } from './sessionRecord';

/** Whether the person a command is for is a member of a room now (absent: nobody is). */
export type MemberOf = ((roomId: string) => Promise<boolean>) | undefined;

/**
 * The entries whose room the person is a member of now. The index records where a person once
 * asked; leaving a room (or being removed) ends their access to its sessions, so every list,
 * search and resume asks again, once per room. Without a membership port no room entry passes
 * (fail closed): only DM entries, whose room is the person's own conversation with the bot.
 * A membership read that fails counts as "not a member".
 */
export async function reachable(entries: OwnedSession[], memberOf: MemberOf): Promise<OwnedSession[]> {
    if (!memberOf) {
        return entries.filter((e) => e.kind === 'dm');
    }
    const rooms = [...new Set(entries.map((e) => e.roomId))];
    const member = new Map(await Promise.all(rooms.map(async (id) => [id, await memberOf(id).catch(() => false)] as const)));
    return entries.filter((e) => member.get(e.roomId) === true);
}

/** A room's or thread's one session (no person's id in its key): its members share it. */
function isShared(entry: OwnedSession): boolean {
    return entry.kind === 'room' && isSharedKey(entry.key, entry.threadId);
}

/**
 * Whether an entry lets its session be resumed in the conversation `key`. A personal session
 * (a DM's, or one person's in a room or thread) is its owner's to take anywhere. A shared one
 * belongs to its conversation: taken elsewhere, it would carry what the room says next to
 * wherever the person went, past the day they leave the room. So only there.
 */
export function resumableIn(entry: OwnedSession, key: string): boolean {
    return !isShared(entry) || entry.key === key;
}

/** What this reads of an open turn (turns/turnRecord.ts TurnRecord has it): declared here so sessions stay below turns. */
interface OpenTurn {
    sessionId?: string;
    phase: string;
    /** Its claim (turns/owner.ts): `sending` while it is being handed to Hermes. */
    owner?: { as: string } | null;
}

interface ElsewherePorts {
    index: Pick<SessionIndexPort, 'ofSession'>;
    sessions: Pick<SessionPort, 'get'>;
    /** The open turns of a conversation (the turn store's `openInSession`). */
    turns: { openInSession(sessionKey: string): Promise<OpenTurn[]> };
}

/**
 * Whether `sessionId` is in use in a conversation other than `key`: that conversation's record
 * names it now, or a turn of that conversation is running on it (one sent before that
 * conversation moved on, see {@link onSession}). A session goes on in one conversation at a
 * time: two would send turns to one transcript side by side, ordered by nothing (turns are
 * ordered per conversation). The conversations are the ones the index knows the session in (`known`: the
 * entries already read, for those written before the index could be asked by session), read
 * here at resume, never on a turn's way.
 */
export async function inUseElsewhere(sessionId: string, key: string, known: OwnedSession[], ports: ElsewherePorts): Promise<boolean> {
    const used = [...known, ...(await ports.index.ofSession(sessionId))].filter((e) => e.sessionId === sessionId).map((e) => e.key);
    const others = [...new Set(used)].filter((k) => k !== key);
    const found = await Promise.all(
        others.map(async (k) => {
            const [record, open] = await Promise.all([ports.sessions.get(k), ports.turns.openInSession(k)]);
            return record.sessionId === sessionId || open.some((t) => onSession(t, sessionId));
        }),
    );
    return found.includes(true);
}

/**
 * Whether an open turn runs on `sessionId`. A turn sent a moment ago may not have stored its
 * session yet (a fresh claim is saved only with the turn's next step, freshClaim.ts): one that
 * is sent or claimed for sending counts as on it, whichever session it went to; a queued one
 * reads its conversation's record when it goes, which no longer names this session.
 */
function onSession(turn: OpenTurn, sessionId: string): boolean {
    return turn.sessionId === undefined ? turn.phase === 'running' || turn.owner?.as === 'sending' : turn.sessionId === sessionId;
}
