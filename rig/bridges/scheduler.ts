import { randomBytes } from 'crypto';
import { IOnetimeSchedule, IProcessor, IRecurringSchedule } from '@rocket.chat/apps-engine/definition/scheduler';
import { SchedulerBridge } from '@rocket.chat/apps-engine/server/bridges';
import type { RigServer } from '../server';

interface RegisteredProcessor {
    id: string;
    processor: (jobContext: Record<string, unknown>) => Promise<void>;
}

/** One instance's processor of a name: Agenda runs one job of a name at a time per instance. */
interface Worker {
    instance: RigSchedulerBridge;
    processor: RegisteredProcessor;
    busy: boolean;
    /** Its instance was killed: it takes no more jobs. */
    dead?: boolean;
    /** The job it runs now, if any (its lock is this instance's until the run ends). */
    running?: Job;
}

/** One run of a job: `at - due` is how long it waited for its processor (Agenda runs one at a time). */
export interface JobRun {
    /** The processor. */
    id: string;
    jobId: string;
    /** When it was due (Date.now() clock), and how far ahead it was scheduled. */
    due: number;
    /** Which instance ran it (0: the first; see RigServerOptions.peer). */
    instance: number;
    planned: number;
    at: number;
    end?: number;
    error?: string;
    /** The data the job was scheduled with. */
    data: Record<string, unknown>;
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
    /** Its instance died while running it: Agenda's lock (`lockedAt`) holds it until then. */
    lockedUntil?: number;
}

/**
 * Agenda's `defaultLockLifetime` (10 min; packages/agenda/src/Agenda.ts): a job whose instance
 * died mid-run stays locked that long, and only then may another instance run it. Tests may
 * shorten it (RigSchedulerBridge.lockLifetimeMs).
 */
export const AGENDA_LOCK_LIFETIME_MS = 10 * 60_000;

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
    /**
     * The scheduler whose jobs this instance shares (a peer instance's, as every instance's
     * Agenda reads one MongoDB collection), or this one. Every job lives there; each instance
     * only adds its workers.
     */
    private readonly home: RigSchedulerBridge;
    private readonly workers = new Map<string, Worker[]>();
    private readonly jobs = new Map<string, Job>();
    /** Due jobs waiting for their processor, per processor name, in due order. */
    private readonly queues = new Map<string, Job[]>();
    private readonly idleWaiters: Array<() => void> = [];
    private stopped = false;
    private readonly instances: RigSchedulerBridge[] = [];
    /** Every run, in start order: processor, when it was due, start and end time, the delay it was scheduled with, error. */
    public readonly runs: Array<JobRun>;
    /** The most jobs of one processor name seen running at once in one instance (Agenda keeps it at 1). */
    public maxConcurrent = 0;
    /** How long a dead instance's running job stays locked (see AGENDA_LOCK_LIFETIME_MS). */
    public lockLifetimeMs = AGENDA_LOCK_LIFETIME_MS;

    constructor(private readonly rig: RigServer) {
        super();
        this.home = rig.peer?.bridges.scheduler ?? this;
        this.runs = this.home === this ? [] : this.home.runs;
        this.home.instances.push(this);
    }

    protected async registerProcessors(processors: IProcessor[], appId: string): Promise<void | string[]> {
        if (this.home !== this) {
            return this.home.registerFor(this, processors, appId);
        }
        return this.registerFor(this, processors, appId);
    }

    private async registerFor(instance: RigSchedulerBridge, processors: IProcessor[], appId: string): Promise<void | string[]> {
        const started: string[] = [];
        for (const p of processors) {
            const list = (this.workers.get(p.id) ?? []).filter((w) => w.instance !== instance);
            list.push({ instance, processor: p as unknown as RegisteredProcessor, busy: false });
            this.workers.set(p.id, list);
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
        if (this.home !== this) {
            return this.home.scheduleOnce(job, appId);
        }
        this.rig.calls.record('write', 'scheduler.scheduleOnce');
        const when = typeof job.when === 'string' ? parseWhen(job.when) : new Date(job.when).getTime();
        return this.add({ id: objectId(), name: job.id, appId, data: { ...(job.data ?? {}) }, nextRunAt: when });
    }

    protected async scheduleRecurring(job: IRecurringSchedule, appId: string): Promise<void | string> {
        if (this.home !== this) {
            return this.home.scheduleRecurring(job, appId);
        }
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
        if (this.home !== this) {
            return this.home.cancelJob(jobId);
        }
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
        if (this.home !== this) {
            // One instance's app stopping (its engine going away) cancels nothing the others run.
            return;
        }
        for (const job of [...this.jobs.values()].filter((j) => j.appId === appId)) {
            this.drop(job.id);
        }
    }

    /** Runs a registered processor as another scheduler firing would (same concurrency rule). */
    public fireNow(processorId: string, data: Record<string, unknown>): Promise<void> {
        if (this.home !== this) {
            return this.home.fireNow(processorId, data);
        }
        const name = this.processorName(processorId);
        return new Promise((resolve) => {
            const job: Job = { id: objectId(), name, appId: '', data: { ...data }, nextRunAt: Date.now() };
            this.jobs.set(job.id, job);
            this.enqueue(job, resolve);
        });
    }

    /**
     * Brings the one-time jobs of a processor that wait for their time forward to now, as a
     * clock moved on would (tests: a fresh rig's start sweep, due 11 s after the start, when
     * there is nothing yet for it to find). Jobs already queued are left as they are.
     */
    public dueNow(processorId: string): number {
        if (this.home !== this) {
            return this.home.dueNow(processorId);
        }
        const name = this.processorName(processorId);
        const waiting = [...this.jobs.values()].filter((j) => j.everyMs === undefined && j.name === name && j.nextRunAt > Date.now());
        for (const job of waiting) {
            clearTimeout(job.timer);
            job.nextRunAt = Date.now();
            this.arm(job);
        }
        return waiting.length;
    }

    /** One-time jobs not yet run (recurring ones are not counted). */
    public pendingOnce(): number {
        if (this.home !== this) {
            return this.home.pendingOnce();
        }
        return [...this.jobs.values()].filter((j) => j.everyMs === undefined).length;
    }

    /** One-time jobs of a processor not yet run (waiting for their time or for the processor). */
    public pendingOf(processorId: string): number {
        if (this.home !== this) {
            return this.home.pendingOf(processorId);
        }
        const name = this.processorName(processorId);
        return [...this.jobs.values()].filter((j) => j.everyMs === undefined && j.name === name).length;
    }

    /** Resolves when the next job has run (or right away when none is waiting). */
    public nextRun(): Promise<void> {
        if (this.home !== this) {
            return this.home.nextRun();
        }
        return new Promise((resolve) => {
            if (this.pendingOnce() === 0) {
                return resolve();
            }
            this.idleWaiters.push(resolve);
        });
    }

    /**
     * This instance goes away (its server stops or is killed): its workers take no more jobs; the
     * shared jobs stay. A job it was running keeps its lock: Agenda computed a recurring job's next
     * run and cleared a one-time job's when the run started, so the one-time job never runs again
     * and the recurring one waits for its lock to expire (lockLifetimeMs) before any instance
     * takes it.
     */
    public stopInstance(): void {
        const until = Date.now() + this.home.lockLifetimeMs;
        for (const list of this.home.workers.values()) {
            for (const w of list.filter((x) => x.instance === this)) {
                w.dead = true;
                w.busy = false;
                if (w.running) {
                    w.running.lockedUntil = until;
                }
            }
        }
        for (const name of this.home.queues.keys()) {
            this.home.process(name);
        }
    }

    /** This instance stops: its workers take no more jobs; the last instance to stop stops the scheduler. */
    public stopAll(): void {
        this.stopInstance();
        const home = this.home;
        if ([...home.workers.values()].some((list) => list.some((w) => !w.dead))) {
            return;
        }
        home.stopped = true;
        for (const job of home.jobs.values()) {
            clearTimeout(job.timer);
        }
        home.jobs.clear();
        home.queues.clear();
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

    /**
     * Agenda's concurrency rule, per instance: a due job of `name` starts on an instance that
     * runs no job of `name` (the one that has waited longest), and only there (its Mongo lock).
     */
    private process(name: string): void {
        if (this.stopped) {
            return;
        }
        const list = this.workers.get(name) ?? [];
        const worker = list.find((w) => !w.busy && !w.dead);
        const job = worker ? this.queues.get(name)?.shift() : undefined;
        if (!worker || !job) {
            return;
        }
        worker.busy = true;
        worker.running = job;
        // The next job of this name prefers another instance: jobs spread as they do over several Agendas.
        list.splice(list.indexOf(worker), 1);
        list.push(worker);
        this.maxConcurrent = Math.max(this.maxConcurrent, 1);
        const started = Date.now();
        void this.run(job, worker).finally(() => {
            worker.busy = false;
            worker.running = undefined;
            this.onDone.get(job)?.();
            this.onDone.delete(job);
            if (job.everyMs !== undefined && this.jobs.has(job.id)) {
                // Its next run was set when this one started; a dead instance's lock holds it longer.
                job.nextRunAt = job.lockedUntil !== undefined ? Math.max(job.lockedUntil, started + job.everyMs) : Date.now() + job.everyMs;
                job.lockedUntil = undefined;
                job.armedAt = Date.now();
                this.arm(job);
            } else {
                this.jobs.delete(job.id);
            }
            this.idleWaiters.splice(0).forEach((w) => w());
            this.process(name);
        });
        this.process(name);
    }

    private async run(job: Job, worker: Worker): Promise<void> {
        const record: JobRun = {
            id: job.name,
            jobId: job.id,
            at: Date.now(),
            due: job.nextRunAt,
            planned: job.nextRunAt - (job.armedAt ?? job.nextRunAt),
            instance: this.instances.indexOf(worker.instance),
            data: { ...job.data },
        };
        this.runs.push(record);
        try {
            await worker.processor.processor({ ...job.data, jobId: job.id });
        } catch (error) {
            record.error = error instanceof Error ? error.message : String(error);
        } finally {
            record.end = Date.now();
        }
    }

    /** Engine processor ids carry the app id (`<id>_<appId>`); tests name the bare id. */
    private processorName(processorId: string): string {
        const found = [...this.workers.keys()].find((id) => id === processorId || id.startsWith(`${processorId}_`) || id.endsWith(`_${processorId}`));
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
