import { HermesError } from '../hermes/errors';
import { chooseTransport } from '../hermes/capabilities';
import { HermesSessions } from '../hermes/sessionsApi';
import { heldElsewhere, PROCESS_ID } from './processId';
import { move } from './machine';
import { addThreadContext, readThread } from './threadContext';
import { rebuildText } from './rebuildText';
import { turnImages } from './turnFiles';
import { HermesClient } from '../hermes/client';
import { ImagePart } from '../hermes/content';

/**
 * A turn's images between the tick that reads them and the tick that starts its chat stream
 * (never persisted). A process that restarts in between sends that turn without them and says so.
 */
const pendingImages = new Map<string, ImagePart[] | undefined>();

/** How soon a tick that found another instance sending the turn asks for another look. */
const HAND_BACK_MS = 250;
/**
 * How long a finished submission waits for a tick of this process before it is handed over to
 * the others. Its wake-up job runs on either instance within milliseconds of being scheduled;
 * one that ran elsewhere found nothing to take there, and the turn would wait for its next chain
 * tick (2 s: a backlog after a restart drained one turn per 2–4 s, npm run chaos). Short, so
 * the hand-over and its own wake-up come first; on one instance it costs three calls only when
 * this process's scheduler was too busy to run the wake-up by then.
 */
const HAND_OVER_AFTER_MS = 250;

function imagesFor(rec: TurnRecord, ports: TickPorts): ImagePart[] | undefined {
    if ((rec.files?.length || rec.contextFiles?.files.length) && !pendingImages.has(rec.id)) {
        ports.log.warn(`Turn ${describe(rec)} is sent without its images: the app process restarted while it was being sent.`);
    }
    return pendingImages.get(rec.id);
}
import { TickJob, TickPorts } from './tickPorts';
import { quickSignal } from './quick';
import { chainEnded } from './chain';
import { finish } from './finish';
import { rememberSession } from './sessionSnapshot';
import { describe, hermesFor, sendingClaim, TurnRecord } from './turnRecord';

/**
 * Hands a queued turn to Hermes in two ticks, so no tick waits on Hermes: this one starts
 * the request (a run's creation, with the transcript a v0.18.2 server needs) in the
 * background and returns; when Hermes has answered, the turn is woken and `submitted`
 * records the run and starts watching it. Returns true once the turn is running.
 */
export async function submit(rec: TurnRecord, ports: TickPorts, job?: Pick<TickJob, 'wake' | 'quick' | 'session'>, fresh = false): Promise<boolean> {
    const pending = ports.live.submission(rec.id);
    if (!pending) {
        const other = rec.submitting;
        if (fresh) {
            // Stored a moment ago as sent by this process (freshClaim.ts): its claim is in place.
            await start(rec, ports, job, true);
            return false;
        }
        if (other && heldElsewhere(other, ports.now())) {
            // Another instance is sending it and holds the answer in its memory: a tick there records
            // the run, or it hands the result over (handOver). A chain tick that landed here asks for
            // one more look soon, which the scheduler may give to that instance (a wake-up does not
            // ask again: no ping-pong).
            if (await takeOver(rec, ports)) {
                return true;
            }
            if (!job?.wake) {
                await ports.schedule({ turnId: rec.id, chain: rec.chain, wake: true }, HAND_BACK_MS).catch(() => undefined);
            }
            return false;
        }
        // Its sender is gone (another process whose claim lapsed, or this one before a restart).
        if (other && (await answeredBefore(rec, other, ports))) {
            return true;
        }
        await start(rec, ports, job);
        return false;
    }
    if (!pending.done) {
        return false;
    }
    ports.live.forgetSubmission(rec.id);
    rec.submitting = undefined;
    if (pending.handedOver) {
        await ports.store.dropSent?.(rec.id);
    }
    if (pending.error) {
        throw pending.error;
    }
    await submitted(rec, pending.runId, ports, job?.quick);
    return true;
}

async function start(rec: TurnRecord, ports: TickPorts, job?: Pick<TickJob, 'quick' | 'session'>, fresh = false): Promise<void> {
    // A thread turn's thread is read beside its session (the frontier decides only what of it to hand over).
    const thread = rec.threadContext === 'pending' ? readThread(rec, ports) : undefined;
    // Handled at once (an unhandled rejection ends the app's process); addThreadContext raises it.
    thread?.catch(() => undefined);
    // The event's own read of a moment ago, unless the turn reads its thread (its frontier must be fresh).
    const fromEvent = rec.threadContext !== 'pending' ? job?.session : undefined;
    // A turn sent after its event reads its session now: the transcript its event's session names
    // is read beside it (one round trip less before the run), kept only if the session still is that one.
    const early = fromEvent ? undefined : transcriptSeen(rec, ports);
    // Its record says this process sends it (a fresh claim), or two instances' ticks may both be
    // here: each woke it on a read of the tickets that came before the other's write (a waiter
    // woken by turns ending on both). Claimed first-stored-wins beside the session's read, before
    // anything is written or sent: v0.18.2 never reads Idempotency-Key on /v1/runs.
    const claimed = fresh ? true : ports.claimSend(sendKey(rec));
    const [session, mine] = await Promise.all([fromEvent ?? ports.sessions.get(rec.sessionKey), claimed]);
    if (!mine) {
        ports.log.debug(`Turn ${describe(rec)} is being sent by another app process (its claim came first); left to it.`);
        // Its chain tick, scheduled before this step, would be a second chain of the turn: the sender's goes on.
        await chainEnded(rec.id, ports);
        return;
    }
    if (typeof rec.user !== 'string' || typeof rec.system !== 'string') {
        // Stored without its text (rebuildText.ts: the process that held it died before the turn's next save).
        if (!(await rebuildText(rec, session, ports))) {
            ports.log.warn(`Turn ${describe(rec)} lost its text with the app process and its question can no longer be read; the asker is told.`);
            return finish(rec, { kind: 'failed', failure: 'notice_lost', detail: 'the turn was stored without its text' }, ports);
        }
        ports.log.info(`Turn ${describe(rec)} was stored without its text by a process that is gone; its text was built again.`);
    }
    const caps = await ports.capabilities();
    const transport = chooseTransport(ports.config.hermesTransport, caps);
    rememberSession(rec.id, session);
    if (thread) {
        await addThreadContext(rec, session, ports, thread);
    }
    rec.attempts += 1;
    rec.transport = transport;
    rec.sessionId = session.sessionId;
    const images = await turnImages(rec, caps, ports);
    pendingImages.set(rec.id, images);
    ports.live.onWake(rec.id, job?.quick ? () => quickSignal(rec.id) : wakeByJob(rec, ports));
    if (!fresh) {
        rec.submitting = sendingClaim(ports.now(), ports.config.hermesTimeoutSeconds);
        // It moves now: a turn that waited long for its slot must not look lost to the sweep while it is being sent.
        rec.tickAt = ports.now();
    }
    // Saved: the attempt, transport and session id are the tick's that completes the submission
    // too. A quick turn's save travels beside its request (one round trip less before Hermes) and
    // is awaited before this returns, so no later write of the turn can be overtaken by it. A
    // fresh claim is not saved: its record already says this process sends it, and what else
    // changed lives in this call until the turn's next save (a process that dies before then
    // leaves the turn to be sent again once the claim lapses, as any sender's death does).
    const saved = fresh ? Promise.resolve() : ports.store.save(rec);
    // Handled at once (an unhandled rejection ends the app's process); the await below raises it.
    saved.catch(() => undefined);
    if (!job?.quick) {
        await saved;
    }
    // From now on this turn's asker token is the newest of its conversation and of its Hermes
    // session (a resumed transcript holds the tokens of another conversation's turns too): the
    // history endpoint refuses older ones. Turns of a session go one at a time, so the one ahead
    // has ended. With asker_key, two writes: they go beside the transcript read and are done before the request.
    const marked = ports.markNewestToken?.(rec.sessionKey, rec.user, session.sessionId) ?? Promise.resolve();
    // Handled at once (an unhandled rejection ends the app's process); the submission raises it.
    marked.catch(() => undefined);
    const trimmed = rec.trimmed;
    const hermes = hermesFor(rec, ports.hermes);
    const ended = rec.endPrevious;
    ports.live.submit(
        rec.id,
        async () => {
            if (ended) {
                // As the gateway does before a reset: the old session is marked ended in Hermes (its list and prune rely on it).
                await new HermesSessions(hermes)
                    .end(ended, 'session_reset')
                    .catch((e: unknown) => ports.log.warn(`Session ${ended} could not be marked ended: ${e instanceof Error ? e.message : String(e)}`));
            }
            if (transport !== 'runs') {
                await marked;
                return undefined;
            }
            const transcript = caps.runsLoadHistory ? undefined : transcriptOf(session.sessionId, early, hermes);
            let [history] = await Promise.all([transcript, marked]);
            if (history && trimmed) {
                history = history.slice(Math.floor(history.length / 2));
            }
            return hermes.createRun({
                input: rec.user,
                images,
                instructions: rec.system,
                sessionId: session.sessionId,
                sessionKey: rec.sessionKey,
                history,
                idempotencyKey: rec.id,
            });
        },
        handOver(rec, ports),
        transport === 'runs' ? hermes : undefined,
    );
    await saved;
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

/**
 * The v0.18.2 transcript of the session its event saw, read as the turn is sent (its claim is
 * made: no turn of its session is ahead), beside its session's read. Undefined when Hermes
 * loads its own history, for the chat transport, after a reset (the old session is ended
 * first), or when the read fails (the transcript is then read again, as without it).
 */
function transcriptSeen(rec: TurnRecord, ports: TickPorts): Promise<Transcript | undefined> | undefined {
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

type Transcript = { sessionId: string; messages: Array<{ role: string; content: string }> };

/** The session's transcript: the one read beside the session when it is that session's, else read now. */
async function transcriptOf(sessionId: string, early: Promise<Transcript | undefined> | undefined, hermes: HermesClient): Promise<Transcript['messages']> {
    const seen = await early;
    return seen?.sessionId === sessionId ? seen.messages : hermes.sessionMessages(sessionId);
}

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
function handOver(
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
 * How long after its sender started a turn can have been answered without its run written: a
 * quick turn writes its run 0.1 s into it unless Hermes answered by then (tick.ts carryOn), so
 * such an answer is posted within moments of the send; 5 s leaves room for a loaded server.
 */
const UNRECORDED_ANSWER_MS = 5_000;

/**
 * A turn whose sender is gone (its claim lapsed) may have been answered all the same: a quick
 * turn is answered in its event without recording that before its record is removed
 * (tick.ts carryOn). Before it is sent again, the target is read once (only on this path) for
 * the bot's outcome posted within UNRECORDED_ANSWER_MS after the sender's start (never before
 * it: the answer of the turn ahead, which woke this one, came just before): in a channel, the
 * answer quoting this question (any answer without Site_Url, which quotes nothing); in a DM or
 * thread, any answer; a notice by its mark. Not later: a fresh claim is stored before its
 * session's order is read, so a sender that died before taking back a claim that had to wait
 * leaves a start before the answer of the turn ahead of it (npm run chaos: that answer was taken
 * for this turn's, and the turn was never answered).
 * Found: the turn ends as delivered, nothing is sent or posted twice.
 */
async function answeredBefore(rec: TurnRecord, sender: NonNullable<TurnRecord['submitting']>, ports: TickPorts): Promise<boolean> {
    const since = sender.at;
    if (since === undefined || rec.privateTo) {
        return false;
    }
    const quoted = rec.kind === 'room' && !rec.threadId;
    const posted = (await ports.chat.botMessages({ roomId: rec.roomId, threadId: rec.threadId }))
        .filter((m) => m.createdAt >= since && m.createdAt <= since + UNRECORDED_ANSWER_MS)
        .filter((m) => (m.mark ? m.mark.kind === 'notice' && m.mark.turnId === rec.id : !quoted || m.text.includes(rec.id) || !m.text.includes('msg=')))
        .sort((a, b) => a.createdAt - b.createdAt);
    if (posted.length === 0) {
        return false;
    }
    // A DM's or thread's answers quote nothing: whose it is, only Hermes's session can tell.
    const attributed = Boolean(posted[0].mark) || (quoted && posted[0].text.includes(rec.id));
    if (!attributed && !(await questionReachedHermes(rec, ports))) {
        return false;
    }
    rec.submitting = undefined;
    move(rec, {
        kind: 'outcomeFixed',
        delivery: {
            kind: posted[0].mark ? 'notice' : 'answer',
            parts: posted.map((m) => m.text),
            posted: posted.map((m) => m.id),
            startedAt: ports.now(),
            summary: 'was answered before its app process stopped',
        },
    });
    await ports.store.save(rec);
    await finish(
        rec,
        posted[0].mark ? { kind: 'failed', failure: 'notice_lost', detail: 'notice posted before a restart' } : { kind: 'answer', text: posted[0].text },
        ports,
    );
    return true;
}

/**
 * Whether Hermes's session holds this turn's question: a sender whose claim had to wait (the
 * turn ahead's answer came right after) never sent it. One transcript read, only on the
 * answeredBefore path; when it cannot be read, or the question's text is not at hand, the
 * answer found counts, as before.
 */
async function questionReachedHermes(rec: TurnRecord, ports: TickPorts): Promise<boolean> {
    if (typeof rec.user !== 'string') {
        return true;
    }
    try {
        const sessionId = rec.sessionId ?? (await ports.sessions.get(rec.sessionKey)).sessionId;
        const transcript = await hermesFor(rec, ports.hermes).sessionMessages(sessionId);
        return transcript.some((m) => m.role === 'user' && m.content === rec.user);
    } catch {
        return true;
    }
}

/** Another instance's submission, when its sender handed the result over (see handOver): recorded here, or its error raised here. */
async function takeOver(rec: TurnRecord, ports: TickPorts): Promise<boolean> {
    const sent = await ports.store.sent?.(rec.id);
    if (!sent || sent.attempt !== rec.attempts) {
        return false;
    }
    await ports.store.dropSent?.(rec.id);
    rec.submitting = undefined;
    if (sent.error) {
        const e = sent.error;
        throw new HermesError(e.kind, e.detail, e.status, e.retryAfterSeconds, e.code);
    }
    await submitted(rec, sent.runId, ports, false, sent.holder);
    return true;
}

/**
 * Hermes took the turn: saved at once, so a restart from here on follows this run instead of
 * starting another. `holder`: the process reading the run's events (its sender; this one unless
 * another instance handed the result over).
 */
async function submitted(rec: TurnRecord, runId: string | undefined, ports: TickPorts, quick?: boolean, holder: string = PROCESS_ID): Promise<void> {
    const now = ports.now();
    move(rec, { kind: 'started', runId, holder, now, deadlineAt: now + ports.config.turnTimeoutMinutes * 60_000 });
    // A quick turn keeps this in hand (its record says who sends it): written if it outlives its event (tick.ts handOver).
    if (!quick) {
        await ports.store.save(rec);
    }
    if (runId) {
        if (holder === PROCESS_ID) {
            // Already followed since Hermes named the run (liveTurns.ts submit): the same stream, not a second.
            ports.live.followRun(rec.id, hermesFor(rec, ports.hermes), runId);
        }
        // A stop asked for while the run was being created found no run to stop: stop it now.
        if (!quick && (await ports.store.stopRequest(rec.id))) {
            await hermesFor(rec, ports.hermes).stopRun(runId);
        }
    } else {
        ports.live.startChat(rec.id, hermesFor(rec, ports.hermes), {
            sessionId: rec.sessionId as string,
            sessionKey: rec.sessionKey,
            system: rec.system,
            user: rec.user,
            images: imagesFor(rec, ports),
            idempotencyKey: rec.id,
        });
    }
    pendingImages.delete(rec.id);
    ports.log.info(`Turn ${describe(rec)} sent to Hermes (${rec.transport}${runId ? ` ${runId}` : ''}, session ${rec.sessionId}, attempt ${rec.attempts}).`);
}
