import { HermesFailureKind } from '../hermes/errors';
import { ConversationKind } from '../admission/admit';
import { Frontier } from '../context/frontier';
import { PostedFile } from '../context/contextMessage';
import { ContextFiles } from '../files/contextFiles';
import { HermesClient } from '../hermes/client';
import { ApprovalRequest } from '../hermes/runs';
import { Owner } from './owner';

/**
 * Everything needed to finish a turn, in persistence: an app process that restarts (or
 * another server instance) picks the turn up from here. Nothing correctness depends on
 * lives only in memory.
 */
export interface TurnRecord {
    /** The Rocket.Chat message id; also the Idempotency-Key of every Hermes request. */
    id: string;
    /** The question's time (Rocket.Chat's), for the age limit and the logs. */
    createdAt: number;
    /**
     * Order inside the session, assigned by the app when it stores the turn. Message
     * timestamps come from clients and other instances; they do not order turns.
     */
    seq: number;
    sessionKey: string;
    roomId: string;
    threadId?: string;
    roomType: string;
    roomName?: string;
    kind: ConversationKind;
    askerId: string;
    askerUsername: string;
    system: string;
    user: string;
    /**
     * A room thread turn's context is read when the turn reaches Hermes, in its session's
     * order, from the session's frontier (threadContext.ts); until then `user` has no block.
     */
    threadContext?: 'pending';
    /** When the trigger was posted, if not `createdAt` (a turn opened by an edit): its place in the thread. */
    postedAt?: number;
    /** A run of a scheduled prompt: delivered with a header, `[SILENT]` posts nothing (cron/). */
    cron?: { jobId: string; name: string };
    /** The trigger's uploads: read when the turn is sent (files/attachments.ts); `filesRead` once their text is in `user`. */
    files?: PostedFile[];
    filesRead?: boolean;
    /** context_files: the context's files to read with them (files/contextFiles.ts); their text joins `user` with the trigger's. */
    contextFiles?: ContextFiles;
    /** A private answer (message actions): the outcome is shown only to this person, never posted. */
    privateTo?: string;
    /** The private reader's language preference: the notices of a private answer are in it. */
    privateLanguage?: string;
    /** Follow-ups taken into this turn (turns/followUps.ts): they end when it has answered. */
    merged?: string[];
    /** It waited behind a turn of its session that was at Hermes: sent during that run (a follow-up, turns/followUps.ts). */
    followUp?: boolean;
    /** The question's message when it is not the turn's id (a retry, `retry.<uuid>`): quoted by the answer, reacted on. */
    question?: string;
    /** `/hermes background`: a one-off session's turn whose answer mentions its asker under its "started" message (`question`). */
    background?: true;
    /** A private thread summary: the answer comes with a button that posts it to the thread. */
    offerPost?: boolean;
    /** reply_mode auto: the answer's first line, naming the thread it opens. */
    threadName?: string;
    /** The session was reset automatically right before this turn (session_reset): the answer says so first. */
    autoReset?: 'idle' | 'daily';
    /** The session this turn's reset ended: Hermes is told (end_reason) when the turn is sent. */
    endPrevious?: string;
    /** After /hermes resume: where the session stood, shown before the answer. */
    recap?: string;
    /** Where the room's policy sends this turn: a Hermes profile and/or a model alias. */
    route?: { profile?: string; model?: string };
    /** The session's frontier once Hermes has this turn: `next`, or `withoutBlock` after the 413 retry dropped the block. */
    frontier?: { next?: Frontier; withoutBlock?: Frontier };
    phase: 'queued' | 'running' | 'done';
    /**
     * The tick chain that owns this turn. Each tick hands it to its successor; a tick of any
     * other chain (a lost chain the sweep replaced) ends without scheduling anything.
     */
    chain: string;
    /** Its claim on max_parallel_turns (turns/slots.ts): holding a slot, or waiting for one. */
    slot?: { state: 'running' | 'waiting'; until: number };
    /** A queued turn behind another of its session: no ticks until the one ahead ends and wakes it. */
    waiting?: boolean | 'slot';
    transport?: 'runs' | 'chat';
    /** Who may act on the turn now, doing what, until when (turns/owner.ts): one claim, renewed while its process lives. */
    owner?: Owner;
    /**
     * The Hermes session id its event read with the head. A turn sent later than its event (it
     * waited for a slot or its session) reads that transcript beside its session's read, and
     * keeps it only if the read still names this id (turns/submit.ts).
     */
    sessionSeen?: string;
    sessionId?: string;
    runId?: string;
    startedAt?: number;
    /** When the turn gives up (turn_timeout_minutes after it started running). */
    deadlineAt?: number;
    statusMessageId?: string;
    statusText?: string;
    statusEditedAt?: number;
    /** Set before the status message is posted: after a crash the tick looks for it by its mark. */
    statusPosting?: boolean;
    /** An answer streamed as Hermes writes it (stream_answers): its messages, edited into the answer's parts at its end. */
    stream?: StreamState;
    /** Tool lines seen so far (newest last, bounded), for the status message. */
    progress: string[];
    approval?: ApprovalState;
    attempts: number;
    retryAt?: number;
    /** 413 seen once: the retry sends less history. */
    trimmed?: boolean;
    /** When Hermes was last polled for this run. */
    polledAt?: number;
    /** The outcome, fixed before the first message of it is posted (see finish.ts). */
    delivery?: DeliveryState;
    /** The successor tick scheduled ahead in case this process dies; cancelled when the turn ends. */
    watchdogJob?: string;
    /**
     * Its start's read of the tickets showed every other turn running (turns/waiters.ts): its end
     * may skip the tickets read, so a turn that waits for it marks it. False: its end reads anyway.
     */
    alone?: boolean;
    /** When a tick last wrote this record: the sweep restarts turns whose ticks stopped. */
    tickAt?: number;
}

/** The messages an answer is streamed into (turns/streamAnswer.ts). */
export interface StreamState {
    /** In order; the first may have been the status message. */
    ids: string[];
    /** How many of `ids` are done: what was written before an approval request, left as it is. */
    frozen: number;
    /** How much of the streamed text those hold: what follows goes into the rest of `ids`. */
    cut: number;
    /** That text, trimmed: its length and fingerprint. An answer that starts with it does not repeat it. */
    frozenText?: { chars: number; print: string };
    /** Saved before a message is posted: after a crash the tick looks for it by its status mark. */
    posting?: boolean;
}

/** What is being posted as the outcome: fixed once, so a retried delivery posts the same parts. */
export interface DeliveryState {
    kind: 'answer' | 'notice';
    parts: string[];
    /** Ids of the parts posted so far, in order. */
    posted: string[];
    /** Streamed messages that become the first parts (edited into them), in order. */
    reuse?: string[];
    /** Streamed messages the outcome does not need: removed with the status message. */
    drop?: string[];
    startedAt: number;
    /** For the log line at the end. */
    summary: string;
    failed?: boolean;
}

interface ApprovalState {
    messageId: string;
    request: ApprovalRequest;
    /** How many approvals this run asked for so far (a run can ask more than once). */
    number: number;
    /** The command could not be read (restart): only Deny is offered. */
    unknownCommand?: boolean;
    postedAt?: number;
    /** Hermes moved on from it (decided here, or timed out there). */
    closed?: boolean;
}

/** A submission's result, handed from the instance that sent it to the one whose tick records it. */
export interface SentRecord {
    attempt: number;
    runId?: string;
    /** The app process reading the run's events: the sender, which subscribed as Hermes answered (liveTurns.ts submit). */
    holder?: string;
    error?: { kind: HermesFailureKind; detail: string; status?: number; retryAfterSeconds?: number; code?: string };
}

/** A decision on one approval message: its own record, written by whoever decides. */
export interface ApprovalDecision {
    messageId: string;
    decided?: { by: string; choice: string };
    timedOut?: boolean;
}

/** A slot held by a running turn (`slot`), counted until its deadline could have passed. */
export function heldSlot(now: number, turnTimeoutMinutes: number): NonNullable<TurnRecord['slot']> {
    return { state: 'running', until: now + turnTimeoutMinutes * 60_000 + 60_000 };
}

/** The Hermes client for this turn: the room's profile and model, if its policy names them. */
export function hermesFor(rec: Pick<TurnRecord, 'route'>, hermes: HermesClient): HermesClient {
    return rec.route ? hermes.withRoute(rec.route) : hermes;
}

/** Ordering inside a session: by the app's sequence, then id (stable for equal sequences). */
export function comesBefore(a: Pick<TurnRecord, 'seq' | 'id'>, b: Pick<TurnRecord, 'seq' | 'id'>): boolean {
    return a.seq < b.seq || (a.seq === b.seq && a.id < b.id);
}

export function describe(rec: Pick<TurnRecord, 'id' | 'roomId' | 'threadId'>): string {
    return `message ${rec.id} in room ${rec.roomId}${rec.threadId ? ` thread ${rec.threadId}` : ''}`;
}

/** The message a turn answers: its own id, or the question a retry asks again. */
export function questionOf(rec: Pick<TurnRecord, 'id' | 'question'>): string {
    return rec.question ?? rec.id;
}
