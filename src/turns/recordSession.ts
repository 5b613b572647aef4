import { holdAnswers } from '../context/frontier';
import { HermesSessions } from '../hermes/sessionsApi';
import { autoTitle } from '../sessions/titles';
import { ExchangeFacts, Usage, usageDay } from '../usage/usage';
import { inputPrint } from '../sessions/exchanges';
import { isAcceptableSessionId } from '../sessions/sessionRecord';
import { SessionRecord } from '../sessions/sessionRecord';
import { TickPorts } from './tickPorts';
import { describe, hermesFor, questionOf, TurnRecord } from './turnRecord';

/*
 * What an answered turn teaches the conversation's session record: the session Hermes used, who
 * asked (the session index, for listing and search), a pending or automatic title, the usage row.
 */

/** People remembered per session record (each one was written to the session index). */
const MAX_ASKERS = 200;

/**
 * Hermes answered: the session record learns what it must (a rotated id, its first turn, a
 * thread's new frontier with the answer's parts held), in one write, and only if one of those changed.
 */
export async function recordSession(rec: TurnRecord, returnedId: string | undefined, ports: TickPorts, before: SessionRecord | undefined): Promise<void> {
    if (before && !sessionLearns(rec, before, returnedId, ports)) {
        return;
    }
    // A person's first turn in the session is indexed beside the session's read, on what the turn
    // found (the index write is idempotent): the session is saved only after both, so a failed
    // index write still leaves it unsaved and the retry indexes the asker.
    const expected = before ? askerIn(rec, before, returnedId) : undefined;
    const indexed = expected?.newAsker ? indexAsker(rec, expected, ports) : undefined;
    indexed?.catch(() => undefined);
    const session = await ports.sessions.get(rec.sessionKey);
    await indexed;
    if (rec.sessionId && rec.sessionId !== session.sessionId) {
        // /new or /reset while the turn ran: the new session holds none of this turn.
        return;
    }
    const found = askerIn(rec, session, returnedId);
    const { rotated, sessionId, askers, newAsker, autoTitleNow } = found;
    const reached = rec.trimmed ? rec.frontier?.withoutBlock : rec.frontier?.next;
    const frontier = reached ? holdAnswers(reached, rec.delivery?.posted ?? [], ports.now()) : session.frontier;
    if (newAsker && !(expected?.newAsker && expected.sessionId === sessionId && expected.autoTitleNow === autoTitleNow)) {
        // The session changed while the turn ran (rare): indexed on what it is now.
        await indexAsker(rec, found, ports);
    }
    if (session.pendingTitle) {
        await applyPendingTitle(rec, sessionId, session.pendingTitle, ports);
    }
    const keepActivity = ports.config.sessionReset !== 'none';
    if (rotated || session.turns === 0 || reached || newAsker || keepActivity || session.recap || session.pendingTitle) {
        await ports.sessions.save({
            ...session,
            sessionId,
            turns: session.turns + 1,
            frontier,
            askers: newAsker ? [...askers, rec.askerId].slice(-MAX_ASKERS) : askers,
            autoTitle: autoTitleNow,
            lastActiveAt: keepActivity ? ports.now() : undefined,
            recap: undefined,
            pendingTitle: undefined,
        });
    }
}

/** What a session record tells of the turn's asker: the id to record it under (Hermes may have rotated it), and whether they are new to it. */
function askerIn(rec: TurnRecord, session: SessionRecord, returnedId: string | undefined) {
    const rotated = Boolean(returnedId && returnedId !== session.sessionId && isAcceptableSessionId(returnedId));
    const sessionId = rotated ? (returnedId as string) : session.sessionId;
    // A rotated id is a new session in Hermes's list: its askers are recorded anew.
    const askers = rotated ? [] : (session.askers ?? []);
    // A record whose save was cut between its head and its payload (its process killed) has no text: no title from it.
    const titled = typeof rec.user === 'string' ? autoTitle(rec.user) : undefined;
    return { rotated, sessionId, askers, newAsker: !askers.includes(rec.askerId), autoTitleNow: session.autoTitle ?? titled };
}

/** The asker as an owner of the session (the session commands list what a person owns). */
async function indexAsker(rec: TurnRecord, found: { sessionId: string; autoTitleNow: string | undefined }, ports: TickPorts): Promise<void> {
    await ports.index?.add(rec.askerId, {
        sessionId: found.sessionId,
        key: rec.sessionKey,
        roomId: rec.roomId,
        roomType: rec.roomType,
        roomName: rec.roomName,
        threadId: rec.threadId,
        kind: rec.kind,
        startedAt: ports.now(),
        autoTitle: found.autoTitleNow,
    });
}

/**
 * Whether the session record, as the turn found it, would change: read again (and written) only
 * then. Something set while the turn ran (a title asked for meanwhile) waits for the next turn.
 */
function sessionLearns(rec: TurnRecord, session: SessionRecord, returnedId: string | undefined, ports: TickPorts): boolean {
    const { rotated, newAsker } = askerIn(rec, session, returnedId);
    const reached = rec.trimmed ? rec.frontier?.withoutBlock : rec.frontier?.next;
    return (
        rotated || session.turns === 0 || Boolean(reached) || newAsker || ports.config.sessionReset !== 'none' || Boolean(session.recap || session.pendingTitle)
    );
}

/** The turn counts against the asker's and the room's daily totals (usage/), if answered. A failed write costs the count (and the lasting receipt), never the answer. */
export async function recordUsage(rec: TurnRecord, usage: Usage | undefined, answered: boolean, ports: TickPorts): Promise<void> {
    await ports.usage
        ?.record(usageDay(ports.now(), ports.config.timezone), rec.askerId, rec.roomId, usage, {
            receipt: rec.id,
            answered,
            // The posted parts of a public answer, which people can vote on (feedback/), with what a vote records.
            ...(answered && rec.delivery?.kind === 'answer' && !rec.privateTo
                ? { answers: rec.delivery.posted, sessionId: rec.sessionId, runId: rec.runId, exchange: exchangeFacts(rec, ports.now()) }
                : {}),
        })
        .catch((e: unknown) => ports.log.warn(`Usage of ${describe(rec)} could not be recorded: ${e instanceof Error ? e.message : String(e)}`));
}

/** What retry and undo find a conversation's answered turn by (a scheduled prompt's run is no exchange of a conversation). */
function exchangeFacts(rec: TurnRecord, at: number): ExchangeFacts | undefined {
    if (rec.cron || typeof rec.user !== 'string') {
        return undefined;
    }
    return { key: rec.sessionKey, question: questionOf(rec), askerUsername: rec.askerUsername, threadId: rec.threadId, print: inputPrint(rec.user), at };
}

/** `/hermes title` before the session existed: Hermes has it now. A title taken meanwhile is logged, not retried. */
async function applyPendingTitle(rec: TurnRecord, sessionId: string, title: string, ports: TickPorts): Promise<void> {
    try {
        const result = await new HermesSessions(hermesFor(rec, ports.hermes)).setTitle(sessionId, title);
        if (result !== 'set') {
            ports.log.warn(
                `The title asked for session ${sessionId} could not be set (${result === 'taken' ? 'another session has it' : 'Hermes has no such session'}).`,
            );
        }
    } catch (error) {
        ports.log.warn(`The title asked for session ${sessionId} could not be set: ${error instanceof Error ? error.message : String(error)}`);
    }
}
