import { HermesClient } from '../hermes/client';
import { LiveTurns } from '../hermes/liveTurns';
import { RoomLookup } from '../policy/roomPolicy';
import { LogPort } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { SessionPort } from '../sessions/sessionRecord';
import { OwnedSession, SessionIndexPort } from '../sessions/sessionIndex';
import { TurnRecord } from '../turns/turnRecord';
import { TurnStore } from '../turns/turnStore';
import { FeedbackPort } from '../feedback/feedback';
import { UsagePort } from '../usage/usage';
import { CronCommandPorts } from './cronCommandPorts';
import { ExchangeEnginePorts } from './exchangeCommands';
import { BackgroundPorts } from './backgroundCommand';
import { ConversationLink } from './sessionSearch';

/* What every command may use (commands/runCommand.ts runs them; each entry point supplies these). */

export interface CommandPorts {
    config: HermesConfig;
    hermes: HermesClient;
    sessions: SessionPort;
    turns: TurnStore;
    live: LiveTurns;
    log: LogPort;
    botUsername: string;
    /** What the room's policy gives it, for `status` (absent: the default). */
    room?: RoomLookup;
    /** Stops following the thread the command was run in; absent outside a thread. Resolves with whether it was followed. */
    unfollow?: () => Promise<boolean>;
    /** The session index and where the command runs: for title, sessions, resume and search. */
    index?: SessionIndexPort;
    scope?: Omit<OwnedSession, 'sessionId' | 'startedAt' | 'key'>;
    link?: ConversationLink;
    /** Scheduled prompts (`cron`), when the caller offers them. */
    cron?: Omit<CronCommandPorts, 'config' | 'now'>;
    /** Daily usage, for `/hermes usage`. */
    usage?: UsagePort;
    /** A conversation's exchanges, for `retry` and `undo`. */
    exchange?: ExchangeEnginePorts;
    /** Background tasks, for `background`. */
    background?: BackgroundPorts;
    /** Votes on answers, counted in a room's or everyone's `/hermes usage`. */
    feedback?: Pick<FeedbackPort, 'counts'>;
    /** Writes one of the app's settings (`sethome`, `automation`: admins only, by command_allowlist's rule). */
    updateSetting?: (id: string, value: unknown) => Promise<void>;
    /** The reader's language preference, when the reply is read by the asker alone (absent: the server's). */
    language?: string;
    /** Wakes a queued turn that has no ticks (so it sees a stop at once). */
    wake?: (rec: TurnRecord) => Promise<void>;
    /**
     * Whether a person is a member of a room now, for the session commands (which ask it about
     * the person running them). Absent: they list, search and resume no room's sessions.
     */
    memberOf?: (userId: string, roomId: string) => Promise<boolean>;
}

/** What a command answers: its text, and whether it is a notice (a refusal) or the command's own answer. */
export interface CommandReply {
    text: string;
    kind: 'notice' | 'command';
}
