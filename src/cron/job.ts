import type { Schedule } from '../time/schedule';

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
    /** Why the app paused it (a firing's re-check, cron/recheck.ts); absent when its owner paused it. */
    pausedWhy?: PauseReason;
    /** The turn of the run in flight: one run of a job at a time. */
    running?: string;
    /** `why` of a skipped time: absent, the run before was still going; `budget`, a daily budget was used up. */
    last?: { at: number; status: 'delivered' | 'silent' | 'failed' | 'skipped'; error?: string; why?: 'budget' };
}

/** What a firing found no longer true: the job stops until someone resumes it (`cron list` says why). */
export type PauseReason = 'owner-not-allowed' | 'owner-not-member' | 'owner-cannot-post' | 'bot-not-member' | 'bot-cannot-post' | 'room-policy';

/** Where jobs live. The engine keeps them in the app's persistence (they survive app upgrades). */
export interface CronStore {
    all(): Promise<CronJob[]>;
    get(id: string): Promise<CronJob | undefined>;
    save(job: CronJob): Promise<void>;
    remove(id: string): Promise<void>;
}

/**
 * The session a job runs in: its own, so runs remember earlier runs and never mix into a person's
 * conversation; under the room's profile when its policy names one (as the room's own keys are).
 */
export function cronSessionKey(jobId: string, profile?: string): string {
    return `agent:${profile ?? 'main'}:rocketchat:cron:${jobId}`;
}
