/**
 * Schedules for scheduled prompts (`/hermes cron add <schedule> <prompt>`): parsing, the next
 * fire time, and a short description. Plain TypeScript over `Intl`, so every wall-clock time is
 * read in the app's configured IANA time zone rather than the server's.
 */

import { compileCron, cronSpec, nextCron, SEARCH_YEARS } from './cronExpression';
import { DAY, formatter, formatWall, HOUR, MINUTE, pad2, wallOf, wallToInstant } from './wallClock';

export type Schedule =
    { kind: 'cron'; expr: string } | { kind: 'every'; everyMs: number } | { kind: 'daily'; hour: number; minute: number } | { kind: 'at'; at: number };

// Anything faster would let one prompt flood a room and the Hermes agent behind it.
const MIN_EVERY_MS = 5 * MINUTE;

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/** Hands out the whitespace-separated words at the start of a text, keeping the rest verbatim. */
function words(text: string): { next: () => string | undefined; rest: () => string } {
    const re = /\S+/g;
    let end = 0;
    return {
        next: () => {
            const m = re.exec(text);
            if (!m) {
                end = text.length;
                return undefined;
            }
            end = re.lastIndex;
            return m[0];
        },
        rest: () => text.slice(end).trim(),
    };
}

function parseTime(token: string | undefined): { hour: number; minute: number } | undefined {
    const m = /^(\d{1,2}):(\d{2})$/.exec(token ?? '');
    if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) {
        return undefined;
    }
    return { hour: Number(m[1]), minute: Number(m[2]) };
}

const SCHEDULE_HELP = 'start with 5 cron fields ("0 9 * * 1-5"), "every 30m", "every day 09:00" or "at 2026-12-24 09:00"';

function parseEvery(w: ReturnType<typeof words>): Schedule | { error: string } {
    const what = w.next()?.toLowerCase();
    if (what === 'day') {
        const time = parseTime(w.next());
        return time ? { kind: 'daily', ...time } : { error: 'expected a 24-hour time after "every day", e.g. "every day 09:00"' };
    }
    const m = /^(\d+)([mhd])$/.exec(what ?? '');
    if (!m) {
        return { error: 'expected an interval like "every 30m", "every 2h" or "every 1d", or "every day 09:00"' };
    }
    const everyMs = Number(m[1]) * { m: MINUTE, h: HOUR, d: DAY }[m[2] as 'm' | 'h' | 'd'];
    if (everyMs < MIN_EVERY_MS) {
        return { error: 'the interval must be at least 5 minutes' };
    }
    if (!Number.isSafeInteger(everyMs)) {
        return { error: 'the interval is too long' };
    }
    return { kind: 'every', everyMs };
}

function parseAt(w: ReturnType<typeof words>, timeZone: string, now: number): Schedule | { error: string } {
    const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(w.next() ?? '');
    const time = parseTime(w.next());
    if (!date || !time) {
        return { error: 'expected a local date and 24-hour time after "at", e.g. "at 2026-12-24 09:00"' };
    }
    const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const wall = Date.UTC(year, month - 1, day, time.hour, time.minute);
    const check = new Date(wall);
    // Date.UTC rolls 2026-02-30 over into March; a real date survives the round trip.
    if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) {
        return { error: `${date[0]} is not a date` };
    }
    const at = wallToInstant(wall, timeZone);
    if (at <= now) {
        return { error: `${formatWall(wall)} is in the past` };
    }
    return { kind: 'at', at };
}

function parseCron(w: ReturnType<typeof words>, first: string, after: number, timeZone: string): Schedule | { error: string } {
    const fields = [first.toLowerCase()];
    while (fields.length < 5) {
        const word = w.next();
        if (word === undefined) {
            return { error: `a cron schedule needs 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}` };
        }
        fields.push(word.toLowerCase());
    }
    const spec = compileCron(fields);
    if (typeof spec === 'string') {
        return { error: spec };
    }
    // Accepting "0 0 31 2 *" would store a job that silently never runs.
    if (nextCron(spec, after, timeZone) === undefined) {
        return { error: `the cron schedule "${fields.join(' ')}" never fires in the next ${SEARCH_YEARS} years` };
    }
    return { kind: 'cron', expr: fields.join(' ') };
}

/** Parses the schedule at the start of `text`; returns the schedule and the rest (the prompt). */
export function parseSchedule(text: string, timeZone: string, now: number): { schedule: Schedule; rest: string } | { error: string } {
    try {
        formatter(timeZone);
    } catch {
        return { error: `unknown time zone "${timeZone}"` };
    }
    const w = words(text);
    const first = w.next();
    if (first === undefined) {
        return { error: `the schedule is missing: ${SCHEDULE_HELP}` };
    }
    const keyword = first.toLowerCase();
    let schedule: Schedule | { error: string };
    if (keyword === 'every') {
        schedule = parseEvery(w);
    } else if (keyword === 'at') {
        schedule = parseAt(w, timeZone, now);
    } else if (/^[0-9*]/.test(first)) {
        // A minute field starts with a digit or `*`; anything else is not a cron attempt at all.
        schedule = parseCron(w, first, now, timeZone);
    } else {
        return { error: `"${first}" is not a schedule: ${SCHEDULE_HELP}` };
    }
    if ('error' in schedule) {
        return schedule;
    }
    const rest = w.rest();
    return rest ? { schedule, rest } : { error: 'a prompt is missing' };
}

/** The first fire time strictly after `after` (ms), or undefined (a one-shot already past / a cron that never matches within 5 years). */
export function nextFire(schedule: Schedule, after: number, timeZone: string, anchor?: number): number | undefined {
    switch (schedule.kind) {
        case 'cron': {
            // Stored expressions came through parseSchedule; a corrupt one never fires rather than throwing in the scheduler.
            const spec = cronSpec(schedule.expr);
            return spec && nextCron(spec, after, timeZone);
        }
        case 'every': {
            const base = anchor ?? after;
            // The creation time itself is not a fire time, hence at least one interval after the anchor.
            const k = Math.max(1, Math.floor((after - base) / schedule.everyMs) + 1);
            return base + k * schedule.everyMs;
        }
        case 'daily': {
            const startDay = Math.floor(wallOf(after, timeZone) / DAY) * DAY;
            // Today's time may be past; tomorrow's always is not, even across a DST change.
            for (let day = startDay; day <= startDay + 2 * DAY; day += DAY) {
                const instant = wallToInstant(day + schedule.hour * HOUR + schedule.minute * MINUTE, timeZone);
                if (instant > after) {
                    return instant;
                }
            }
            return undefined;
        }
        case 'at':
            return schedule.at > after ? schedule.at : undefined;
    }
}

/** A short human description for lists: "cron 0 9 * * 1-5", "every 30m", "every day 09:00", "once at 2026-12-24 09:00". */
export function describeSchedule(schedule: Schedule, timeZone: string): string {
    switch (schedule.kind) {
        case 'cron':
            return `cron ${schedule.expr}`;
        case 'every': {
            const ms = schedule.everyMs;
            const amount = ms % DAY === 0 ? `${ms / DAY}d` : ms % HOUR === 0 ? `${ms / HOUR}h` : ms % MINUTE === 0 ? `${ms / MINUTE}m` : `${ms}ms`;
            return `every ${amount}`;
        }
        case 'daily':
            return `every day ${pad2(schedule.hour)}:${pad2(schedule.minute)}`;
        case 'at':
            return `once at ${formatWall(wallOf(schedule.at, timeZone))}`;
    }
}
