import { formatStamp } from '../time/timestamp';
import { startRun } from '../cron/fire';
import { CronJob } from '../cron/job';
import { plainName } from '../delivery/cronDelivery';
import { describeSchedule, nextFire } from '../time/schedule';
import { translator } from '../i18n/messages';
import { addedText, options, prepareJob } from './cronAdd';
import { CronCommandPorts, Place } from './cronCommandPorts';

/** `/hermes cron add|list|pause|resume|remove|run …`; every answer private. */
export async function cronCommand(args: string, who: { id: string; username: string }, here: Place, ports: CronCommandPorts): Promise<string> {
    const t = translator(ports.language);
    const [sub = 'list', ...rest] = args.trim().split(/\s+/);
    const tail = args.trim().slice(sub.length).trim();
    const admin = ports.config.adminUserIds.includes(who.id);
    switch (sub.toLowerCase()) {
        case 'add':
            return add(tail, who, here, admin, ports);
        case 'list':
            return list(here, rest[0]?.toLowerCase() === 'all' && admin, ports);
        case 'pause':
        case 'resume':
        case 'remove':
        case 'run':
            return manage(sub.toLowerCase() as 'pause' | 'resume' | 'remove' | 'run', tail, who, here, admin, ports);
        default:
            return t('cron_usage');
    }
}

async function add(text: string, who: { id: string; username: string }, here: Place, admin: boolean, ports: CronCommandPorts): Promise<string> {
    const { name, to, rest } = options(text);
    // Here: the gate let the caller post in this room already (engine/entry/gate.ts).
    const prepared = await prepareJob(rest, { name, to, place: () => (to ? ports.resolveTo(to, who.id) : Promise.resolve(here)) }, who, admin, ports);
    if ('refusal' in prepared) {
        return prepared.refusal;
    }
    const { job } = prepared;
    await ports.store.save(job);
    ports.fire.log.info(`Scheduled prompt ${job.id} (${job.name}) added by ${who.id} for room ${job.roomId}${job.threadId ? ` thread ${job.threadId}` : ''}.`);
    return addedText(job, ports);
}

async function list(here: Place, all: boolean, ports: CronCommandPorts): Promise<string> {
    const t = translator(ports.language);
    const tz = ports.config.timezone;
    const jobs = (await ports.store.all()).filter((j) => all || j.roomId === here.roomId).sort((a, b) => a.createdAt - b.createdAt);
    if (jobs.length === 0) {
        return t(all ? 'cron_none_all' : 'cron_none');
    }
    const lines = [t(all ? 'cron_list_all' : 'cron_list', { count: jobs.length })];
    for (const j of jobs) {
        const parts = [`**${plainName(j.name)}** (\`${j.id}\`)`, describeSchedule(j.schedule, tz)];
        parts.push(
            j.paused && j.pausedWhy
                ? t('cron_paused_why', { reason: t(`cron_why_${j.pausedWhy}`) })
                : j.paused
                  ? t('cron_paused')
                  : j.nextAt !== undefined
                    ? t('cron_next', { at: formatStamp(new Date(j.nextAt), tz) })
                    : t('cron_done'),
        );
        parts.push(`@${j.ownerUsername}`);
        if (all) {
            parts.push(j.roomName ? `#${j.roomName}` : j.roomId);
        }
        if (j.running) {
            parts.push(t('cron_running'));
        } else if (j.last) {
            const when = formatStamp(new Date(j.last.at), tz);
            parts.push(
                j.last.status === 'failed'
                    ? t('cron_last_failed', { at: when, error: j.last.error ?? '' })
                    : j.last.why === 'budget'
                      ? t('cron_last_skipped_budget', { at: when })
                      : t(`cron_last_${j.last.status}`, { at: when }),
            );
        }
        lines.push(`• ${parts.join(' · ')}`);
    }
    return lines.join('\n');
}

async function manage(
    action: 'pause' | 'resume' | 'remove' | 'run',
    ref: string,
    who: { id: string },
    here: Place,
    admin: boolean,
    ports: CronCommandPorts,
): Promise<string> {
    const t = translator(ports.language);
    const jobs = await ports.store.all();
    // By the name as typed (a name with spaces comes quoted: `pause "Daily standup"`), or as `list` shows it.
    const typed = ref.replace(/^"(.*)"$/s, '$1').toLowerCase();
    const named = (j: CronJob) => [j.name, plainName(j.name)].some((n) => n.toLowerCase() === typed);
    const matches = jobs.filter((j) => j.id === ref || (named(j) && (admin || j.roomId === here.roomId)));
    if (!ref || matches.length === 0) {
        return t('cron_unknown', { ref });
    }
    if (matches.length > 1) {
        return t('cron_ambiguous', { ref, ids: matches.map((j) => `\`${j.id}\``).join(', ') });
    }
    const job = matches[0];
    const name = plainName(job.name);
    if (!admin && job.ownerId !== who.id) {
        return t('cron_not_yours', { name });
    }
    const tz = ports.config.timezone;
    switch (action) {
        case 'pause':
            await ports.store.save({ ...job, paused: true });
            return t('cron_paused_done', { name });
        case 'resume': {
            const nextAt = nextFire(job.schedule, ports.now(), tz, job.createdAt);
            // Its next run checks again whatever paused it.
            await ports.store.save({ ...job, paused: false, pausedWhy: undefined, nextAt });
            return t('cron_resumed', { name, next: nextAt ? formatStamp(new Date(nextAt), tz) : t('cron_done') });
        }
        case 'remove':
            await ports.store.remove(job.id);
            return t('cron_removed', { name });
        case 'run': {
            if (job.running && (await ports.fire.turns.get(job.running))) {
                return t('cron_busy', { name });
            }
            // The same re-check as a scheduled time's: a run now is a firing too.
            const started = await startRun(job, `cron.${job.id}.run.${ports.now()}`, ports.fire);
            if (typeof started === 'object') {
                return t('cron_paused_now', { name, reason: t(`cron_why_${started.paused}`) });
            }
            return started === 'budget' ? t('cron_run_budget', { name }) : t('cron_run_now', { name });
        }
    }
}
