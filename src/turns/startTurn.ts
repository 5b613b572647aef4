/* A question for Hermes becomes a turn: its context read, its record stored, its first step started. */

import { randomUUID } from 'crypto';
import { t } from '../i18n/messages';
import { claimFresh } from './freshClaim';
import { resetDue } from '../sessions/resetPolicy';
import { Admitted, budgetHit } from '../admission/turnAdmission';
import { resetSession, SessionRecord } from '../sessions/sessionRecord';
import { askOf, describeTurn, keyOptions, Turn, turnSystemText } from './turn';
import { admittedFor, NOT_ADMITTED, Ready, Reply, StartOutcome } from './startPorts';
import { TurnRecord } from './turnRecord';
import { buildUserText } from './userText';
import { autoTitle } from '../sessions/titles';
import { Frontier } from '../context/frontier';
import { HermesConfig } from '../settings/config';
import { sessionKey } from '../sessions/sessionKey';

/** Reads the context, stores the turn, claims the message, and starts the turn's first step. */
export async function queueTurn(turn: Turn, mainKey: string, rules: Admitted, ports: Ready, reply: Reply): Promise<StartOutcome> {
    const thread = newThreadFor(turn, ports.config);
    const key = thread?.key ?? mainKey;
    const { siteUrl } = await ports.server();
    // Read beside the admission's reads; a reset (a write) only once it said yes.
    const sessionRead = ports.sessions.get(key);
    sessionRead.catch(() => undefined);
    // The day's usage (only when a budget is set) is read beside them too.
    const budget = budgetHit(askOf(turn), ports.config, ports.usage, ports.now());
    budget.catch(() => undefined);
    const admitted = admittedFor(ports);
    const sessionReady = (async () => {
        let found = await sessionRead;
        if (!(await admitted)) {
            return undefined;
        }
        const due = await autoResetDue(found, key, ports);
        if (due) {
            found = await resetSession(ports.sessions, key);
            ports.log.info(`Session ${key} reset (${due.why}, session_reset) before the turn of ${describeTurn(turn)}.`);
        }
        return { session: found, reset: due };
    })();
    // A DM's context depends on the session (its seed on a first turn only): read once admitted.
    const sessionOnly = sessionReady.then((s) => s?.session ?? sessionRead);
    // Never an unhandled rejection (it would end the app's process): the awaits below raise it.
    sessionOnly.catch(() => undefined);
    // The room's context is read while the session is (a DM's waits for it): one round trip for both.
    const textReady = buildUserText({
        turn,
        config: ports.config,
        bot: ports.bot,
        session: sessionOnly,
        history: ports.history,
        siteUrl,
        log: ports.log,
        now: ports.now,
    });
    textReady.catch(() => undefined);
    const ready = await sessionReady;
    if (!ready) {
        return NOT_ADMITTED;
    }
    const { session, reset } = ready;
    const over = await budget;
    if (over) {
        ports.log.info(`Turn for ${describeTurn(turn)} not sent: daily budget ${over.budget} (${over.limit}) reached.`);
        const asker = turn.message;
        await ports.chat.whisper(asker.senderId, { roomId: asker.roomId, threadId: asker.threadId }, (tr) =>
            tr(`notice_budget_${over.budget}`, { limit: over.limit, tz: ports.config.timezone }),
        );
        return { kind: 'refused', reason: 'budget' };
    }
    // The head is stored while the context is still being rendered (it holds no text): the
    // tickets read that follows it overlaps the rendering, and the first step takes the text in
    // from its job. A named new thread's title comes from the text, so that head waits for it.
    const text = textReady.then((t) => ({ user: t.text, contextFiles: t.contextFiles }));
    text.catch(() => undefined);
    const built = thread?.named ? await text : undefined;
    const m = turn.message;
    const chain = randomUUID();
    let record: TurnRecord;
    try {
        record = {
            id: m.id,
            createdAt: turn.createdAt.getTime(),
            postedAt: turn.postedAt?.getTime(),
            // Queued turns go in the order people asked (the server's time of each message); a running turn blocks its session whatever its order.
            seq: turn.createdAt.getTime(),
            chain,
            sessionKey: key,
            roomId: m.roomId,
            threadId: thread?.threadId ?? m.threadId,
            roomType: m.roomType,
            roomName: turn.roomName,
            kind: turn.kind,
            askerId: m.senderId,
            askerUsername: m.senderUsername,
            system: turnSystemText(turn),
            route: rules.route,
            // Undefined until the first step takes the text in (TickJob.text); never stored with the head.
            user: built?.user as string,
            threadContext: turn.kind === 'room' && m.threadId ? 'pending' : undefined,
            autoReset: reset?.why,
            threadName: built ? autoTitle(built.user) : undefined,
            files: m.files,
            contextFiles: built?.contextFiles,
            frontier: thread ? { next: thread.frontier } : undefined,
            endPrevious: reset?.ended,
            recap: session.recap,
            sessionSeen: session.sessionId,
            phase: 'queued',
            progress: [],
            attempts: 0,
        };
        // Its first step runs right here (MessageHandler): stored claimed, it goes without writing
        // again, and its text is written only if the turn is saved again (a quick one is not).
        claimFresh(record, ports.config, ports.now());
        await ports.turns.save(record, { textKept: true });
        ports.stored?.();
    } catch (error) {
        // Nothing was queued: the asker hears so now, instead of never.
        ports.log.error(`Turn for ${describeTurn(turn)} could not be stored: ${error instanceof Error ? error.message : String(error)}`);
        await reply(t('notice_server-error'), 'notice');
        return { kind: 'refused', reason: 'not-stored' };
    }
    // The stored turn is the message's receipt (the engine's store gives it the receipt's
    // association); when the turn ends, its usage row keeps the receipt.
    // A copy: the first step may run right here (MessageHandler) and change its record.
    await ports.schedule({ turnId: m.id, chain, record: JSON.parse(JSON.stringify(record)) as TurnRecord, session, text });
    return { kind: 'queued' };
}

/**
 * session_reset: whether this session starts over before the turn — never under a turn still
 * queued or running in it (the one read of the session's open turns happens only when a reset is due).
 */
async function autoResetDue(session: SessionRecord, key: string, ports: Ready): Promise<{ why: 'idle' | 'daily'; ended: string } | undefined> {
    const c = ports.config;
    const why = resetDue(session.lastActiveAt, ports.now(), {
        mode: c.sessionReset,
        idleMinutes: c.sessionIdleMinutes,
        resetHour: c.sessionResetHour,
        timeZone: c.timezone,
    });
    if (!why || (await ports.turns.openInSession(key)).length > 0) {
        return undefined;
    }
    return { why, ended: session.sessionId };
}

/** A room mention answered in a new thread rooted at the question (`reply_mode` thread/auto). */
interface NewThread {
    threadId: string;
    /** The thread's session: later messages in the thread continue it. */
    key: string;
    /** `auto`: the answer's first line names the thread, from the asker's words. */
    named: boolean;
    /** The new thread session holds its root (the question); the answer is held when it is posted. */
    frontier: Frontier;
}

/**
 * Whether this turn opens a thread (the seed's topic mode, for Rocket.Chat): a mention in a
 * room's main channel, under `reply_mode` or the room policy's `reply=`. DMs, threads and
 * commands never do. The turn keeps the main channel's context (what led to the question);
 * its session is the new thread's.
 */
function newThreadFor(turn: Turn, config: Pick<HermesConfig, 'replyMode' | 'groupSessionsPerUser' | 'threadSessionsPerUser'>): NewThread | undefined {
    const m = turn.message;
    const mode = (turn.room?.kind === 'entry' ? turn.room.policy.reply : undefined) ?? config.replyMode;
    if (turn.kind !== 'room' || m.threadId || mode === 'channel') {
        return undefined;
    }
    const profile = turn.room?.kind === 'entry' ? turn.room.policy.profile : undefined;
    return {
        threadId: m.id,
        key: sessionKey({ chatType: 'channel', roomId: m.roomId, threadId: m.id, userId: m.senderId, profile }, keyOptions(config)),
        named: mode === 'auto',
        frontier: { at: (turn.postedAt ?? turn.createdAt).getTime(), id: m.id, held: [] },
    };
}
