import { randomBytes } from 'crypto';
import { IOnetimeSchedule, IProcessor, IRecurringSchedule } from '@rocket.chat/apps-engine/definition/scheduler';
import { SchedulerBridge } from '@rocket.chat/apps-engine/server/bridges';
import type { RigServer } from '../server';

interface RegisteredProcessor {
    id: string;
    processor: (jobContext: Record<string, unknown>) => Promise<void>;
}

/** One run of a job: `at - due` is how long it waited for its processor (Agenda runs one at a time). */
export interface JobRun {
    /** The processor. */
    id: string;
    jobId: string;
    /** When it was due (Date.now() clock), and how far ahead it was scheduled. */
    due: number;
    planned: number;
    at: number;
    end?: number;
    error?: string;
}

interface Job {
    /** A 24-hex ObjectId string, as `job.attrs._id.toString()` returns on the server. */
    id: string;
    name: string;
    appId: string;
    data: Record<string, unknown>;
    nextRunAt: number;
    /** When the job was created or last re-armed (Date.now()), so a run can tell its planned delay from its queue wait. */
    armedAt?: number;
    /** Recurring interval in ms (Agenda `every`), undefined for one-time ('normal') jobs. */
    everyMs?: number;
    timer?: NodeJS.Timeout;
}

/**
 * Rocket.Chat's app scheduler (`apps/meteor/app/apps/server/bridges/scheduler.ts`) is Agenda
 * with `defaultConcurrency: 1`: per processor name, one job runs at a time in an instance and
 * jobs that come due meanwhile wait in Agenda's queue (`packages/agenda/src/Agenda.ts`,
 * `_processJobs` / `jobProcessing`). This rig keeps exactly that rule, so an app whose jobs
 * block for seconds is as slow here as on a real server.
 * - `scheduleOnce` always creates a new job (two calls, two jobs) and returns its ObjectId.
 * - A RECURRING startup setting runs at registration unless `skipImmediate` (Agenda `every`).
 * - `cancelJob(id)` removes a waiting job by that id (or, for a name, every waiting job of it); a running job finishes.
 * - The processor gets the job's data plus `jobId`; a one-time job is removed after it ran.
 */
export class RigSchedulerBridge extends SchedulerBridge {
    private readonly processors = new Map<string, RegisteredProcessor>();
    private readonly jobs = new Map<string, Job>();
    /** Due jobs waiting for their processor, per processor name, in due order. */
    private readonly queues = new Map<string, Job[]>();
    private readonly running = new Map<string, number>();
    private readonly idleWaiters: Array<() => void> = [];
    private stopped = false;
    /** Every run, in start order: processor, when it was due, start and end time, the delay it was scheduled with, error. */
    public readonly runs: Array<JobRun> = [];
    /** The most jobs of one processor name seen running at once (Agenda keeps it at 1). */
    public maxConcurrent = 0;

    constructor(private readonly rig: RigServer) {
        super();
    }

    protected async registerProcessors(processors: IProcessor[], appId: string): Promise<void | string[]> {
        const started: string[] = [];
        for (const p of processors) {
            this.processors.set(p.id, p as unknown as RegisteredProcessor);
            const startup = p.startupSetting;
            if (startup?.type === 'recurring') {
                started.push(
                    (await this.scheduleRecurring(
                        { id: p.id, interval: startup.interval, skipImmediate: startup.skipImmediate, data: startup.data },
                        appId,
                    )) as string,
                );
            } else if (startup?.type === 'onetime' && ![...this.jobs.values()].some((j) => j.name === p.id && j.everyMs === undefined)) {
                started.push((await this.scheduleOnce({ id: p.id, when: startup.when, data: startup.data }, appId)) as string);
            }
        }
        return started.length ? started : undefined;
    }

    protected async scheduleOnce(job: IOnetimeSchedule, appId: string): Promise<void | string> {
        this.rig.calls.record('write', 'scheduler.scheduleOnce');
        const when = typeof job.when === 'string' ? parseWhen(job.when) : new Date(job.when).getTime();
        return this.add({ id: objectId(), name: job.id, appId, data: { ...(job.data ?? {}) }, nextRunAt: when });
    }

    protected async scheduleRecurring(job: IRecurringSchedule, appId: string): Promise<void | string> {
        this.rig.calls.record('write', 'scheduler.scheduleRecurring');
        // Agenda `every` keeps one job per name: a second call replaces the first.
        for (const existing of [...this.jobs.values()].filter((j) => j.name === job.id && j.everyMs !== undefined)) {
            this.drop(existing.id);
        }
        const everyMs = typeof job.interval === 'number' ? job.interval * 1000 : parseWhen(`in ${job.interval}`) - Date.now();
        return this.add({
            id: objectId(),
            name: job.id,
            appId,
            data: { ...(job.data ?? {}) },
            nextRunAt: Date.now() + (job.skipImmediate ? everyMs : 0),
            everyMs,
        });
    }

    /**
     * bridges/scheduler.ts cancelJob: the part before `_` as a job document id when it is a
     * valid ObjectId; otherwise (an app cancelling by processor id) every job of that name.
     */
    protected async cancelJob(jobId: string): Promise<void> {
        this.rig.calls.record('write', 'scheduler.cancelJob');
        const head = jobId.split('_')[0];
        if (/^[0-9a-f]{24}$/i.test(head)) {
            this.drop(head);
            return;
        }
        for (const job of [...this.jobs.values()].filter((j) => j.name === jobId && j.everyMs === undefined)) {
            this.drop(job.id);
        }
    }

    protected async cancelAllJobs(appId: string): Promise<void> {
        for (const job of [...this.jobs.values()].filter((j) => j.appId === appId)) {
            this.drop(job.id);
        }
    }

    /** Runs a registered processor as another scheduler firing would (same concurrency rule). */
    public fireNow(processorId: string, data: Record<string, unknown>): Promise<void> {
        const name = this.processorName(processorId);
        return new Promise((resolve) => {
            const job: Job = { id: objectId(), name, appId: '', data: { ...data }, nextRunAt: Date.now() };
            this.jobs.set(job.id, job);
            this.enqueue(job, resolve);
        });
    }

    /** One-time jobs not yet run (recurring ones are not counted). */
    public pendingOnce(): number {
        return [...this.jobs.values()].filter((j) => j.everyMs === undefined).length;
    }

    /** One-time jobs of a processor not yet run (waiting for their time or for the processor). */
    public pendingOf(processorId: string): number {
        const name = this.processorName(processorId);
        return [...this.jobs.values()].filter((j) => j.everyMs === undefined && j.name === name).length;
    }

    /** Resolves when the next job has run (or right away when none is waiting). */
    public nextRun(): Promise<void> {
        return new Promise((resolve) => {
            if (this.pendingOnce() === 0) {
                return resolve();
            }
            this.idleWaiters.push(resolve);
        });
    }

    public stopAll(): void {
        this.stopped = true;
        for (const job of this.jobs.values()) {
            clearTimeout(job.timer);
        }
        this.jobs.clear();
        this.queues.clear();
    }

    private add(job: Job): string {
        job.armedAt = Date.now();
        this.jobs.set(job.id, job);
        this.arm(job);
        return job.id;
    }

    private arm(job: Job): void {
        job.timer = setTimeout(() => this.enqueue(job), Math.max(0, job.nextRunAt - Date.now()));
    }

    private drop(id: string): void {
        const job = this.jobs.get(id);
        if (!job) {
            return;
        }
        clearTimeout(job.timer);
        this.jobs.delete(id);
        const queue = this.queues.get(job.name);
        const at = queue?.indexOf(job) ?? -1;
        if (queue && at !== -1) {
            queue.splice(at, 1);
        }
    }

    private readonly onDone = new Map<Job, () => void>();

    private enqueue(job: Job, done?: () => void): void {
        if (this.stopped || !this.jobs.has(job.id)) {
            return;
        }
        if (done) {
            this.onDone.set(job, done);
        }
        const queue = this.queues.get(job.name) ?? [];
        queue.push(job);
        queue.sort((a, b) => a.nextRunAt - b.nextRunAt);
        this.queues.set(job.name, queue);
        this.process(job.name);
    }

    /** Agenda's concurrency rule: start the next due job of `name` only when none of `name` runs. */
    private process(name: string): void {
        if ((this.running.get(name) ?? 0) >= 1 || this.stopped) {
            return;
        }
        const job = this.queues.get(name)?.shift();
        if (!job) {
            return;
        }
        this.running.set(name, 1);
        this.maxConcurrent = Math.max(this.maxConcurrent, this.running.get(name) ?? 0);
        void this.run(job).finally(() => {
            this.running.set(name, 0);
            this.onDone.get(job)?.();
            this.onDone.delete(job);
            if (job.everyMs !== undefined && this.jobs.has(job.id)) {
                job.nextRunAt = Date.now() + job.everyMs;
                job.armedAt = Date.now();
                this.arm(job);
            } else {
                this.jobs.delete(job.id);
            }
            this.idleWaiters.splice(0).forEach((w) => w());
            this.process(name);
        });
    }

    private async run(job: Job): Promise<void> {
        const record: JobRun = { id: job.name, jobId: job.id, at: Date.now(), due: job.nextRunAt, planned: job.nextRunAt - (job.armedAt ?? job.nextRunAt) };
        this.runs.push(record);
        try {
            const processor = this.processors.get(job.name);
            if (!processor) {
                throw new Error(`no processor ${job.name}`);
            }
            await processor.processor({ ...job.data, jobId: job.id });
        } catch (error) {
            record.error = error instanceof Error ? error.message : String(error);
        } finally {
            record.end = Date.now();
        }
    }

    /** Engine processor ids carry the app id (`<id>_<appId>`); tests name the bare id. */
    private processorName(processorId: string): string {
        const found = [...this.processors.keys()].find((id) => id === processorId || id.startsWith(`${processorId}_`) || id.endsWith(`_${processorId}`));
        return found ?? processorId;
    }
}

function objectId(): string {
    return randomBytes(12).toString('hex');
}

/** Agenda's human intervals, the few forms apps use: "in 5 seconds", "2 minutes". */
function parseWhen(when: string): number {
    const m = /(\d+(?:\.\d+)?)\s*(ms|millisecond|second|minute|hour)s?/i.exec(when);
    if (!m) {
        const date = Date.parse(when);
        if (Number.isNaN(date)) {
            throw new Error(`rig scheduler cannot parse "${when}"`);
        }
        return date;
    }
    const n = Number(m[1]);
    const unit = m[2].toLowerCase();
    const ms =
        unit.startsWith('ms') || unit.startsWith('milli') ? n : unit.startsWith('second') ? n * 1000 : unit.startsWith('minute') ? n * 60_000 : n * 3_600_000;
    return Date.now() + ms;
}
