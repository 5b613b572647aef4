/*
 * v0.18.2 runs take the session's history from the app: the transcript of the session the
 * turn's event saw, read beside the session's own read, so the run request waits for one round trip, not two.
 */
import { chooseTransport } from '../hermes/capabilities';
import { HermesClient } from '../hermes/client';
import { historyOf, TranscriptRow, withoutCuts } from '../sessions/exchanges';
import { SessionRecord } from '../sessions/sessionRecord';
import { TickPorts } from './tickPorts';
import { TurnRecord, hermesFor } from './turnRecord';

/**
 * The v0.18.2 transcript of the session its event saw, read as the turn is sent (its claim is
 * made: no turn of its session is ahead), beside its session's read. Undefined when Hermes
 * loads its own history, for the chat transport, after a reset (the old session is ended
 * first), or when the read fails (the transcript is then read again, as without it).
 */
export function transcriptSeen(rec: TurnRecord, ports: TickPorts): Promise<Transcript | undefined> | undefined {
    const seen = rec.sessionSeen;
    if (!seen || rec.endPrevious) {
        return undefined;
    }
    const read = (async () => {
        const caps = await ports.capabilities();
        if (caps.runsLoadHistory || chooseTransport(ports.config.hermesTransport, caps) !== 'runs') {
            return undefined;
        }
        return { sessionId: seen, messages: await hermesFor(rec, ports.hermes).sessionMessages(seen) };
    })();
    return read.catch(() => undefined);
}

type Transcript = { sessionId: string; messages: TranscriptRow[] };

/**
 * The history a run of the session is sent: its transcript (the one read beside the session when
 * it is that session's, else read now) without the exchanges undone or retried (`cut`).
 */
export async function transcriptOf(
    session: Pick<SessionRecord, 'sessionId' | 'cut'>,
    early: Promise<Transcript | undefined> | undefined,
    hermes: HermesClient,
): Promise<Array<{ role: string; content: string }>> {
    const seen = await early;
    const rows = seen?.sessionId === session.sessionId ? seen.messages : await hermes.sessionMessages(session.sessionId);
    return historyOf(withoutCuts(rows, session.cut, session.sessionId));
}
