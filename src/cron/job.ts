import { label } from '../security/inertText';
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

/** What a run's answer that should post nothing is, exactly (Hermes's own cron convention). */
export const SILENT = '[SILENT]';

/** The header every delivery starts with (Hermes's own cron framing); the name as plain text. */
export function deliveryHeader(name: string): string {
    return `[Cron delivery: ${plainName(name)}]`;
}

/** Zero-width space: invisible, but no user or room name can start right after it. */
const ZWSP = '\u200B';

/**
 * A job's name as plain text wherever it is shown (the public header of every delivery, `cron
 * list`, replies): the creator chose it, and as raw Markdown `@all` or `@here` notified the whole
 * room under the bot's name, `#room` linked elsewhere and `*`, `~`, `` ` ``, `||`, `<url|text>`
 * restyled the header. One line without brackets (no `[text](link)`), Hermes references inert
 * (label); `@` and `#` get a zero-width space after them (Rocket.Chat's mention rules, server and
 * parser, need a name character right after); an underscore becomes a hyphen (`daily-report`:
 * whether the parser reads `_` as italics depends on the letters around it); the other characters
 * it reads as emphasis, code, spoilers, `<…>` links and KaTeX are dropped. Applied when shown, so
 * jobs stored before are shown the same way; applied twice, it gives the same text.
 */
export function plainName(name: string): string {
    const plain = label(name)
        .replace(/([@＠#＃])(?!\u200B)/g, `$1${ZWSP}`)
        .replace(/_/g, '-')
        .replace(/[*~`|<>\\$]/g, '')
        .replace(/\s+/g, ' ')
        .trim();
    return plain || 'job';
}
