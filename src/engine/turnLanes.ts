import { IModify } from '@rocket.chat/apps-engine/definition/accessors';
import { TickJob } from '../turns/tickPorts';

/*
 * The scheduler lanes of turn jobs and how a turn's next step is scheduled on its lane.
 */

const TURN_JOB = 'hermes-turn';

/**
 * Rocket.Chat's scheduler (Agenda, `defaultConcurrency: 1`) runs one job per processor name at a
 * time in an instance: with one turn processor, every step of every turn queued behind every
 * other. Turns are spread over these processors, each chain of a turn always on the same one,
 * so one turn's steps still run one at a time while different turns' steps run side by side
 * (Agenda's own cap across names is 20). Eight: a step that waits (a finishing lease settles
 * for 200 ms, turns/lease.ts) holds only its own lane, and the next turn rarely shares it
 * (`npm run load`: 154 s with four lanes, 145 s with eight).
 *
 * By chain, not by turn alone: a process killed in a job leaves that processor busy on its
 * instance for the engine's 30 s request timeout, and the job it was in is most often a job of
 * the very turn that must now be taken over. A turn taken over gets a new chain (sweep.ts,
 * takeOverGone.ts), and with it most likely another lane (npm run chaos: a restarted turn's
 * first tick waited 20 s for its old lane on both instances).
 */
const TURN_LANES = 8;
export const TURN_JOBS = Array.from({ length: TURN_LANES }, (_, i) => (i === 0 ? TURN_JOB : `${TURN_JOB}-${i}`));

/** The processor of a turn's jobs: a stable hash of its id and chain. */
function turnJobName(turnId: string, chain = ''): string {
    const key = `${turnId}:${chain}`;
    let h = 0;
    for (let i = 0; i < key.length; i++) {
        h = (h * 31 + key.charCodeAt(i)) >>> 0;
    }
    return TURN_JOBS[h % TURN_JOBS.length];
}

/** Schedules a tick of a turn as a one-time job (the scheduler survives app restarts); resolves with its job id. */
export async function scheduleTick(modify: IModify, job: TickJob, delayMs: number): Promise<string | void> {
    const data: Record<string, unknown> = { turnId: job.turnId, chain: job.chain };
    if (job.wake) {
        data.wake = true;
    }
    return modify.getScheduler().scheduleOnce({ id: turnJobName(job.turnId, job.chain), when: new Date(Date.now() + Math.max(0, delayMs)), data });
}
