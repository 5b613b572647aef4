/**
 * Schedules for scheduled prompts (`/hermes cron add <schedule> <prompt>`): parsing, the next
 * fire time, and a short description. Plain TypeScript over `Intl`, so every wall-clock time is
 * read in the app's configured IANA time zone rather than the server's.
 */

import { zoneFormatter } from './timestamp';

export type Schedule =
    { kind: 'cron'; expr: string } | { kind: 'every'; everyMs: number } | { kind: 'daily'; hour: number; minute: number } | { kind: 'at'; at: number };

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
// Anything faster would let one prompt flood a room and the Hermes agent behind it.
const MIN_EVERY_MS = 5 * MINUTE;
const SEARCH_YEARS = 5;

// ---------------------------------------------------------------------------------------------
// Wall-clock time in a zone. A "wall" value is the local date and time encoded as if it were UTC
// (Date.UTC of the local fields), which makes local calendar arithmetic plain integer arithmetic.
// ---------------------------------------------------------------------------------------------

const WALL_FIELDS: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' };
const formatter = (timeZone: string) => zoneFormatter(timeZone, WALL_FIELDS);

/** The local fields of an instant, as a wall value with seconds. */
function wallWithSeconds(instant: number, timeZone: string): number {
    const p: Record<string, number> = {};
    for (const part of formatter(timeZone).formatToParts(instant)) {
        if (part.type !== 'literal') {
            p[part.type] = Number(part.value);
        }
    }
    // Some ICU versions still print midnight as 24 despite h23.
    return Date.UTC(p.year, p.month - 1, p.day, p.hour % 24, p.minute, p.second);
}

/** The local minute an instant falls in. */
function wallOf(instant: number, timeZone: string): number {
    return Math.floor(wallWithSeconds(instant, timeZone) / MINUTE) * MINUTE;
}

/** The zone's offset at an instant: its local fields read as UTC, minus the instant. */
function offsetAt(instant: number, timeZone: string): number {
    const whole = Math.floor(instant / 1000) * 1000;
    return wallWithSeconds(whole, timeZone) - whole;
}

/**
 * The instant a local wall minute happens. A time that happens twice (clocks going back) gives
 * the first; one that never happens (clocks going forward) gives the first minute after the gap,
 * so a job set inside the gap still runs that day, once.
 */
function wallToInstant(wall: number, timeZone: string): number {
    // The true offset is the one in force a day either side of the wall time (barring two changes
    // within two days); each guess is re-checked once with the offset at the instant it gives.
    const candidates: number[] = [];
    for (const probe of [wall - DAY, wall + DAY]) {
        const guess = wall - offsetAt(probe, timeZone);
        candidates.push(guess, wall - offsetAt(guess, timeZone));
    }
    const valid = candidates.filter((c) => wallOf(c, timeZone) === wall);
    if (valid.length > 0) {
        return Math.min(...valid);
    }
    // A gap: local time jumps from below `wall` to above it somewhere between the candidates.
    let lo = Math.min(...candidates);
    let hi = Math.max(...candidates);
    while (hi - lo > MINUTE) {
        const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
        if (wallOf(mid, timeZone) >= wall) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return hi;
}

function pad2(n: number): string {
    return String(n).padStart(2, '0');
}

function formatWall(wall: number): string {
    const d = new Date(wall);
    return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
}

// ---------------------------------------------------------------------------------------------
// Cron expressions
// ---------------------------------------------------------------------------------------------

interface FieldSpec {
    name: string;
    min: number;
    max: number;
    names?: readonly string[];
    /** The value a name at index 0 stands for. */
    nameBase?: number;
}

const FIELD_SPECS: readonly FieldSpec[] = [
    { name: 'minute', min: 0, max: 59 },
    { name: 'hour', min: 0, max: 23 },
    { name: 'day-of-month', min: 1, max: 31 },
    { name: 'month', min: 1, max: 12, names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'], nameBase: 1 },
    // 7 is accepted as Sunday because both conventions are common; it folds onto 0 below.
    { name: 'day-of-week', min: 0, max: 7, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], nameBase: 0 },
];

interface CronSpec {
    minutes: boolean[];
    hours: boolean[];
    daysOfMonth: boolean[];
    months: boolean[];
    daysOfWeek: boolean[];
    /** Whether the day fields are unrestricted (start with `*`), which decides AND versus OR. */
    domStar: boolean;
    dowStar: boolean;
}

function fieldValue(token: string, spec: FieldSpec): number | string {
    let value: number;
    if (/^\d+$/.test(token)) {
        value = Number(token);
    } else {
        const index = spec.names?.indexOf(token) ?? -1;
        if (index < 0) {
            return `"${token}" is not a number${spec.names ? ' or a name' : ''}`;
        }
        value = index + (spec.nameBase ?? 0);
    }
    return value >= spec.min && value <= spec.max ? value : `${token} is out of range ${spec.min}-${spec.max}`;
}

/** Expands one field into the set of values it allows, or says what is wrong with it. */
function parseField(text: string, spec: FieldSpec): boolean[] | string {
    const allowed: boolean[] = new Array(spec.max + 1).fill(false);
    for (const item of text.split(',')) {
        const match = /^(\*|[a-z0-9]+(?:-[a-z0-9]+)?)(?:\/(\d+))?$/.exec(item);
        if (!match) {
            return `"${item}" is not *, a number, a range, a step or a list`;
        }
        const [, base, stepText] = match;
        let lo = spec.min;
        let hi = spec.max;
        if (base !== '*') {
            const [first, last] = base.split('-');
            const from = fieldValue(first, spec);
            if (typeof from === 'string') {
                return from;
            }
            const to = last === undefined ? from : fieldValue(last, spec);
            if (typeof to === 'string') {
                return to;
            }
            if (to < from) {
                return `the range ${base} runs backwards`;
            }
            if (last === undefined && stepText !== undefined) {
                return `the step in "${item}" needs * or a range before it`;
            }
            lo = from;
            hi = to;
        }
        const step = stepText === undefined ? 1 : Number(stepText);
        if (step < 1) {
            return `the step in "${item}" must be at least 1`;
        }
        for (let v = lo; v <= hi; v += step) {
            allowed[v] = true;
        }
    }
    return allowed;
}

const compiled = new Map<string, CronSpec>();

function compileCron(fields: readonly string[]): CronSpec | string {
    const sets: boolean[][] = [];
    for (let i = 0; i < FIELD_SPECS.length; i++) {
        const result = parseField(fields[i], FIELD_SPECS[i]);
        if (typeof result === 'string') {
            return `invalid ${FIELD_SPECS[i].name} field "${fields[i]}": ${result}`;
        }
        sets.push(result);
    }
    const daysOfWeek = sets[4].slice(0, 7);
    daysOfWeek[0] = sets[4][0] || sets[4][7];
    return {
        minutes: sets[0],
        hours: sets[1],
        daysOfMonth: sets[2],
        months: sets[3],
        daysOfWeek,
        // Vixie cron's rule: a field counts as unrestricted when it starts with `*` (so `*/2` too).
        domStar: fields[2].startsWith('*'),
        dowStar: fields[4].startsWith('*'),
    };
}

function cronSpec(expr: string): CronSpec | undefined {
    let spec = compiled.get(expr);
    if (!spec) {
        const fields = expr.trim().toLowerCase().split(/\s+/);
        const result = fields.length === 5 ? compileCron(fields) : 'not 5 fields';
        if (typeof result === 'string') {
            return undefined;
        }
        spec = result;
        compiled.set(expr, spec);
    }
    return spec;
}

function dayMatches(spec: CronSpec, day: Date): boolean {
    if (!spec.months[day.getUTCMonth() + 1]) {
        return false;
    }
    const dom = spec.daysOfMonth[day.getUTCDate()];
    const dow = spec.daysOfWeek[day.getUTCDay()];
    // Standard cron: with both day fields restricted a day matches if either does.
    return spec.domStar || spec.dowStar ? dom && dow : dom || dow;
}

/**
 * Walks local days, then the hours and minutes the expression allows, in wall-clock order. The
 * wall-to-instant mapping never goes backwards, so the first candidate past `after` is the answer.
 */
function nextCron(spec: CronSpec, after: number, timeZone: string): number | undefined {
    const start = wallOf(after, timeZone);
    const startDay = Math.floor(start / DAY) * DAY;
    const startDate = new Date(startDay);
    const lastDay = Date.UTC(startDate.getUTCFullYear() + SEARCH_YEARS, startDate.getUTCMonth(), startDate.getUTCDate());
    for (let day = startDay; day <= lastDay; day += DAY) {
        if (!dayMatches(spec, new Date(day))) {
            continue;
        }
        for (let hour = 0; hour < 24; hour++) {
            if (!spec.hours[hour] || day + (hour + 1) * HOUR <= start) {
                continue;
            }
            for (let minute = 0; minute < 60; minute++) {
                const wall = day + hour * HOUR + minute * MINUTE;
                if (!spec.minutes[minute] || wall < start) {
                    continue;
                }
                const instant = wallToInstant(wall, timeZone);
                if (instant > after) {
                    return instant;
                }
            }
        }
    }
    return undefined;
}

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
