import { randomUUID } from 'crypto';
import { approvalButtons, timedOutText } from '../approvals/approvalView';
import { offeredChoices } from '../approvals/approvalPolicy';
import { LiveChatPort, ReplyTarget, ServerInfo } from '../delivery/chatPort';
import { deliver } from '../delivery/deliver';
import { progressText, toolLine } from '../delivery/progressText';
import { firstMessagePrefix } from '../delivery/quote';
import { ApprovalRequest, HermesClient, RunStatus } from '../hermes/client';
import { chooseTransport, HermesCapabilities } from '../hermes/capabilities';
import { HermesError } from '../hermes/errors';
import { LiveTurn, LiveTurns } from '../hermes/liveTurns';
import { t, MessageKey } from '../i18n/messages';
import { LogPort } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { isAcceptableSessionId } from '../sessions/sessionId';
import { SessionPort } from '../sessions/sessionRecord';
import { comesBefore, TurnRecord, TurnStore } from './turnRecord';

/** How long one tick may work: well inside the engine's 30 s per call. */
export const TICK_BUDGET_MS = 5_000;
/**
 * Each tick schedules its successor before it starts working, this long ahead: if the app
 * process dies mid-tick, the scheduler (which lives in the server) still runs the next one.
 */
export const WATCHDOG_MS = TICK_BUDGET_MS + 1_500;
/** Status edits at most this often (every edit re-runs all apps' update hooks). */
export const STATUS_EDIT_MS = 2_000;
/** 429/503 are retried for this long at most, then the asker is told. */
export const RETRY_WINDOW_MS = 60_000;
const MAX_ATTEMPTS = 5;

export interface TickPorts {
    config: HermesConfig;
    hermes: HermesClient;
    capabilities: () => Promise<HermesCapabilities>;
    store: TurnStore;
    sessions: SessionPort;
    chat: LiveChatPort;
    server: (fresh?: boolean) => Promise<ServerInfo>;
    live: LiveTurns;
    /** Runs the next tick of this turn after `delayMs`; resolves with the job's id. */
    schedule: (turnId: string, delayMs: number) => Promise<string | void>;
    /** Cancels a scheduled job (the watchdog of a turn that finished). */
    cancel: (jobId: string) => Promise<void>;
    log: LogPort;
    now: () => number;
}

type Outcome =
    | { kind: 'answer'; text: string; sessionId?: string; incomplete?: boolean }
    | { kind: 'stopped'; by: string }
    | { kind: 'failed'; failure: MessageKey; detail: string };

/** Turns this app process is working on right now: two ticks of one turn never overlap here. */
const busy = new Set<string>();

/**
 * One step of a turn's life: queue → submit → watch → deliver. Each call does at most
 * TICK_BUDGET_MS of work and persists where it got to; the next tick (a scheduler job)
 * carries on, in this process or in another after a restart.
 */
export async function tick(turnId: string, ports: TickPorts): Promise<void> {
    if (busy.has(turnId)) {
        // Another tick of this turn is still working here (it overran): come back, do not drop the chain.
        await ports.schedule(turnId, 1_000);
        return;
    }
    busy.add(turnId);
    try {
        const rec = await ports.store.get(turnId);
        if (!rec || rec.phase === 'done') {
            return;
        }
        await advance(rec, ports);
    } finally {
        busy.delete(turnId);
    }
}

async function advance(rec: TurnRecord, ports: TickPorts): Promise<void> {
    const deadline = ports.now() + TICK_BUDGET_MS;
    let stopTyping: (() => Promise<void>) | undefined;
    try {
        if (rec.phase === 'queued') {
            if (rec.retryAt && rec.retryAt > ports.now()) {
                await ports.schedule(rec.id, rec.retryAt - ports.now());
                return;
            }
            // Turns of one session go one at a time, oldest first.
            const ahead = (await ports.store.openInSession(rec.sessionKey)).filter((o) => o.id !== rec.id && comesBefore(o, rec));
            if (ahead.length > 0) {
                // A turn waiting its turn can be stopped without ever reaching Hermes. (One that goes
                // ahead now is covered by the check right after its run is created.)
                rec.stopRequestedBy = await ports.store.stopRequest(rec.id);
                if (rec.stopRequestedBy) {
                    return finish(rec, { kind: 'stopped', by: rec.stopRequestedBy }, ports);
                }
                await ports.schedule(rec.id, 500);
                return;
            }
            rec.watchdogJob = (await ports.schedule(rec.id, WATCHDOG_MS)) || undefined;
            stopTyping = await ports.chat.typing(rec.roomId).catch(() => undefined);
            await submit(rec, ports);
        } else {
            rec.watchdogJob = (await ports.schedule(rec.id, WATCHDOG_MS)) || undefined;
            stopTyping = await ports.chat.typing(rec.roomId).catch(() => undefined);
        }
        const outcome = await watch(rec, ports, deadline);
        if (!outcome) {
            // Not finished: the successor scheduled above carries on.
            rec.tickAt = ports.now();
            await mergeExternal(rec, ports);
            await ports.store.save(rec);
            return;
        }
        await finish(rec, outcome, ports);
    } catch (error) {
        await onError(rec, error, ports);
    } finally {
        await stopTyping?.().catch(() => undefined);
    }
}

async function submit(rec: TurnRecord, ports: TickPorts): Promise<void> {
    const caps = await ports.capabilities();
    const transport = chooseTransport(ports.config.hermesTransport, caps);
    const session = await ports.sessions.get(rec.sessionKey);
    rec.attempts += 1;
    rec.transport = transport;
    rec.sessionId = session.sessionId;
    if (transport === 'runs') {
        let history = caps.runsLoadHistory ? undefined : await ports.hermes.sessionMessages(session.sessionId);
        if (history && rec.trimmed) {
            history = history.slice(Math.floor(history.length / 2));
        }
        rec.runId = await ports.hermes.createRun({ input: rec.user, instructions: rec.system, sessionId: session.sessionId, sessionKey: rec.sessionKey, history, idempotencyKey: rec.id });
    }
    rec.phase = 'running';
    rec.startedAt = ports.now();
    rec.retryAt = undefined;
    // Saved before anything else: a restart from here on follows this run instead of starting another.
    await ports.store.save(rec);
    if (rec.runId) {
        ports.live.followRun(rec.id, ports.hermes, rec.runId);
        // A stop asked for while the run was being created found no run to stop: stop it now.
        if (await ports.store.stopRequest(rec.id)) {
            await ports.hermes.stopRun(rec.runId);
        }
    } else {
        startChat(rec, ports);
    }
    if (ports.config.progress !== 'off') {
        rec.statusText = progressText(ports.config.progress, []);
        rec.statusMessageId = await ports.chat.post(target(rec), rec.statusText, 'status', { turnId: rec.id });
        rec.statusEditedAt = ports.now();
        await ports.store.save(rec);
    }
    ports.log.info(`Turn ${describe(rec)} sent to Hermes (${transport}${rec.runId ? ` ${rec.runId}` : ''}, session ${rec.sessionId}, attempt ${rec.attempts}).`);
}

function startChat(rec: TurnRecord, ports: TickPorts): LiveTurn {
    return ports.live.startChat(rec.id, ports.hermes, { sessionId: rec.sessionId as string, sessionKey: rec.sessionKey, system: rec.system, user: rec.user, idempotencyKey: rec.id });
}

/** Watches a running turn until it ends or the tick's budget is spent (undefined: not yet). */
async function watch(rec: TurnRecord, ports: TickPorts, deadline: number): Promise<Outcome | undefined> {
    let lastPoll = 0;
    for (;;) {
        let live = ports.live.get(rec.id);
        if ((!live && rec.transport === 'chat') || live?.terminal === 'cancelled') {
            // A stop may have been asked for since this tick read the record.
            rec.stopRequestedBy = await ports.store.stopRequest(rec.id);
            if (rec.stopRequestedBy && rec.transport === 'chat') {
                return { kind: 'stopped', by: rec.stopRequestedBy };
            }
        }
        if (!live && rec.transport === 'chat') {
            // The app process restarted and the connection with it; Hermes de-duplicates by Idempotency-Key.
            ports.log.warn(`Turn ${describe(rec)} lost its connection to Hermes (app restart?); asking again.`);
            live = startChat(rec, ports);
        }
        let status: RunStatus | undefined;
        if (rec.transport === 'runs' && rec.runId && (!live || live.done || live.approval || ports.now() - lastPoll > 2_000)) {
            // Poll when the event stream cannot tell (another process started it, or it ended) and now and then anyway.
            status = await ports.hermes.runStatus(rec.runId);
            lastPoll = ports.now();
        }
        if (status && live && !live.done && ['completed', 'failed', 'cancelled', 'interrupted'].includes(status.status)) {
            // The poll can see the end before the event stream has delivered its last frames; let it catch up.
            for (let waited = 0; !live.done && waited < 2_000; waited += 100) {
                await ports.live.waitForChange(rec.id, 100);
            }
        }
        if (status?.status === 'cancelled' || status?.status === 'stopping' || live?.terminal === 'cancelled') {
            // Was it someone's /hermes stop?
            rec.stopRequestedBy = await ports.store.stopRequest(rec.id);
        }
        const outcome = settle(rec, live, status);
        await showProgress(rec, live, status, ports);
        if (outcome) {
            return outcome;
        }
        if (ports.now() >= deadline) {
            return undefined;
        }
        await ports.live.waitForChange(rec.id, Math.min(1_000, Math.max(0, deadline - ports.now())));
    }
}

/** Reads the end of a turn from the stream or the polled run status. */
function settle(rec: TurnRecord, live: LiveTurn | undefined, status: RunStatus | undefined): Outcome | undefined {
    if (rec.transport === 'chat') {
        if (!live?.done) {
            return undefined;
        }
        if (live.error) {
            throw live.error;
        }
        const answer = live.answer;
        const incomplete = answer?.finishReason === 'length' || answer?.finishReason === 'error';
        return { kind: 'answer', text: answer?.text ?? '', sessionId: answer?.sessionId, incomplete };
    }
    const state = status?.status ?? live?.terminal;
    switch (state) {
        case 'completed':
            return { kind: 'answer', text: status?.output ?? live?.output ?? live?.text ?? '' };
        case 'cancelled':
            return rec.stopRequestedBy ? { kind: 'stopped', by: rec.stopRequestedBy } : { kind: 'failed', failure: 'notice_incomplete', detail: 'run cancelled by Hermes' };
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

/** Keeps the one status message and the approval message in step with what Hermes does. */
async function showProgress(rec: TurnRecord, live: LiveTurn | undefined, status: RunStatus | undefined, ports: TickPorts): Promise<void> {
    if (live) {
        rec.progress = live.tools.map(toolLine);
    }
    const waiting = status?.status === 'waiting_for_approval' || Boolean(live?.approval && !live.approvalResolution);
    if (waiting && !rec.approval && !status?.approval && live && !live.approval && !live.done) {
        // v0.18.2's status has no approval details; they come on the event stream, which may lag the poll.
        for (let waited = 0; !live.approval && !live.done && waited < 2_000; waited += 100) {
            await ports.live.waitForChange(rec.id, 100);
        }
    }
    if (waiting && !rec.approval) {
        const request: ApprovalRequest = status?.approval ?? live?.approval ?? { command: '', description: '', choices: ['once', 'deny'], allowPermanent: false };
        const choices = offeredChoices(request, { isDirect: rec.kind === 'dm' && !rec.threadId, askerId: rec.askerId, adminUserIds: ports.config.adminUserIds });
        const view = approvalButtons(rec.id, request, rec.askerUsername, choices);
        const messageId = await ports.chat.post(target(rec), view.text, 'approval', { turnId: rec.id, buttons: view });
        rec.approval = { messageId, request };
        await ports.store.save(rec);
        ports.log.info(`Turn ${describe(rec)} waits for an approval (choices: ${choices.join(', ')}).`);
    } else if (rec.approval && !rec.approval.decided && !rec.approval.timedOut && !waiting && (status || live?.approvalResolution)) {
        // Decisions are written by the button handler, not this tick: look before calling it a timeout.
        await mergeExternal(rec, ports);
        if (rec.approval.decided || rec.approval.timedOut) {
            return;
        }
        // Hermes moved on without anyone deciding here: its approval timed out.
        rec.approval.timedOut = true;
        await ports.chat.edit(rec.approval.messageId, timedOutText(rec.approval.request), null);
        await ports.store.save(rec);
        ports.log.info(`Approval for turn ${describe(rec)} timed out in Hermes.`);
    }
    if (ports.config.progress === 'off' || !rec.statusMessageId) {
        return;
    }
    const text = progressText(ports.config.progress, rec.progress);
    if (text !== rec.statusText && ports.now() - (rec.statusEditedAt ?? 0) >= STATUS_EDIT_MS) {
        await ports.chat.edit(rec.statusMessageId, text);
        rec.statusText = text;
        rec.statusEditedAt = ports.now();
    }
}

/** Posts the outcome exactly once, removes the status message, ends the turn. */
async function finish(rec: TurnRecord, outcome: Outcome, ports: TickPorts): Promise<void> {
    // Cross-instance guard: take a short lease, re-read, and let a later holder win.
    const token = randomUUID();
    const fresh = await ports.store.get(rec.id);
    if (!fresh || fresh.phase === 'done' || (fresh.lease && fresh.lease.until > ports.now() && fresh.lease.token !== rec.lease?.token)) {
        return;
    }
    rec.approval = fresh.approval ?? rec.approval;
    rec.lease = { token, until: ports.now() + 30_000 };
    const retrying = Boolean(fresh.deliveryStartedAt);
    rec.deliveryStartedAt = fresh.deliveryStartedAt ?? ports.now();
    await ports.store.save(rec);
    if ((await ports.store.get(rec.id))?.lease?.token !== token) {
        return;
    }
    ports.live.end(rec.id);
    // A delivery cut off by a restart must not post again what is already there, and a status
    // message posted just before a restart (its id never saved) must still go. Only then is the place read.
    const statusLost = !rec.statusMessageId && ports.config.progress !== 'off' && rec.startedAt !== undefined;
    const already = retrying || statusLost ? await ports.chat.postedFor(target(rec), rec.id) : [];
    if (!already.some((m) => m.kind === 'answer' || m.kind === 'notice')) {
        await post(rec, outcome, ports);
    }
    const statusIds = new Set([rec.statusMessageId, ...already.filter((m) => m.kind === 'status').map((m) => m.id)].filter((id): id is string => Boolean(id)));
    for (const id of statusIds) {
        await ports.chat.remove(id, rec.roomId).catch((e: unknown) => ports.log.warn(`Status message of turn ${describe(rec)} could not be removed: ${message(e)}`));
    }
    if (rec.approval && !rec.approval.decided && !rec.approval.timedOut) {
        await ports.chat.edit(rec.approval.messageId, timedOutText(rec.approval.request), null).catch(() => undefined);
    }
    if (outcome.kind === 'answer') {
        await recordSession(rec, outcome.sessionId, ports);
    }
    rec.phase = 'done';
    await ports.store.save(rec);
    await ports.store.remove(rec.id);
    await cancelWatchdog(rec, ports);
    // The next turn of this session need not wait for its next poll.
    const next = (await ports.store.openInSession(rec.sessionKey)).filter((o) => o.phase === 'queued').sort((a, b) => (comesBefore(a, b) ? -1 : 1))[0];
    if (next) {
        await ports.schedule(next.id, 0);
    }
    const took = ports.now() - (rec.startedAt ?? rec.createdAt);
    if (outcome.kind === 'failed') {
        ports.log.error(`Hermes turn failed for ${describe(rec)} after ${took} ms: ${outcome.detail}`);
    } else {
        ports.log.info(`Turn ${describe(rec)} ${outcome.kind === 'stopped' ? `stopped by ${outcome.by}` : 'answered'} after ${took} ms.`);
    }
}

async function post(rec: TurnRecord, outcome: Outcome, ports: TickPorts): Promise<void> {
    let text: string;
    let kind: 'answer' | 'notice' = 'notice';
    if (outcome.kind === 'answer') {
        const body = outcome.text.trim() ? outcome.text : t('notice_empty-answer');
        text = outcome.incomplete ? `${body}\n\n${t('notice_incomplete_marker')}` : body;
        kind = 'answer';
    } else if (outcome.kind === 'stopped') {
        text = t('notice_stopped', { by: outcome.by });
    } else {
        text = t(outcome.failure);
    }
    const server = await ports.server();
    await deliver(
        {
            target: target(rec),
            text,
            kind,
            turnId: rec.id,
            maxMessageSize: server.maxMessageSize,
            freshMaxMessageSize: async () => (await ports.server(true)).maxMessageSize,
            firstPrefix: quoteFor(rec, server),
        },
        ports.chat,
        ports.log,
        describe(rec),
    );
}

async function recordSession(rec: TurnRecord, returnedId: string | undefined, ports: TickPorts): Promise<void> {
    const session = await ports.sessions.get(rec.sessionKey);
    const rotated = Boolean(returnedId && returnedId !== session.sessionId && isAcceptableSessionId(returnedId));
    if (rotated || session.turns === 0) {
        await ports.sessions.save({ ...session, sessionId: rotated ? (returnedId as string) : session.sessionId, turns: session.turns + 1 });
    }
}

/** Failures: bounded retries for busy/draining, one trimmed retry for too large, a notice otherwise. */
async function onError(rec: TurnRecord, error: unknown, ports: TickPorts): Promise<void> {
    const e = error instanceof HermesError ? error : undefined;
    const inWindow = ports.now() - rec.createdAt < RETRY_WINDOW_MS && rec.attempts < MAX_ATTEMPTS;
    if (e && (e.kind === 'rate-limited' || e.kind === 'draining') && inWindow && rec.phase === 'queued') {
        const wait = Math.max(1, e.retryAfterSeconds ?? 1) * 1000;
        rec.retryAt = ports.now() + wait;
        await ports.store.save(rec);
        ports.log.warn(`Hermes is ${e.kind === 'rate-limited' ? 'busy' : 'draining'} (${e.detail}); turn ${describe(rec)} retries in ${wait} ms (attempt ${rec.attempts}).`);
        await cancelWatchdog(rec, ports);
        await ports.schedule(rec.id, wait);
        return;
    }
    if (e && e.kind === 'too-large' && !rec.trimmed && rec.phase === 'queued') {
        rec.trimmed = true;
        rec.user = trimContext(rec.user);
        await ports.store.save(rec);
        ports.log.warn(`Hermes refused turn ${describe(rec)} as too large (${e.detail}); retrying once with less history.`);
        await cancelWatchdog(rec, ports);
        await ports.schedule(rec.id, 0);
        return;
    }
    const failure = (e ? `notice_${e.kind}` : 'notice_server-error') as MessageKey;
    await finish(rec, { kind: 'failed', failure, detail: e ? e.message : `${message(error)}` }, ports);
}

/** Takes an approval decision written since this tick read the record, so this tick's save does not undo it. */
async function mergeExternal(rec: TurnRecord, ports: TickPorts): Promise<void> {
    const fresh = await ports.store.get(rec.id);
    if (!fresh) {
        return;
    }
    if (fresh.approval && rec.approval && fresh.approval.messageId === rec.approval.messageId) {
        rec.approval.decided = fresh.approval.decided ?? rec.approval.decided;
        rec.approval.timedOut = fresh.approval.timedOut || rec.approval.timedOut;
    }
}

async function cancelWatchdog(rec: TurnRecord, ports: TickPorts): Promise<void> {
    if (rec.watchdogJob) {
        await ports.cancel(rec.watchdogJob).catch(() => undefined);
        rec.watchdogJob = undefined;
    }
}

/** Keeps the room line and the new message, drops the recent-messages block. */
export function trimContext(user: string): string {
    const at = user.indexOf('\n\n[New message]\n');
    if (at === -1 || !user.startsWith('[Rocket.Chat room_id:')) {
        return user;
    }
    return `${user.split('\n')[0]}${user.slice(at)}`;
}

function target(rec: TurnRecord): ReplyTarget {
    return { roomId: rec.roomId, threadId: rec.threadId };
}

function quoteFor(rec: TurnRecord, server: ServerInfo): string | undefined {
    return firstMessagePrefix({ kind: rec.kind, threadId: rec.threadId, roomType: rec.roomType, roomId: rec.roomId, roomName: rec.roomName, messageId: rec.id, askerUsername: rec.askerUsername }, server);
}

function describe(rec: TurnRecord): string {
    return `message ${rec.id} in room ${rec.roomId}${rec.threadId ? ` thread ${rec.threadId}` : ''}`;
}

function message(error: unknown): string {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
