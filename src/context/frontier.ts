import { ContextMessage } from './contextMessage';

/** A place in a thread: a message's server time and id (the id breaks ties between equal times). */
export interface ThreadPosition {
    at: number;
    id: string;
}

/**
 * "This thread session holds the thread up to here": every message at or before `at`/`id`,
 * plus the `held` messages after it (its own later triggers and the bot's answers to them,
 * which Hermes has in the transcript already). Stored with the session record, so it
 * survives restarts and is shared by every server instance.
 */
export interface Frontier extends ThreadPosition {
    held: ThreadPosition[];
}

/** How many held positions a frontier keeps at most (a backlog drain adds one per turn). */
const MAX_HELD = 50;
/**
 * The bot's answers are held by id with the time the app saw them posted, a little before
 * the server's own time; they are kept until the frontier is this far past them, so such a
 * difference can never drop one too early.
 */
const HELD_SLACK_MS = 5 * 60_000;

function isAfter(m: ThreadPosition, p: ThreadPosition): boolean {
    return m.at > p.at || (m.at === p.at && m.id > p.id);
}

function positionOf(m: ContextMessage): ThreadPosition {
    return { at: m.createdAt.getTime(), id: m.id };
}

/**
 * What a thread session is given: people's messages (no system messages), the bot's answers
 * and notices. Status, approval and command messages belong to the moment (the status is
 * removed, approvals were the run's own, commands were not turns).
 */
export function threadWorthy(m: ContextMessage, botId: string): boolean {
    if (m.isSystem) {
        return false;
    }
    return m.senderId !== botId || m.botKind === undefined || m.botKind === 'answer' || m.botKind === 'notice';
}

export interface ThreadSliceInput {
    /** The thread as it was when the question was asked (the trigger excluded): root first, then replies in time order. */
    thread: ContextMessage[];
    trigger: ThreadPosition;
    /** The stored frontier; undefined when none is stored. */
    frontier: Frontier | undefined;
    /** The session had answered turns before (false: a new session, nothing is held). */
    sessionStarted: boolean;
    botId: string;
    /** history_max_messages. */
    max: number;
}

export interface ThreadSlice {
    /** What this turn delivers, oldest first. */
    messages: ContextMessage[];
    /** Messages after these and before the trigger, left for later turns. */
    remaining: number;
    /** Everything the session does not hold yet, oldest first (`messages` is its head). */
    candidates: ContextMessage[];
    /** The blind pass ran: no frontier was stored for a session that had turns. */
    blind: boolean;
}

/**
 * The messages a thread turn hands to its session: exactly those after the frontier that
 * the session does not hold, oldest first, at most `max`; a larger backlog drains over the
 * following turns. Without a stored frontier:
 * - a new session (its first turn, or the first after /new) holds nothing: the whole thread
 *   from its root is the backlog;
 * - a session that had turns but lost its frontier (written by an older version, expired, a
 *   failed write) gets one blind pass: the bot's own messages of the thread, which no later
 *   turn could recover, and everything after the bot's newest message. It can repeat a few
 *   lines once; losing the bot's output would be permanent, so the bounded repeat is the
 *   cheaper error.
 */
export function threadSlice(input: ThreadSliceInput): ThreadSlice {
    const worthy = input.thread.filter((m) => m.id !== input.trigger.id && threadWorthy(m, input.botId));
    let candidates: ContextMessage[];
    let blind = false;
    if (input.frontier) {
        const frontier = input.frontier;
        const held = new Set(frontier.held.map((h) => h.id));
        candidates = worthy.filter((m) => isAfter(positionOf(m), frontier) && !held.has(m.id));
    } else if (!input.sessionStarted) {
        candidates = worthy;
    } else {
        blind = true;
        const newestBot = worthy.map((m) => m.senderId).lastIndexOf(input.botId);
        candidates = worthy.filter((m, i) => m.senderId === input.botId || i > newestBot);
    }
    const messages = candidates.slice(0, Math.max(0, input.max));
    return { messages, remaining: candidates.length - messages.length, candidates, blind };
}

/**
 * Where the frontier stands once Hermes has the turn that delivered `delivered` (a prefix of
 * the slice's candidates) and its trigger: past the trigger when nothing is left behind;
 * otherwise at the last delivered message, with the trigger held (it is in the transcript,
 * and the next turn must not hand it over again as context).
 */
export function frontierAfter(previous: Frontier | undefined, delivered: ContextMessage[], leftBehind: number, trigger: ThreadPosition): Frontier {
    const last = delivered.length > 0 ? positionOf(delivered[delivered.length - 1]) : undefined;
    let at: ThreadPosition;
    const held: ThreadPosition[] = [...(previous?.held ?? [])];
    if (leftBehind === 0) {
        at = last && isAfter(last, trigger) ? last : trigger;
    } else {
        // Nothing delivered from a backlog (cannot happen with max ≥ 1): stay where we were.
        at = last ?? previous ?? { at: 0, id: '' };
        held.push(trigger);
    }
    return { at: at.at, id: at.id, held: prune(held, at) };
}

/** The frontier after a turn whose context Hermes did not get (the 413 retry drops it): only the trigger is held. */
export function frontierWithoutBlock(previous: Frontier | undefined, trigger: ThreadPosition): Frontier | undefined {
    if (!previous) {
        return undefined;
    }
    return { ...previous, held: prune([...previous.held, trigger], previous) };
}

/** The bot's answer parts, posted now: held, so the next turn does not hand them back. */
export function holdAnswers(frontier: Frontier, answerIds: string[], postedAt: number): Frontier {
    return { ...frontier, held: prune([...frontier.held, ...answerIds.map((id) => ({ id, at: postedAt }))], frontier) };
}

function prune(held: ThreadPosition[], frontier: ThreadPosition): ThreadPosition[] {
    const seen = new Set<string>();
    const kept = held.filter((h) => {
        if (seen.has(h.id) || h.at + HELD_SLACK_MS < frontier.at) {
            return false;
        }
        seen.add(h.id);
        return true;
    });
    return kept.slice(Math.max(0, kept.length - MAX_HELD));
}

/** A stored value is used only if it has the shape; anything else is a lost frontier. */
export function parseFrontier(raw: unknown): Frontier | undefined {
    const f = raw as Partial<Frontier> | undefined;
    if (!f || typeof f.at !== 'number' || typeof f.id !== 'string' || !Array.isArray(f.held)) {
        return undefined;
    }
    const held = f.held.filter((h): h is ThreadPosition => Boolean(h) && typeof h.at === 'number' && typeof h.id === 'string');
    return { at: f.at, id: f.id, held: held.slice(-MAX_HELD) };
}
