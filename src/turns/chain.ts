import { TickJob, TickPorts } from './tickPorts';
import { processMemory } from './processMemory';

/**
 * The next tick of each turn's chain that this process scheduled and that has not run yet.
 * Scheduling the next one replaces it, so a turn never has two chain ticks waiting here,
 * whatever path (a step, a retry, a busy tick) schedules it.
 */
const successors = processMemory.map<string, string>('chain.successors');
/** Turns whose next chain tick is being scheduled right now: its id is not back yet. */
const scheduling = processMemory.set<string>('chain.scheduling');
/**
 * Chain ticks that started before their scheduling call had their id back (a job due at once
 * may): they are not waiting, whatever that call records when it returns.
 */
const ranEarly = processMemory.set<string>('chain.ranEarly');

export async function chainOn(next: TickJob, delayMs: number, ports: Pick<TickPorts, 'schedule' | 'cancel'>): Promise<void> {
    const previous = successors.get(next.turnId);
    if (previous) {
        successors.delete(next.turnId);
        await ports.cancel(previous).catch(() => undefined);
    }
    scheduling.add(next.turnId);
    let jobId: string | void;
    try {
        jobId = await ports.schedule({ turnId: next.turnId, chain: next.chain }, delayMs);
    } finally {
        scheduling.delete(next.turnId);
    }
    if (jobId && !ranEarly.delete(jobId)) {
        successors.set(next.turnId, jobId);
    }
}

/** Whether this process has a chain tick of the turn waiting. */
export function chainWaiting(turnId: string): boolean {
    return successors.has(turnId);
}

/** A chain tick started: it is no longer waiting. */
export function chainTickRan(job: TickJob): void {
    if (job.jobId && successors.get(job.turnId) === job.jobId) {
        successors.delete(job.turnId);
    } else if (job.jobId && scheduling.has(job.turnId)) {
        ranEarly.add(job.jobId);
    }
}

/** The turn ended: its waiting chain tick has nothing left to do. */
export async function chainEnded(turnId: string, ports: Pick<TickPorts, 'cancel'>): Promise<void> {
    const waiting = successors.get(turnId);
    successors.delete(turnId);
    if (waiting) {
        await ports.cancel(waiting).catch(() => undefined);
    }
}
