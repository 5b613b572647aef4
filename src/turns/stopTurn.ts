import { HermesClient } from '../hermes/client';
import { LiveTurns } from '../hermes/liveTurns';
import { LogPort } from '../security/safeLog';
import { hermesFor, TurnRecord } from './turnRecord';
import { TurnStore } from './turnStore';

/**
 * Stops the asker's running turn in a conversation: runs are stopped in Hermes (the run
 * settles as cancelled and the turn's tick says so in place of the answer); a chat
 * completion is interrupted by closing its connection.
 */
export async function stopTurn(sessionKey: string, user: Stopper, ports: StopPorts): Promise<TurnRecord | undefined> {
    const open = (await ports.store.openInSession(sessionKey)).filter((r) => r.askerId === user.id || ports.isAdmin);
    const running = open.find((r) => r.phase === 'running') ?? open[0];
    if (!running) {
        return undefined;
    }
    await stop(running, user, ports);
    return running;
}

/**
 * `/hermes stop <id>`: a background task (its turn's id), by its asker or an admin. Anyone
 * else, an id that names no background task, and one that ended get the same undefined: an
 * id typed by the caller tells them nothing of others' tasks.
 */
export async function stopBackgroundTurn(turnId: string, user: Stopper, ports: StopPorts): Promise<TurnRecord | undefined> {
    const rec = await ports.store.get(turnId);
    if (!rec?.background || (rec.askerId !== user.id && !ports.isAdmin)) {
        return undefined;
    }
    await stop(rec, user, ports);
    return rec;
}

type Stopper = { id: string; username: string };

interface StopPorts {
    store: TurnStore;
    hermes: HermesClient;
    live: LiveTurns;
    log: LogPort;
    isAdmin: boolean;
    wake?: (rec: TurnRecord) => Promise<void>;
}

async function stop(running: TurnRecord, user: Stopper, ports: StopPorts): Promise<void> {
    await ports.store.requestStop(running.id, user.username);
    if (running.runId) {
        await hermesFor(running, ports.hermes).stopRun(running.runId);
    } else {
        // A chat turn is interrupted by closing its stream; a queued one has no ticks until woken.
        ports.live.end(running.id);
        await ports.wake?.(running);
    }
    ports.log.info(`Turn for message ${running.id} stopped by ${user.id}.`);
}
