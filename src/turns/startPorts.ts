/* What the start of a turn (startTurn.ts, and the intake above it) reads and writes through, and what it returns. */

import { HistoryPort } from '../context/historyPort';
import { LiveChatPort, ServerInfo } from '../delivery/chatPort';
import { BotMessageKind } from '../delivery/messageKind';
import { HermesClient } from '../hermes/client';
import { LiveTurns } from '../hermes/liveTurns';
import { LogPort } from '../security/safeLog';
import { SessionPort } from '../sessions/sessionRecord';
import { HermesConfig } from '../settings/config';
import { UsagePort } from '../usage/usage';
import { TickJob } from './tickPorts';
import { TurnStore } from './turnStore';

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
    /** Daily usage (budgets, `/hermes usage`). */
    usage?: UsagePort;
}

export type StartOutcome = { kind: 'queued' } | { kind: 'command'; name: string } | { kind: 'refused'; reason: string };

export type Reply = (text: string, kind: BotMessageKind) => Promise<void>;

export type Ready = StartPorts & { config: HermesConfig; hermes: HermesClient };

/** The message was not to be taken (not in the room, taken before): nothing happened, nothing is recorded. */
export const NOT_ADMITTED: StartOutcome = { kind: 'refused', reason: 'not-admitted' };

export async function admittedFor(ports: Pick<StartPorts, 'admitted'>): Promise<boolean> {
    return ports.admitted ? ports.admitted : true;
}
