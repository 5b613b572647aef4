/*
 * 👍 / 👎 on the bot's answers, recorded with the turn they answer: who, the Hermes session and
 * run, when. One vote per person and answer message; changing the reaction changes it, taking
 * it back removes it. Nothing goes to Hermes: v0.18.2's api_server has no feedback route (its
 * routes are listed in gateway/platforms/api_server.py, `_app.router.add_*`), so the votes stay
 * in the app, for `/hermes usage`.
 */

export type VoteKind = 'up' | 'down';

/** A person's vote on one answer message. */
export interface Vote {
    answerId: string;
    /** The question's message id (the turn). */
    turnId: string;
    userId: string;
    roomId: string;
    vote: VoteKind;
    at: number;
    sessionId?: string;
    runId?: string;
    /** One line of why, asked for after a 👎 (`feedback_ask_why`). */
    why?: string;
}

/** What the turn's usage row says about an answer message. */
export interface AnsweredTurn {
    turnId: string;
    roomId: string;
    sessionId?: string;
    runId?: string;
}

export interface FeedbackPort {
    /** The turn an answer message belongs to; undefined for any other message (or an answer from before votes were kept). */
    answered(answerId: string): Promise<AnsweredTurn | undefined>;
    current(answerId: string, userId: string): Promise<Vote | undefined>;
    /** Replaces the person's vote on that answer. */
    put(vote: Vote): Promise<void>;
    clear(answerId: string, userId: string): Promise<void>;
    /** Votes since `since` (ms), in one room or everywhere; a person's newest vote per answer counts once. */
    counts(since: number, where: { roomId?: string }): Promise<{ up: number; down: number }>;
}

/** The reactions that are votes: Rocket.Chat's names for 👍 and 👎, with their aliases. */
export function voteOf(reaction: string): VoteKind | undefined {
    switch (reaction) {
        case ':thumbsup:':
        case ':+1:':
            return 'up';
        case ':thumbsdown:':
        case ':-1:':
            return 'down';
        default:
            return undefined;
    }
}

/** A reaction as IPostMessageReacted carries it, reduced to what decides. */
export interface ReactionEvent {
    reaction: string;
    isReacted: boolean;
    messageId: string;
    /** Who wrote the message reacted to. */
    senderId?: string;
    /** Whether it carries one of the app's marks (notices, status, approvals): those are not answers. */
    marked: boolean;
    userId: string;
}

export interface VotePorts {
    botId: string;
    feedback: FeedbackPort;
    now: () => number;
    /** Asks the person privately for one line of why (a 👎 with `feedback_ask_why` on). */
    askWhy?: (vote: Vote) => Promise<void>;
}

/**
 * Records, changes or withdraws a vote. Only a person's 👍 / 👎 on one of the bot's answers counts:
 * every other reaction (the bot's own 👀 and ✅ among them) costs no read at all.
 */
export async function takeReaction(e: ReactionEvent, ports: VotePorts): Promise<'recorded' | 'withdrawn' | 'ignored'> {
    const kind = voteOf(e.reaction);
    if (!kind || e.userId === ports.botId || e.senderId !== ports.botId || e.marked) {
        return 'ignored';
    }
    const [turn, current] = await Promise.all([ports.feedback.answered(e.messageId), ports.feedback.current(e.messageId, e.userId)]);
    if (!turn) {
        return 'ignored';
    }
    if (!e.isReacted) {
        // Taking back the other reaction leaves the vote as it is.
        if (current?.vote !== kind) {
            return 'ignored';
        }
        await ports.feedback.clear(e.messageId, e.userId);
        return 'withdrawn';
    }
    if (current?.vote === kind) {
        return 'ignored';
    }
    const vote: Vote = { answerId: e.messageId, userId: e.userId, vote: kind, at: ports.now(), ...turn };
    await ports.feedback.put(vote);
    if (kind === 'down' && ports.askWhy) {
        await ports.askWhy(vote);
    }
    return 'recorded';
}
