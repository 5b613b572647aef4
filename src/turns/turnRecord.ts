import { ConversationKind } from '../admission/admit';
import { ApprovalRequest } from '../hermes/client';

/**
 * Everything needed to finish a turn, in persistence: an app process that restarts (or
 * another server instance) picks the turn up from here. Nothing correctness depends on
 * lives only in memory.
 */
export interface TurnRecord {
    /** The Rocket.Chat message id; also the Idempotency-Key of every Hermes request. */
    id: string;
    /** The question's time: turns of one session go in this order. */
    createdAt: number;
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
    phase: 'queued' | 'running' | 'done';
    transport?: 'runs' | 'chat';
    sessionId?: string;
    runId?: string;
    startedAt?: number;
    statusMessageId?: string;
    statusText?: string;
    statusEditedAt?: number;
    /** Tool lines seen so far (newest last), for the status message. */
    progress: string[];
    approval?: ApprovalState;
    attempts: number;
    retryAt?: number;
    /** 413 seen once: the retry sends less history. */
    trimmed?: boolean;
    /** Who stopped the turn, once a tick has seen the stop request. */
    stopRequestedBy?: string;
    /** Set before the first answer part is posted: a later attempt checks what already went out. */
    deliveryStartedAt?: number;
    lease?: { token: string; until: number };
    /** The successor tick scheduled ahead in case this process dies; cancelled when the turn ends. */
    watchdogJob?: string;
    /** When a tick last saved this record: the sweep restarts turns whose ticks stopped. */
    tickAt?: number;
}

export interface ApprovalState {
    messageId: string;
    request: ApprovalRequest;
    decided?: { by: string; choice: string };
    timedOut?: boolean;
}

/** Where turn records live (the app's persistence in Rocket.Chat). */
export interface TurnStore {
    get(id: string): Promise<TurnRecord | undefined>;
    save(record: TurnRecord): Promise<void>;
    /** Unfinished turns of a session. */
    openInSession(sessionKey: string): Promise<TurnRecord[]>;
    /** Every unfinished turn (for the recovery sweep). */
    open(): Promise<TurnRecord[]>;
    /** Drops a finished turn (and its stop request); its receipt stays. */
    remove(id: string): Promise<void>;
    /**
     * A stop is its own record, not a field of the turn: the turn's ticks rewrite the turn
     * record, and a stop written into it between their read and write would be lost.
     */
    requestStop(id: string, by: string): Promise<void>;
    stopRequest(id: string): Promise<string | undefined>;
}

/** Ordering inside a session: by the question's time, then id (stable for equal times). */
export function comesBefore(a: Pick<TurnRecord, 'createdAt' | 'id'>, b: Pick<TurnRecord, 'createdAt' | 'id'>): boolean {
    return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);
}
