/*
 * A submission's result on its way to the tick that takes it: the wake-up job a stream's news
 * becomes, and the hand-over of a result no tick of this process took (another instance's did).
 */
import { HermesError } from '../hermes/errors';
import { PROCESS_ID } from './processId';
import { TickPorts } from './tickPorts';
import { TurnRecord } from './turnRecord';

/**
 * How long a finished submission waits for a tick of this process before it is handed over to
 * the others. Its wake-up job runs on either instance within milliseconds of being scheduled;
 * one that ran elsewhere found nothing to take there, and the turn would wait for its next chain
 * tick (2 s: a backlog after a restart drained one turn per 2–4 s, npm run chaos). Short, so
 * the hand-over and its own wake-up come first; on one instance it costs three calls only when
 * this process's scheduler was too busy to run the wake-up by then.
 */
const HAND_OVER_AFTER_MS = 250;

/** The waker of a turn whose steps run in scheduler jobs: its stream's news becomes a wake-up job. */
export function wakeByJob(rec: Pick<TurnRecord, 'id' | 'chain'>, ports: Pick<TickPorts, 'schedule'>): () => void {
    return () => {
        ports.schedule({ turnId: rec.id, chain: rec.chain, wake: true }, 0).catch(() => undefined);
    };
}

/**
 * When no tick of the turn in this process has taken the submission's result after a while
 * (its wake-up ran on another instance), the result is written for the other instances and
 * the turn woken again: whichever instance runs that wake-up takes it (this one from memory,
 * another from the record). In the background, after the call that started it returned:
 * a write and a job, never a log line (the engine returns an app's log lines with the call
 * that wrote them).
 */
export function handOver(
    rec: Pick<TurnRecord, 'id' | 'attempts' | 'chain'>,
    ports: TickPorts,
): { afterMs: number; then: (s: { runId?: string; error?: unknown }) => void } | undefined {
    const { id: turnId, attempts: attempt } = rec;
    const record = ports.store.recordSent?.bind(ports.store);
    if (!record) {
        return undefined;
    }
    return {
        afterMs: HAND_OVER_AFTER_MS,
        then: (s) => {
            const e = s.error;
            const error =
                e instanceof HermesError
                    ? { kind: e.kind, detail: e.detail, status: e.status, retryAfterSeconds: e.retryAfterSeconds, code: e.code }
                    : undefined;
            if (e && !error) {
                return; // not Hermes's answer (a bug here): the claim lapses and the turn is sent again
            }
            (s as { handedOver?: boolean }).handedOver = true;
            // This process reads the run's events (it subscribed as Hermes named the run): the taker leaves them to it.
            record(turnId, { attempt, runId: s.runId, error, holder: s.runId ? PROCESS_ID : undefined })
                .then(() => wakeByJob(rec, ports)())
                .catch(() => undefined);
        },
    };
}

/**
 * One sending of a turn: its next attempt on its chain. Two ticks that read the same record
 * share it; every later sending has another (a sent turn's record counts the attempt; the sweep
 * gives a turn it restarts a new chain, so a sender that died between its claim and its save
 * leaves no key behind that nobody can win).
 */
export function sendKey(rec: Pick<TurnRecord, 'id' | 'attempts'> & { chain?: string }): string {
    return `${rec.id}:${rec.attempts + 1}:${rec.chain ?? ''}`;
}
