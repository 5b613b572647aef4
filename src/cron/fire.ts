import { randomUUID } from 'crypto';
import { triggerText } from '../context/contextBlock';
import { label } from '../security/inertText';
import { roomInstructionLine } from '../turns/turn';
import { LogPort } from '../security/safeLog';
import { TickJob } from '../turns/tickPorts';
import { TurnRecord } from '../turns/turnRecord';
import { TurnStore } from '../turns/turnStore';
import { SILENT } from '../delivery/cronDelivery';
import { cronSessionKey, CronJob, CronStore, PauseReason } from './job';
import { recheckJob, RecheckPorts, RecheckRefusal } from './recheck';
import { nextFire } from '../time/schedule';

export interface FirePorts extends RecheckPorts {
    store: CronStore;
    turns: TurnStore;
    /** The persisted receipt of a run's id: false when another instance (or an earlier firing) took it. */
    claim: (runId: string) => Promise<boolean>;
    /** When a run's id was claimed (ms), if it was. */
    claimedAt: (runId: string) => Promise<number | undefined>;
    schedule: (job: TickJob) => Promise<unknown>;
    log: LogPort;
}

/** How a run's start went: started, taken by another instance, or stopped by its re-check. */
export type RunStart = 'started' | 'taken' | { paused: PauseReason } | 'budget';

/**
 * Starts every job whose time has come (the sweep calls this every 10 s: one persistence
 * read when nothing is due). A job whose previous run is still going skips this time, with a
 * log line; one missed while the app was down runs once, late, then keeps its schedule. A job
 * that fails is logged and left for the next sweep: it never keeps the others from running.
 */
export async function fireDue(ports: FirePorts): Promise<void> {
    const now = ports.now();
    for (const job of await ports.store.all()) {
        if (job.paused || job.nextAt === undefined || job.nextAt > now) {
            continue;
        }
        try {
            await fireOne(job, job.nextAt, now, ports);
        } catch (error) {
            ports.log.error(`Scheduled prompt ${job.id} could not start its run: ${error instanceof Error ? error.message : String(error)}`);
        }
    }
}

async function fireOne(job: CronJob, due: number, now: number, ports: FirePorts): Promise<void> {
    if (job.running && (await ports.turns.get(job.running))) {
        ports.log.warn(`Scheduled prompt ${job.id} (${job.name}) skipped its run of ${new Date(due).toISOString()}: the previous run is still going.`);
        await ports.store.save({ ...job, nextAt: nextFire(job.schedule, now, ports.config.timezone, job.createdAt), last: { at: now, status: 'skipped' } });
        return;
    }
    if (now - due > 60_000) {
        ports.log.info(
            `Scheduled prompt ${job.id} (${job.name}) runs ${Math.round((now - due) / 1000)} s late (the app was not running at ${new Date(due).toISOString()}).`,
        );
    }
    const runId = `cron.${job.id}.${due}`;
    if ((await startRun(job, runId, ports)) === 'taken' && (await lostRun(job, runId, now, ports))) {
        ports.log.warn(`Scheduled prompt ${job.id} (${job.name}): run ${runId} was claimed but never started (its process died); starting it now.`);
        await startRun(job, runId, ports, `${runId}.again`);
    }
}

/** A claim older than this with no turn behind it was left by a process that died between the two writes. */
const LOST_RUN_MS = 60_000;

/**
 * A time claimed (by this or another instance) whose run was never saved: the claiming process
 * died between the claim and the turn record, and the job still waits on that time. Without this,
 * every later sweep would find the time taken and the job would never run again. A claim younger
 * than a minute may be another instance still writing, so it is left alone.
 */
async function lostRun(job: CronJob, runId: string, now: number, ports: FirePorts): Promise<boolean> {
    if (job.running === runId || (await ports.turns.get(runId))) {
        return false;
    }
    const at = await ports.claimedAt(runId);
    return at !== undefined && now - at >= LOST_RUN_MS;
}

/**
 * One run of a job as a turn of its own session, delivered where the job lives. Re-checked
 * first (cron/recheck.ts): what no longer holds pauses the job, a used-up budget skips this
 * time. The run's id is derived from the job and its scheduled time and claimed next: two
 * instances (or a retried scheduler job) firing the same time start it once.
 */
export async function startRun(job: CronJob, runId: string, ports: FirePorts, claimId = runId): Promise<RunStart> {
    const check = await recheckJob(job, ports);
    if (!check.admit) {
        return refused(job, check, ports);
    }
    // `claimId`: a lost run is started again under a claim of its own, so only one instance recovers it.
    if (!(await ports.claim(claimId))) {
        return 'taken';
    }
    const now = ports.now();
    const chain = randomUUID();
    const rec: TurnRecord = {
        id: runId,
        createdAt: now,
        seq: now,
        chain,
        sessionKey: cronSessionKey(job.id, check.profile),
        roomId: job.roomId,
        threadId: job.threadId,
        roomType: job.roomType,
        roomName: job.roomName,
        kind: job.kind,
        askerId: job.ownerId,
        askerUsername: job.ownerUsername,
        system: cronSystem(job, check.instruction),
        // The room's profile and model, as a mention's turn in the room gets them.
        route: check.route,
        user: triggerText(job.prompt),
        phase: 'queued',
        progress: [],
        attempts: 0,
        cron: { jobId: job.id, name: job.name },
    };
    await ports.turns.save(rec);
    await ports.store.save({ ...job, running: runId, nextAt: nextTime(job, now, ports) });
    await ports.schedule({ turnId: runId, chain });
    ports.log.info(`Scheduled prompt ${job.id} (${job.name}) started (run ${runId}).`);
    return 'started';
}

/** A re-check that failed: the job pauses with its reason, or (a budget) moves on to its next time. Ids only in the log. */
async function refused(job: CronJob, check: RecheckRefusal, ports: FirePorts): Promise<RunStart> {
    const now = ports.now();
    if ('budget' in check) {
        ports.log.info(
            `Scheduled prompt ${job.id} of ${job.ownerId} skipped a run in room ${job.roomId}: daily budget ${check.budget.budget} (${check.budget.limit}) reached.`,
        );
        await ports.store.save({ ...job, nextAt: nextTime(job, now, ports), last: { at: now, status: 'skipped', why: 'budget' } });
        return 'budget';
    }
    ports.log.warn(`Scheduled prompt ${job.id} of ${job.ownerId} in room ${job.roomId} paused: ${check.pause}.`);
    await ports.store.save({ ...job, paused: true, pausedWhy: check.pause });
    return { paused: check.pause };
}

/** A due time moves on; a manual run (`cron run`) leaves the schedule alone. */
function nextTime(job: CronJob, now: number, ports: FirePorts): number | undefined {
    return job.nextAt !== undefined && job.nextAt <= now ? nextFire(job.schedule, now, ports.config.timezone, job.createdAt) : job.nextAt;
}

/**
 * A run ended: the job is free for its next time, and `list` shows how it went. A job still
 * due at this run's time (its process died after saving the turn but before the job) moves on
 * now, or the time would look lost and run again.
 */
export async function runEnded(store: CronStore, jobId: string, runId: string, outcome: NonNullable<CronJob['last']>, timezone: string): Promise<void> {
    const job = await store.get(jobId);
    if (!job) {
        return;
    }
    const stuck = job.nextAt !== undefined && runId === `cron.${job.id}.${job.nextAt}`;
    await store.save({
        ...job,
        running: job.running === runId ? undefined : job.running,
        last: outcome,
        ...(stuck ? { nextAt: nextFire(job.schedule, outcome.at, timezone, job.createdAt) } : {}),
    });
}

function cronSystem(job: CronJob, instruction: string | undefined): string {
    const where =
        job.kind === 'dm'
            ? 'a private direct message'
            : `the Rocket.Chat room ${job.roomName ? `#${label(job.roomName)} ` : ''}(room id ${job.roomId})${job.threadId ? `, in a thread` : ''}`;
    const lines = [
        `You are Hermes, an AI agent who is a member of a Rocket.Chat workspace. This is a scheduled prompt ("${label(job.name)}") that @${label(job.ownerUsername)} set up; your answer is posted in ${where}.`,
        'Rocket.Chat renders Markdown: use it where it helps. Keep the delivery concise.',
        `If there is nothing worth posting this time, answer exactly ${SILENT} and nothing will be posted.`,
    ];
    if (instruction) {
        lines.push(roomInstructionLine(instruction));
    }
    return lines.join('\n');
}
