import { BeatStore } from './beats';
import { HistoryPort } from '../context/historyPort';
import { SessionIndexPort } from '../sessions/sessionIndex';
import { UsagePort } from '../usage/usage';
import { ReadFile } from '../files/attachments';
import { LiveChatPort, ServerInfo } from '../delivery/chatPort';
import { HermesClient } from '../hermes/client';
import { HermesCapabilities } from '../hermes/capabilities';
import { LiveTurns } from '../hermes/liveTurns';
import { LogPort } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { SessionPort, SessionRecord } from '../sessions/sessionRecord';
import { TurnRecord } from './turnRecord';
import { TurnStore } from './turnStore';

/** What a scheduled tick carries: the turn, the chain it belongs to, and whether it is a wake-up. */
export interface TickJob {
    turnId: string;
    /** Undefined only in jobs written before chains existed. */
    chain?: string;
    /** A wake-up from the turn's stream: does its step and schedules nothing after it. */
    wake?: boolean;
    /** The scheduler's id of this job, when it came from the scheduler. */
    jobId?: string;
    /**
     * The turn exactly as the caller saved it a moment ago in this same call (the first step,
     * run inside the event): spares the read. Never sent to the scheduler (scheduleTick copies
     * the ids only).
     */
    record?: TurnRecord;
    /**
     * The first step, run inside the message event: the turn's next steps follow there while
     * it is quick (carryOn.ts), with no scheduler job. Never sent to the scheduler.
     */
    quick?: boolean;
    /** A quick job's call: when it began (the turns it carries start only while it is young). */
    since?: number;
    /**
     * The session as the event read it a moment ago, or as the woken turn's tick reads it beside
     * its record (not for thread turns, whose frontier must be read fresh). Never sent to the scheduler.
     */
    session?: SessionRecord | Promise<SessionRecord>;
    /**
     * The open turns' tickets as the turn that woke this one read them a moment ago, after this
     * turn's own ticket was written (it was waiting): its claim needs no read of its own. Used once.
     * Never sent to the scheduler.
     */
    open?: TurnRecord[];
    /** The woken turn's session key, from its ticket: when its record must be read, its session is read beside it. */
    sessionKey?: string;
    /**
     * The first step's text, still being built in the event when its head was stored
     * (startTurn.ts): taken in after the tickets read. Never sent to the scheduler.
     */
    text?: Promise<Pick<TurnRecord, 'user' | 'contextFiles'>>;
}

/** Everything a tick reaches the outside through; the engine adapter builds it per call. */
export interface TickPorts {
    config: HermesConfig;
    hermes: HermesClient;
    capabilities: () => Promise<HermesCapabilities>;
    store: TurnStore;
    sessions: SessionPort;
    chat: LiveChatPort;
    /** A thread turn reads its thread when it reaches Hermes (threadContext.ts). */
    history: HistoryPort;
    botId: string;
    /** The bot's username: a turn whose text is rebuilt strips its mention (rebuildText.ts). */
    botUsername?: string;
    /** Who owns which session: a person's first answered turn in a session is recorded there. */
    index?: SessionIndexPort;
    /** Keeps a private thread summary for its "Post to thread" button; resolves with the button's value. */
    keepSummary?: (rec: TurnRecord, text: string) => Promise<string>;
    /** Reads an upload's content (the trigger's files). */
    readFile?: ReadFile;
    /** Daily usage per person and room. */
    usage?: UsagePort;
    /** A scheduled prompt's run ended (cron/fire.ts runEnded). */
    cronDone?: (jobId: string, runId: string, outcome: { at: number; status: 'delivered' | 'silent' | 'failed' | 'skipped'; error?: string }) => Promise<void>;
    /** thread_follow on: an answered thread is followed for its asker (follow/threadFollow.ts). */
    follow?: (threadId: string, askerId: string) => Promise<void>;
    server: (fresh?: boolean) => Promise<ServerInfo>;
    live: LiveTurns;
    /** Turn work begins in this process: its beat runs while it has turns in hand (processBeat.ts). */
    beat?: () => void;
    /** The processes' beats: a tick takes over a turn whose holders are all gone (takeOverGone.ts). */
    beats?: Pick<BeatStore, 'readBeats'>;
    /** Runs a tick of `job` after `delayMs`; resolves with the scheduler's job id. */
    schedule: (job: TickJob, delayMs: number) => Promise<string | void>;
    /**
     * A quick call's ports (tick.ts carrying): whether a turn woken now takes its first step in
     * this call, on its waker's read of the tickets, rather than in a scheduler job.
     */
    carries?: () => boolean;
    /**
     * Claims one sending of a turn (`sendKey`) for this call, first stored wins: two instances'
     * ticks of one turn whose reads came before either's write both get this far (submit.ts start).
     */
    claimSend: (key: string) => Promise<boolean>;
    /** Cancels a scheduled tick (the successor of a turn that just ended). */
    cancel: (jobId: string) => Promise<void>;
    /**
     * Of `messageIds` (messages of this server an answer links to), those the person may read now:
     * in a room they and the bot are both members of (delivery/citations.ts). Absent: none.
     */
    readableMessages?: (userId: string, messageIds: string[]) => Promise<Set<string>>;
    /** Records the asker token a submitted turn carries as the newest of its conversation and of the Hermes session it goes to. */
    markNewestToken?: (sessionKey: string, userText: string, sessionId: string) => Promise<void>;
    log: LogPort;
    now: () => number;
}
