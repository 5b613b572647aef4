import type { Schedule } from './schedule';

/**
 * A scheduled prompt: the app's own record (Hermes cannot push into the app, so the app
 * schedules, and each firing is a normal turn: runs, approvals, exactly-once delivery).
 */
export interface CronJob {
    /** Short random id; the job's session is `agent:main:rocketchat:cron:<id>`. */
    id: string;
    name: string;
    ownerId: string;
    ownerUsername: string;
    /** Where deliveries land. */
    roomId: string;
    roomType: string;
    roomName?: string;
    threadId?: string;
    kind: 'dm' | 'room';
    schedule: Schedule;
    prompt: string;
    createdAt: number;
    /** The next scheduled time (ms); undefined once a one-shot has run. */
    nextAt?: number;
    paused?: boolean;
    /** The turn of the run in flight: one run of a job at a time. */
    running?: string;
    last?: { at: number; status: 'delivered' | 'silent' | 'failed' | 'skipped'; error?: string };
}

/** Where jobs live. The engine keeps them in the app's persistence (they survive app upgrades). */
export interface CronStore {
    all(): Promise<CronJob[]>;
    get(id: string): Promise<CronJob | undefined>;
    save(job: CronJob): Promise<void>;
    remove(id: string): Promise<void>;
}

/** The session a job runs in: its own, so runs remember earlier runs and never mix into a person's conversation. */
export function cronSessionKey(jobId: string): string {
    return `agent:main:rocketchat:cron:${jobId}`;
}

/** What a run's answer that should post nothing is, exactly (Hermes's own cron convention). */
export const SILENT = '[SILENT]';

/** The header every delivery starts with (Hermes's own cron framing). */
export function deliveryHeader(name: string): string {
    return `[Cron delivery: ${name}]`;
}
