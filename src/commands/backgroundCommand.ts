import { translator } from '../i18n/messages';
import { LogPort } from '../security/safeLog';

/*
 * `/hermes background <prompt>`: a task in a one-off session of its own, so the conversation
 * it was asked in goes on meanwhile (Hermes's gateways' `/background`). The bot posts a public
 * "started (id)" message; the answer comes in the thread under it (in a DM, quoting it) and
 * mentions the asker; `/hermes stop <id>` stops it. Its turn is a turn like any other: admitted
 * (room policy, daily budgets), counted by max_parallel_turns and usage, safe across restarts.
 */

/** A task's id as people type it: eight hex digits (32 bits, drawn per task; a clash is a refused claim). */
const TASK_ID = /^[0-9a-f]{8}$/;

/** The turn of task `id`: never a message id, so no mention's turn can take its place. */
export function backgroundTurnId(id: string): string {
    return `bg.${id}`;
}

/** The turn named by a `/hermes stop <id>` argument, when it reads as a task id at all. */
export function backgroundTurnOf(arg: string): string | undefined {
    const id = arg.trim().toLowerCase();
    return TASK_ID.test(id) ? backgroundTurnId(id) : undefined;
}

export interface BackgroundTask {
    id: string;
    turnId: string;
    prompt: string;
    who: { id: string; username: string };
    /** Where the command was run: the "started" message goes there. */
    roomId: string;
    threadId?: string;
}

/** What the engine supplies (engine/backgroundPorts.ts). */
export interface BackgroundPorts {
    /** A new task id (TASK_ID's form). */
    newId: () => string;
    /** Admits the task, posts its "started" message and starts its turn; false when refused (the caller was told why) or doubled. */
    start: (task: BackgroundTask) => Promise<boolean>;
}

/**
 * Starts a task for `who`. The reply is the caller's alone: empty once the task started (its
 * public message says everything) or was refused (the refusal was told); the usage otherwise.
 */
export async function backgroundCommand(
    args: string,
    who: { id: string; username: string },
    where: { roomId: string; threadId?: string },
    ports: BackgroundPorts & { log: LogPort; language?: string },
): Promise<string> {
    const prompt = args.trim();
    if (!prompt) {
        return translator(ports.language)('background_usage');
    }
    const id = ports.newId();
    const started = await ports.start({ id, turnId: backgroundTurnId(id), prompt, who, roomId: where.roomId, threadId: where.threadId });
    ports.log.info(`Background task ${id} by ${who.id} in room ${where.roomId} ${started ? 'started' : 'not started'}.`);
    return '';
}
