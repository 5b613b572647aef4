import { BACKLOG_LINE, insertBlock, renderOldestFirst } from '../context/contextBlock';
import { frontierAfter, frontierWithoutBlock, threadSlice } from '../context/frontier';
import { SessionRecord } from '../sessions/sessionRecord';
import { ContextMessage } from '../context/contextMessage';
import { pickContextFiles } from '../files/contextFiles';
import { TickPorts } from './tickPorts';
import { describe, TurnRecord } from './turnRecord';

/** The thread of a room thread turn, up to its question (one read). */
export function readThread(rec: TurnRecord, ports: Pick<TickPorts, 'history'>): Promise<ContextMessage[]> {
    return ports.history.thread(rec.threadId as string, { id: rec.id, createdAt: new Date(rec.createdAt) });
}

/**
 * Gives a room thread turn its context when it reaches Hermes: the messages after the
 * session's frontier that the session does not hold, oldest first, capped (context/frontier.ts).
 * Done here rather than when the message arrived because turns of a session reach Hermes
 * one at a time: the turn ahead has moved the frontier by now, so two questions asked close
 * together never hand over the same lines. Costs the one thread read the turn always made,
 * beside the session record `submit` reads anyway, which brings the frontier. With context_files, the
 * files of the messages handed over join the turn's context files (read in turnFiles.ts).
 */
export async function addThreadContext(
    rec: TurnRecord,
    session: SessionRecord,
    ports: TickPorts,
    /** The thread's read, started beside the session's (readThread). */
    read: Promise<ContextMessage[]> = readThread(rec, ports),
): Promise<void> {
    rec.threadContext = undefined;
    const trigger = { at: rec.postedAt ?? rec.createdAt, id: rec.id };
    try {
        const thread = await read;
        const slice = threadSlice({
            thread,
            trigger,
            frontier: session.frontier,
            sessionStarted: session.turns > 0,
            botId: ports.botId,
            max: ports.config.historyMaxMessages,
        });
        const rendered = renderOldestFirst(slice.messages, {
            timeZone: ports.config.timezone,
            botId: ports.botId,
            allowedUserIds: ports.config.allowedUserIds,
        });
        const left = slice.candidates.length - rendered.taken;
        if (ports.config.contextFiles > 0) {
            // After the quoted message's, picked when the question was asked: the files of what this block hands over.
            rec.contextFiles = pickContextFiles({
                messages: slice.candidates.slice(0, rendered.taken),
                max: ports.config.contextFiles,
                botId: ports.botId,
                exclude: rec.files,
                picked: rec.contextFiles,
            });
        }
        rec.user = insertBlock(rec.user, left > 0 ? [...rendered.lines, BACKLOG_LINE(left)] : rendered.lines);
        rec.frontier = {
            next: frontierAfter(session.frontier, slice.candidates.slice(0, rendered.taken), left, trigger),
            withoutBlock: frontierWithoutBlock(session.frontier, trigger),
        };
        if (slice.blind) {
            ports.log.info(`Thread ${rec.threadId}: no frontier stored for its session; one blind pass hands over the bot's own messages.`);
        }
    } catch (error) {
        // Nothing of the thread reaches Hermes this turn: the frontier holds only the trigger, the rest follows next turn.
        ports.log.warn(`Thread of ${describe(rec)} could not be read, answering without context: ${error instanceof Error ? error.message : String(error)}`);
        rec.frontier = { next: frontierWithoutBlock(session.frontier, trigger) };
    }
}
