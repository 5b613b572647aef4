import { dropStream, streamEditMs, streams } from './streamAnswer';
import { answeredBefore } from './answeredBefore';
import { handOver, sendKey, wakeByJob } from './sendResult';
import { transcriptOf, transcriptSeen } from './transcriptSeen';
import { HermesError } from '../hermes/errors';
import { chooseTransport } from '../hermes/capabilities';
import { HermesSessions } from '../hermes/sessionsApi';
import { heldElsewhere, PROCESS_ID } from './processId';
import { move } from './machine';
import { addThreadContext, readThread } from './threadContext';
import { rebuildText } from './rebuildText';
import { turnImages } from './turnFiles';
import { ImagePart } from '../hermes/content';
import { TickJob, TickPorts } from './tickPorts';
import { quickSignal } from './quick';
import { chainEnded } from './chain';
import { finish } from './finish';
import { rememberSession } from './sessionSnapshot';
import { describe, hermesFor, TurnRecord } from './turnRecord';
import { claimAs, endClaim, sendingClaim } from './owner';
import { processMemory } from './processMemory';
import { instructionsFor } from './turn';

/**
 * A turn's images between the tick that reads them and the tick that starts its chat stream
 * (never persisted). A process that restarts in between sends that turn without them and says so.
 */
const pendingImages = processMemory.map<string, ImagePart[] | undefined>('submit.pendingImages');

/** How soon a tick that found another instance sending the turn asks for another look. */
const HAND_BACK_MS = 250;

function imagesFor(rec: TurnRecord, ports: TickPorts): ImagePart[] | undefined {
    if ((rec.files?.length || rec.contextFiles?.files.length) && !pendingImages.has(rec.id)) {
        ports.log.warn(`Turn ${describe(rec)} is sent without its images: the app process restarted while it was being sent.`);
    }
    return pendingImages.get(rec.id);
}

/**
 * Hands a queued turn to Hermes in two ticks, so no tick waits on Hermes: this one starts
 * the request (a run's creation, with the transcript a v0.18.2 server needs) in the
 * background and returns; when Hermes has answered, the turn is woken and `submitted`
 * records the run and starts watching it. Returns true once the turn is running.
 */
export async function submit(rec: TurnRecord, ports: TickPorts, job?: Pick<TickJob, 'wake' | 'quick' | 'session'>, fresh = false): Promise<boolean> {
    const pending = ports.live.submission(rec.id);
    if (!pending) {
        const other = claimAs(rec, 'sending');
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
    endClaim(rec, 'sending');
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
    if (rec.stream) {
        // Words an earlier attempt streamed belong to no answer now.
        await dropStream(rec, ports);
    }
    rec.attempts += 1;
    rec.transport = transport;
    rec.sessionId = session.sessionId;
    const images = await turnImages(rec, caps, ports);
    pendingImages.set(rec.id, images);
    ports.live.onWake(rec.id, job?.quick ? () => quickSignal(rec.id) : wakeByJob(rec, ports));
    if (streams(rec, ports.config)) {
        ports.live.wakeOnText(rec.id, streamEditMs(ports.config), ports.config.statusDelaySeconds * 1000);
    }
    if (!fresh) {
        rec.owner = sendingClaim(ports.now(), ports.config.hermesTimeoutSeconds);
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
            const transcript = caps.runsLoadHistory ? undefined : transcriptOf(session, early, hermes);
            let [history] = await Promise.all([transcript, marked]);
            if (history && trimmed) {
                history = history.slice(Math.floor(history.length / 2));
            }
            return hermes.createRun({
                input: rec.user,
                images,
                instructions: instructionsFor(rec.system, ports.config),
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

/** Another instance's submission, when its sender handed the result over (sendResult.ts handOver): recorded here, or its error raised here. */
async function takeOver(rec: TurnRecord, ports: TickPorts): Promise<boolean> {
    const sent = await ports.store.sent?.(rec.id);
    if (!sent || sent.attempt !== rec.attempts) {
        return false;
    }
    await ports.store.dropSent?.(rec.id);
    endClaim(rec, 'sending');
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
    // A quick turn keeps this in hand (its record says who sends it): written if it outlives its event (carryOn.ts handOver).
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
            system: instructionsFor(rec.system, ports.config),
            user: rec.user,
            images: imagesFor(rec, ports),
            idempotencyKey: rec.id,
        });
    }
    pendingImages.delete(rec.id);
    ports.log.info(`Turn ${describe(rec)} sent to Hermes (${rec.transport}${runId ? ` ${runId}` : ''}, session ${rec.sessionId}, attempt ${rec.attempts}).`);
}
