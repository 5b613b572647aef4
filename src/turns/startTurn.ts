import { randomUUID } from 'crypto';
import { pendingApproval, decideApproval, DecidePorts } from '../approvals/decide';
import { textDecision } from '../approvals/approvalPolicy';
import { CommandPorts, runCommand } from '../commands/runCommand';
import { isPrivateCommand, parseTextCommand } from '../admission/textCommand';
import { SessionIndexPort } from '../sessions/sessionIndex';
import { HistoryPort } from '../context/historyPort';
import { LiveChatPort, ServerInfo } from '../delivery/chatPort';
import { deliver } from '../delivery/deliver';
import { BotMessageKind } from '../delivery/messageKind';
import { conversationLink, firstMessagePrefix } from '../delivery/quote';
import { HermesClient } from '../hermes/client';
import { LiveTurns } from '../hermes/liveTurns';
import { t } from '../i18n/messages';
import { LogPort } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { claimFresh } from './freshClaim';
import { resetDue } from '../sessions/resetPolicy';
import { UsagePort } from '../usage/usage';
import { Admitted, budgetHit, describeRefusal, Refusal, roomRules, TurnAsk } from '../admission/turnAdmission';
import { resetSession, SessionPort, SessionRecord } from '../sessions/sessionRecord';
import { describeTurn, Turn, turnSessionKey, turnSystemText } from './turn';
import { TurnRecord } from './turnRecord';
import { TurnStore } from './turnStore';
import { TickJob } from './tickPorts';
import { buildUserText } from './userText';
import { newThreadFor } from './replyMode';
import { autoTitle } from '../sessions/titles';

export interface StartPorts {
    /**
     * Whether the message may be taken at all (the bot is in the room, the message was not taken
     * before), decided by reads that run beside the turn's own: nothing is written or posted
     * before it says yes. Absent: already decided.
     */
    admitted?: Promise<boolean>;
    /** Undefined while the app has no usable configuration: the asker is told so. */
    config: HermesConfig | undefined;
    hermes: HermesClient | undefined;
    bot: { id: string; username: string };
    chat: LiveChatPort;
    history: HistoryPort;
    sessions: SessionPort;
    turns: TurnStore;
    live: LiveTurns;
    server: (fresh?: boolean) => Promise<ServerInfo>;
    /** Starts a tick of the turn's chain (a scheduler job) right away. */
    schedule: (job: TickJob) => Promise<void>;
    /**
     * Records that the message was taken (the persisted receipt) when it opens no turn: a
     * command, a refusal. A turn's stored record is its receipt.
     */
    claim: () => Promise<void>;
    /**
     * The event's reads and writes that start it are done: its turn is stored, or a command is
     * about to run. Gives the event's place in the intake back (turns/intakeGate.ts); on every
     * other path the event gives it back when it returns.
     */
    stored?: () => void;
    log: LogPort;
    now: () => number;
    /** Scheduled prompts and the settings writer, for the commands that use them. */
    commandExtras?: Pick<CommandPorts, 'cron' | 'updateSetting'>;
    /** Daily usage (budgets, `/hermes usage`). */
    usage?: UsagePort;
    /** Who owns which session (for the session commands). */
    index?: SessionIndexPort;
    /** In a thread: stops following it (`unfollow`). */
    unfollow?: () => Promise<boolean>;
}

export type StartOutcome = { kind: 'queued' } | { kind: 'command'; name: string } | { kind: 'refused'; reason: string };

/**
 * What the message event does, quickly: answer commands in place, or build what Hermes will
 * receive (this is where the room is read) and persist the turn for the scheduler to carry.
 * The event handler returns right after; no answer depends on it staying alive.
 */
export async function startTurn(turn: Turn, ports: StartPorts): Promise<StartOutcome> {
    const reply: Reply = (text, kind) => replyInPlace(turn, ports, text, kind);
    // The rules every turn follows (turnAdmission.ts) that need no read; the budget is read in `queue`.
    const rules = ports.config ? roomRules(askOf(turn), ports.config) : undefined;
    // Only a question headed for Hermes reads ahead of the admission (its session and context);
    // a command, a decision or a refusal waits for it.
    const question = ports.config && ports.hermes && rules?.admit && !textDecision(turn.text) && !parseTextCommand(turn.text);
    if (!question && !(await admittedFor(ports))) {
        return NOT_ADMITTED;
    }
    const queued = await queueOrAnswer(turn, rules, ports, reply);
    if (queued.kind !== 'queued' && queued !== NOT_ADMITTED) {
        await ports.claim();
    }
    return queued;
}

async function queueOrAnswer(turn: Turn, rules: Admitted | Refusal | undefined, ports: StartPorts, reply: Reply): Promise<StartOutcome> {
    if (!ports.config || !ports.hermes || !rules) {
        ports.log.warn(`Turn for ${describeTurn(turn)} refused: the app has no valid configuration (see the settings errors above).`);
        await reply(t('notice_not-configured'), 'notice');
        return { kind: 'refused', reason: 'not-configured' };
    }
    if (!rules.admit && rules.reason === 'room-policy') {
        ports.log.warn(
            `Turn for ${describeTurn(turn)} refused: the room's entry in room_policies is malformed (see the line reported when the settings were applied).`,
        );
        await reply(t('notice_room-policy'), 'notice');
        return { kind: 'refused', reason: 'room-policy' };
    }
    if (!rules.admit) {
        // The event turns these away before a turn (the allowlist silently; an `off` or automation
        // room with its own once-only notice): a turn that still gets here is refused without a word.
        ports.log.info(`Turn for ${describeTurn(turn)} refused: ${describeRefusal(rules)}.`);
        return { kind: 'refused', reason: rules.reason };
    }
    const ready = { ...ports, config: ports.config, hermes: ports.hermes };
    const key = turnSessionKey(turn, ready.config);
    return (await answerDecision(turn, key, ready)) ?? (await answerCommand(turn, key, ready, reply)) ?? queue(turn, key, rules, ready, reply);
}

/** The message's turn as the admission sees it: the room's policy as its event looked it up. */
function askOf(turn: Turn): TurnAsk {
    const m = turn.message;
    return {
        source: 'message',
        asker: { id: m.senderId, username: m.senderUsername },
        room: { id: m.roomId, type: m.roomType, directMemberCount: m.directMemberCount },
        policy: turn.room,
    };
}

type Reply = (text: string, kind: BotMessageKind) => Promise<void>;

/** The message was not to be taken (not in the room, taken before): nothing happened, nothing is recorded. */
const NOT_ADMITTED: StartOutcome = { kind: 'refused', reason: 'not-admitted' };

async function admittedFor(ports: Pick<StartPorts, 'admitted'>): Promise<boolean> {
    return ports.admitted ? ports.admitted : true;
}
type Ready = StartPorts & { config: HermesConfig; hermes: HermesClient };

/** `yes`/`no` (and `/approve`, `/deny`) while an approval is pending in this conversation. */
async function answerDecision(turn: Turn, key: string, ports: Ready): Promise<StartOutcome | undefined> {
    const decision = textDecision(turn.text);
    const pending = decision ? await pendingApproval(ports.turns, key) : undefined;
    if (!decision || !pending) {
        return undefined;
    }
    const decidePorts: DecidePorts = { config: ports.config, hermes: ports.hermes, store: ports.turns, chat: ports.chat, log: ports.log };
    const result = await decideApproval(pending, { id: turn.message.senderId, username: turn.message.senderUsername }, decision, decidePorts);
    if (result !== 'decided') {
        const why = result === 'not-yours' ? 'approval_not_yours' : result === 'not-shown-whole' ? 'approval_not_shown_whole' : 'approval_no_longer_pending';
        await ports.chat.whisper(turn.message.senderId, { roomId: turn.message.roomId, threadId: turn.message.threadId }, (tr) => tr(why));
    }
    return { kind: 'command', name: `approval:${decision}` };
}

/** `@bot /new`, `!new` in a DM, …: the one command runner, answered in place. */
async function answerCommand(turn: Turn, key: string, ports: Ready, reply: Reply): Promise<StartOutcome | undefined> {
    const command = parseTextCommand(turn.text);
    if (!command) {
        return undefined;
    }
    const m = turn.message;
    const who = { id: m.senderId, username: m.senderUsername };
    const { siteUrl } = await ports.server();
    // A command may wait on Hermes (a session list, a search): not in the intake's place.
    ports.stored?.();
    const answer = await runCommand(command, who, key, {
        config: ports.config,
        hermes: ports.hermes,
        sessions: ports.sessions,
        turns: ports.turns,
        live: ports.live,
        log: ports.log,
        botUsername: ports.bot.username,
        room: turn.room,
        unfollow: ports.unfollow,
        index: ports.index,
        usage: ports.usage,
        ...ports.commandExtras,
        scope: { roomId: m.roomId, roomType: m.roomType, roomName: turn.roomName, threadId: m.threadId, kind: turn.kind },
        link: (entry) => conversationLink(siteUrl, entry),
        // A turn waiting behind another has no ticks: wake it so it sees the stop now.
        wake: (rec) => ports.schedule({ turnId: rec.id, chain: rec.chain, wake: true }),
        // A private reply is read by the asker alone: in their language; in the room, the server's.
        language: isPrivateCommand(command) ? m.senderLanguage : undefined,
    });
    if (isPrivateCommand(command)) {
        // About the asker's own sessions: nobody else in the room sees it.
        await ports.chat.whisper(m.senderId, { roomId: m.roomId, threadId: m.threadId }, answer.text);
    } else {
        await reply(answer.text, answer.kind);
    }
    return { kind: 'command', name: command.name };
}

/** Reads the context, stores the turn, claims the message, and starts the turn's first step. */
async function queue(turn: Turn, mainKey: string, rules: Admitted, ports: Ready, reply: Reply): Promise<StartOutcome> {
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

/** Command answers and notices go where the answer would: in the thread, or quoting the question. */
async function replyInPlace(turn: Turn, ports: StartPorts, text: string, kind: BotMessageKind): Promise<void> {
    const server = await ports.server();
    const m = turn.message;
    const quote = firstMessagePrefix(
        {
            kind: turn.kind,
            threadId: m.threadId,
            roomType: m.roomType,
            roomId: m.roomId,
            roomName: turn.roomName,
            messageId: m.id,
            askerUsername: m.senderUsername,
        },
        server,
    );
    await deliver(
        {
            target: { roomId: m.roomId, threadId: m.threadId },
            text,
            kind,
            maxMessageSize: server.maxMessageSize,
            freshMaxMessageSize: async () => (await ports.server(true)).maxMessageSize,
            firstPrefix: quote,
        },
        ports.chat,
        ports.log,
        describeTurn(turn),
    );
}
