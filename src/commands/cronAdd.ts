import { randomBytes } from 'crypto';
import { formatStamp } from '../time/timestamp';
import { CronJob } from '../cron/job';
import { plainName } from '../delivery/cronDelivery';
import { describeSchedule, nextFire, parseSchedule } from '../time/schedule';
import { translator } from '../i18n/messages';
import { autoTitle } from '../sessions/titles';
import { CronCommandPorts, Place } from './cronCommandPorts';

/*
 * Adding a scheduled prompt: `/hermes cron add` and the MCP tool `schedule_prompt` make the same
 * checks, in the same order (prepareJob), and say the same when it is added (addedText).
 */

const MAX_NAME = 40;

/** The private answer to a job added. */
export function addedText(job: CronJob, ports: Pick<CronCommandPorts, 'config' | 'language'>): string {
    return translator(ports.language)('cron_added', {
        name: plainName(job.name),
        id: job.id,
        schedule: describeSchedule(job.schedule, ports.config.timezone),
        next: formatStamp(new Date(job.nextAt as number), ports.config.timezone),
    });
}

/**
 * `/hermes cron add`'s checks, in its order, for a job of `who` from its words (the schedule,
 * then the prompt) in the place `where.place` resolves to: the job, not saved yet, or the
 * private answer saying why not. The MCP tool `schedule_prompt` makes the same checks.
 */
export async function prepareJob(
    words: string,
    where: { name?: string; to?: string; place: () => Promise<Place | undefined> },
    who: { id: string; username: string },
    admin: boolean,
    ports: CronCommandPorts,
): Promise<{ job: CronJob } | { refusal: string }> {
    const t = translator(ports.language);
    const c = ports.config;
    if (!admin && !c.cronUserIds.includes(who.id)) {
        return { refusal: t('cron_not_allowed') };
    }
    const parsed = parseSchedule(words, c.timezone, ports.now());
    if ('error' in parsed) {
        return { refusal: t('cron_bad_schedule', { error: parsed.error }) };
    }
    const place = await where.place();
    if (!place) {
        return { refusal: t('cron_bad_target', { target: where.to ?? '' }) };
    }
    // Its creator is in that room and sees what it is: saying why leaks nothing, and a job that could never deliver is not kept.
    const refusal = await ports.botCannotPost(place);
    if (refusal) {
        return { refusal: t(`cron_cannot_post_${refusal}`) };
    }
    const jobs = await ports.store.all();
    if (!admin && jobs.filter((j) => j.roomId === place.roomId).length >= c.cronMaxJobsPerRoom) {
        return { refusal: t('cron_room_full', { max: c.cronMaxJobsPerRoom }) };
    }
    if (!admin && jobs.filter((j) => j.ownerId === who.id).length >= c.cronMaxJobsPerUser) {
        return { refusal: t('cron_user_full', { max: c.cronMaxJobsPerUser }) };
    }
    const now = ports.now();
    const nextAt = nextFire(parsed.schedule, now, c.timezone, now);
    if (nextAt === undefined) {
        return { refusal: t('cron_bad_schedule', { error: 'it never fires' }) };
    }
    return {
        job: {
            id: randomBytes(4).toString('hex'),
            name: where.name ?? derivedName(parsed.rest),
            ownerId: who.id,
            ownerUsername: who.username,
            ...place,
            schedule: parsed.schedule,
            prompt: parsed.rest,
            createdAt: now,
            nextAt,
        },
    };
}

/** `--name x`, `--name "a b"`, `--to target` anywhere in the text; the rest is schedule and prompt. */
export function options(text: string): { name?: string; to?: string; rest: string } {
    let name: string | undefined;
    let to: string | undefined;
    const rest = text
        .replace(/(?:^|\s)--name\s+(?:"([^"]{1,80})"|(\S{1,80}))/, (_m, quoted: string | undefined, bare: string | undefined) => {
            // A bare `""` is no name (the quoted form needs one character at least).
            name = (quoted ?? bare ?? '').replace(/^"+$/, '').trim();
            return ' ';
        })
        .replace(/(?:^|\s)--to\s+(\S+)/, (_m, target: string) => {
            to = target;
            return ' ';
        })
        .trim();
    return { name: name ? name.slice(0, MAX_NAME) : undefined, to, rest };
}

/** A short name from the prompt's first words (`summarise-open-incidents`). */
function derivedName(prompt: string): string {
    const words = (autoTitle(prompt) ?? 'job').toLowerCase().split(' ').slice(0, 4);
    return (
        words
            .join('-')
            .replace(/[^\p{L}\p{N}-]/gu, '')
            // Words of punctuation alone leave dashes: `!!! ???` is no name.
            .replace(/^-+|-+$/g, '')
            .slice(0, MAX_NAME) || 'job'
    );
}
