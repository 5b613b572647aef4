import { zoneFormatter } from './timestamp';

/*
 * Wall-clock time in a zone. A "wall" value is the local date and time encoded as if it were UTC
 * (Date.UTC of the local fields), which makes local calendar arithmetic plain integer arithmetic.
 */

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

const WALL_FIELDS: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' };
export const formatter = (timeZone: string) => zoneFormatter(timeZone, WALL_FIELDS);

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
export function wallOf(instant: number, timeZone: string): number {
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
export function wallToInstant(wall: number, timeZone: string): number {
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

export function pad2(n: number): string {
    return String(n).padStart(2, '0');
}

export function formatWall(wall: number): string {
    const d = new Date(wall);
    return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
}
