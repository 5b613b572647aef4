import { randomUUID } from 'crypto';
import { triggerText } from '../context/contextBlock';
import { label } from '../context/renderLine';
import { LogPort } from '../security/safeLog';
import { TickJob } from '../turns/tickPorts';
import { TurnRecord, TurnStore } from '../turns/turnRecord';
import { cronSessionKey, CronJob, CronStore, SILENT } from './job';
import { nextFire } from './schedule';

export interface FirePorts {
    store: CronStore;
    turns: TurnStore;
    /** The persisted receipt of a run's id: false when another instance (or an earlier firing) took it. */
    claim: (runId: string) => Promise<boolean>;
    schedule: (job: TickJob) => Promise<unknown>;
    timeZone: string;
    log: LogPort;
    now: () => number;
}

/**
 * Starts every job whose time has come (the sweep calls this every 10 s: one persistence
 * read when nothing is due). A job whose previous run is still going skips this time, with a
 * log line; one missed while the app was down runs once, late, then keeps its schedule.
 */
export async function fireDue(ports: FirePorts): Promise<void> {
    const now = ports.now();
    for (const job of await ports.store.all()) {
        if (job.paused || job.nextAt === undefined || job.nextAt > now) {
            continue;
        }
        const due = job.nextAt;
        if (job.running && (await ports.turns.get(job.running))) {
            ports.log.warn(`Scheduled prompt ${job.id} (${job.name}) skipped its run of ${new Date(due).toISOString()}: the previous run is still going.`);
            await ports.store.save({ ...job, nextAt: nextFire(job.schedule, now, ports.timeZone, job.createdAt), last: { at: now, status: 'skipped' } });
            continue;
        }
        if (now - due > 60_000) {
            ports.log.info(
                `Scheduled prompt ${job.id} (${job.name}) runs ${Math.round((now - due) / 1000)} s late (the app was not running at ${new Date(due).toISOString()}).`,
            );
        }
        await startRun(job, `cron.${job.id}.${due}`, ports);
    }
}

/**
 * One run of a job as a turn of its own session, delivered where the job lives. The run's id
 * is derived from the job and its scheduled time and claimed first: two instances (or a
 * retried scheduler job) firing the same time start it once.
 */
export async function startRun(job: CronJob, runId: string, ports: FirePorts): Promise<boolean> {
    if (!(await ports.claim(runId))) {
        return false;
    }
    const now = ports.now();
    const chain = randomUUID();
    const rec: TurnRecord = {
        id: runId,
        createdAt: now,
        seq: now,
        chain,
        sessionKey: cronSessionKey(job.id),
        roomId: job.roomId,
        threadId: job.threadId,
        roomType: job.roomType,
        roomName: job.roomName,
        kind: job.kind,
        askerId: job.ownerId,
        askerUsername: job.ownerUsername,
        system: cronSystem(job),
        user: triggerText(job.prompt),
        phase: 'queued',
        progress: [],
        attempts: 0,
        cron: { jobId: job.id, name: job.name },
    };
    await ports.turns.save(rec);
    const next = job.nextAt !== undefined && job.nextAt <= now ? nextFire(job.schedule, now, ports.timeZone, job.createdAt) : job.nextAt;
    await ports.store.save({ ...job, running: runId, nextAt: next });
    await ports.schedule({ turnId: runId, chain });
    ports.log.info(`Scheduled prompt ${job.id} (${job.name}) started (run ${runId}).`);
    return true;
}

/** A run ended: the job is free for its next time, and `list` shows how it went. */
export async function runEnded(store: CronStore, jobId: string, runId: string, outcome: NonNullable<CronJob['last']>): Promise<void> {
    const job = await store.get(jobId);
    if (!job) {
        return;
    }
    await store.save({ ...job, running: job.running === runId ? undefined : job.running, last: outcome });
}

function cronSystem(job: CronJob): string {
    const where =
        job.kind === 'dm'
            ? 'a private direct message'
            : `the Rocket.Chat room ${job.roomName ? `#${label(job.roomName)} ` : ''}(room id ${job.roomId})${job.threadId ? `, in a thread` : ''}`;
    return [
        `You are Hermes, an AI agent who is a member of a Rocket.Chat workspace. This is a scheduled prompt ("${label(job.name)}") that @${label(job.ownerUsername)} set up; your answer is posted in ${where}.`,
        'Rocket.Chat renders Markdown: use it where it helps. Keep the delivery concise.',
        `If there is nothing worth posting this time, answer exactly ${SILENT} and nothing will be posted.`,
    ].join('\n');
}
