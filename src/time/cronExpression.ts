import { DAY, HOUR, MINUTE, wallOf, wallToInstant } from './wallClock';

/*
 * Cron expressions (five fields, Vixie cron's rules), compiled once each, and the next time one
 * allows in a zone's wall-clock time.
 */

export const SEARCH_YEARS = 5;

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

export function compileCron(fields: readonly string[]): CronSpec | string {
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

export function cronSpec(expr: string): CronSpec | undefined {
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
export function nextCron(spec: CronSpec, after: number, timeZone: string): number | undefined {
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
