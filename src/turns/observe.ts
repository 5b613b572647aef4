import { RunStatus } from '../hermes/runs';
import { Usage } from '../usage/usage';
import { LiveTurn } from '../hermes/liveTurn';
import { MessageKey } from '../i18n/messages';
import { TickPorts } from './tickPorts';
import { describe, hermesFor, TurnRecord } from './turnRecord';
import { streamHeldElsewhere } from './owner';
import { processMemory } from './processMemory';

export type Outcome =
    | { kind: 'answer'; text: string; sessionId?: string; incomplete?: boolean; usage?: Usage }
    | { kind: 'stopped'; by: string }
    | { kind: 'failed'; failure: MessageKey; detail: string };

/** What one look at a running turn saw: how it ended, or what is going on. */
export interface Seen {
    outcome?: Outcome;
    live?: LiveTurn;
    status?: RunStatus;
}

/** A run is polled at least this often even while its event stream is open here. */
const POLL_EVERY_MS = 5_000;
/** When the poll sees the end first, the stream gets this long to deliver its last frames. */
const STREAM_CATCH_UP_MS = 2_000;

/** Per process and run: when the poll first saw the run ended while the stream had not. */
const endSeenAt = processMemory.map<string, number>('observe.endSeenAt');
const polledAt = processMemory.map<string, number>('observe.polledAt');

/**
 * Looks at a running turn once, without waiting: the stream this process holds, and for runs
 * a status poll when the stream cannot tell (it ended, it is not here, or now and then).
 */
export async function observe(rec: TurnRecord, ports: TickPorts): Promise<Seen> {
    const live = ports.live.get(rec.id);
    if (rec.deadlineAt && ports.now() >= rec.deadlineAt) {
        return { outcome: await giveUp(rec, ports) };
    }
    if (rec.transport === 'chat') {
        return observeChat(rec, live, ports);
    }
    let status: RunStatus | undefined;
    const lastPoll = polledAt.get(rec.id) ?? 0;
    // The stream's own end event settles the run without a poll.
    const streamSettled = Boolean(live?.terminal);
    if (rec.runId && !streamSettled && (!live || live.done || (live.approval && !live.approvalResolution) || ports.now() - lastPoll >= POLL_EVERY_MS)) {
        status = await hermesFor(rec, ports.hermes).runStatus(rec.runId);
        polledAt.set(rec.id, ports.now());
    }
    const ended = status && ['completed', 'failed', 'cancelled', 'interrupted'].includes(status.status);
    if (ended && live && !live.done) {
        // The poll can see the end before the stream has delivered its last frames: give it a moment, without waiting here.
        const first = endSeenAt.get(rec.id) ?? ports.now();
        endSeenAt.set(rec.id, first);
        if (ports.now() - first < STREAM_CATCH_UP_MS) {
            return { live, status: { ...status, status: 'running' } as RunStatus };
        }
    }
    if (status?.status === 'cancelled' || status?.status === 'stopping' || live?.terminal === 'cancelled') {
        // A stop is its own record: was it someone's /hermes stop?
        const by = await ports.store.stopRequest(rec.id);
        if (by) {
            return { outcome: { kind: 'stopped', by } };
        }
    }
    const outcome = settleRun(live, status);
    if (outcome) {
        forget(rec.id);
    }
    return { outcome, live, status };
}

async function observeChat(rec: TurnRecord, live: LiveTurn | undefined, ports: TickPorts): Promise<Seen> {
    if (!live && streamHeldElsewhere(rec, ports.now())) {
        // Another app process (another server instance) holds the connection and is alive.
        return {};
    }
    if (!live) {
        // Hermes interrupts a chat turn when its connection closes; the connection lived in
        // the app process that started it. Asking again would run the agent a second time.
        const by = await ports.store.stopRequest(rec.id);
        if (by) {
            return { outcome: { kind: 'stopped', by } };
        }
        ports.log.warn(`Turn ${describe(rec)} lost its connection to Hermes (the app process restarted); the asker is told, the turn is not run again.`);
        return { outcome: { kind: 'failed', failure: 'notice_lost', detail: 'the chat connection was lost with the app process' } };
    }
    if (!live.done) {
        return { live };
    }
    const by = await ports.store.stopRequest(rec.id);
    if (by) {
        return { outcome: { kind: 'stopped', by }, live };
    }
    if (live.error) {
        throw live.error;
    }
    const answer = live.answer;
    const incomplete = answer?.finishReason === 'length' || answer?.finishReason === 'error' || Boolean(answer?.truncated || live.truncated);
    return { outcome: { kind: 'answer', text: answer?.text ?? '', sessionId: answer?.sessionId, incomplete, usage: answer?.usage }, live };
}

/** Reads the end of a run from its stream or its polled status. */
function settleRun(live: LiveTurn | undefined, status: RunStatus | undefined): Outcome | undefined {
    const state = status?.status ?? live?.terminal;
    const truncated = Boolean(live?.truncated || status?.truncated);
    switch (state) {
        case 'completed':
            return {
                kind: 'answer',
                text: status?.output ?? live?.output ?? live?.text ?? '',
                incomplete: truncated || undefined,
                usage: status?.usage ?? live?.usage,
            };
        case 'cancelled':
            return { kind: 'failed', failure: 'notice_incomplete', detail: 'run cancelled by Hermes' };
        case 'failed':
        case 'interrupted': {
            const partial = live?.text ?? '';
            const detail = `run ${state}: ${status?.error ?? (typeof live?.error === 'string' ? live.error : 'no reason given')}`;
            return partial.trim() ? { kind: 'answer', text: partial, incomplete: true } : { kind: 'failed', failure: 'notice_incomplete', detail };
        }
        default:
            return undefined;
    }
}

/** The turn deadline passed: stop the agent, free the session, tell the asker. */
async function giveUp(rec: TurnRecord, ports: TickPorts): Promise<Outcome> {
    if (rec.runId) {
        await hermesFor(rec, ports.hermes)
            .stopRun(rec.runId)
            .catch((e: unknown) => ports.log.warn(`Stopping run ${rec.runId} at the deadline failed: ${e instanceof Error ? e.message : String(e)}`));
    }
    ports.live.end(rec.id);
    forget(rec.id);
    const minutes = Math.round(((rec.deadlineAt ?? 0) - (rec.startedAt ?? 0)) / 60_000);
    return { kind: 'failed', failure: 'notice_turn-timeout', detail: `turn deadline of ${minutes} min passed` };
}

function forget(turnId: string): void {
    endSeenAt.delete(turnId);
    polledAt.delete(turnId);
}
