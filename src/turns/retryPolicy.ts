import { trimContext } from '../context/trimContext';
import { HermesError } from '../hermes/errors';
import { MessageKey } from '../i18n/messages';
import { chainOn } from './chain';
import { move } from './machine';
import { finish } from './finish';
import { TickPorts } from './tickPorts';
import { describe, TurnRecord } from './turnRecord';
import { openTickets } from './turnStore';
import { processMemory } from './processMemory';

/** 429/503 are retried for this long at most, then the asker is told. */
export const RETRY_WINDOW_MS = 60_000;
/** A Retry-After longer than this is not honoured as is: a session is not parked for a day. */
export const MAX_RETRY_WAIT_MS = 30_000;
const MAX_ATTEMPTS = 5;
/** A run's status poll that fails (Hermes briefly away) is tried again on later ticks for this long. */
export const POLL_FAILURE_GRACE_MS = 30_000;
const TRANSIENT = new Set(['unreachable', 'timeout', 'rate-limited', 'draining', 'server-error']);

/** Per process and turn: since when a running turn's polls have been failing. */
const failingSince = processMemory.map<string, number>('retryPolicy.failingSince');

/** A successful look at a turn ends its failing streak. */
export function pollSucceeded(turnId: string): void {
    failingSince.delete(turnId);
}

/**
 * What a failure means for the turn: busy/draining before the turn reached Hermes is
 * retried within the window (busy: as long as Hermes is running other turns of the app); too large is retried once with less context; everything else
 * ends the turn with one notice where the answer would have gone.
 */
export async function onError(rec: TurnRecord, error: unknown, ports: TickPorts): Promise<void> {
    const e = error instanceof HermesError ? error : undefined;
    const inWindow = ports.now() - rec.createdAt < RETRY_WINDOW_MS && rec.attempts < MAX_ATTEMPTS;
    const next = { turnId: rec.id, chain: rec.chain };
    if (
        e &&
        (e.kind === 'rate-limited' || e.kind === 'draining') &&
        rec.phase === 'queued' &&
        (inWindow || (e.kind === 'rate-limited' && (await othersAtHermes(rec, ports))))
    ) {
        const wait = Math.min(MAX_RETRY_WAIT_MS, Math.max(1, e.retryAfterSeconds ?? 1) * 1000);
        move(rec, { kind: 'retry', at: ports.now() + wait });
        rec.tickAt = ports.now();
        await ports.store.save(rec);
        ports.log.warn(
            `Hermes is ${e.kind === 'rate-limited' ? 'busy' : 'draining'} (${e.detail}); turn ${describe(rec)} retries in ${wait} ms (attempt ${rec.attempts}).`,
        );
        await chainOn(next, wait, ports);
        return;
    }
    if (e && rec.phase === 'running' && rec.transport === 'runs' && TRANSIENT.has(e.kind)) {
        // The run goes on in Hermes; the chain's next tick looks again.
        const since = failingSince.get(rec.id) ?? ports.now();
        failingSince.set(rec.id, since);
        if (ports.now() - since < POLL_FAILURE_GRACE_MS) {
            ports.log.warn(`Polling run ${rec.runId} of ${describe(rec)} failed (${e.detail}); trying again.`);
            return;
        }
    }
    failingSince.delete(rec.id);
    if (e && e.kind === 'too-large' && !rec.trimmed && rec.phase === 'queued') {
        rec.trimmed = true;
        rec.user = trimContext(rec.user);
        rec.tickAt = ports.now();
        await ports.store.save(rec);
        ports.log.warn(`Hermes refused turn ${describe(rec)} as too large (${e.detail}); retrying once with less history.`);
        await chainOn(next, 0, ports);
        return;
    }
    const failure = (e ? `notice_${e.kind}` : 'notice_server-error') as MessageKey;
    await finish(rec, { kind: 'failed', failure, detail: e ? e.message : describeError(error) }, ports);
}

/**
 * Hermes is busy with this app's own turns (a run of another of them is open there, on any
 * instance): its 429 is back-pressure, and the turn waits its turn however long the queue is,
 * instead of ending in a notice when its minute is up. Its own process's streams, then one read
 * of the tickets, only here.
 */
async function othersAtHermes(rec: TurnRecord, ports: TickPorts): Promise<boolean> {
    // This process's own open streams first: a quick turn's run is written to its record only
    // after half a second, so the tickets alone miss runs that just started (2 notices in one
    // of two 300-mention loads with Hermes allowing 4 runs, when the runs started together).
    if (ports.live.othersOpen(rec.id)) {
        return true;
    }
    const open = await openTickets(ports.store);
    return open.some((o) => o.id !== rec.id && Boolean(o.runId));
}

function describeError(error: unknown): string {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
