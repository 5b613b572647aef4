/**
 * Automatic session resets (`session_reset`), as the Hermes gateway offers them: `idle`
 * after `session_idle_minutes` without a turn, `daily` at `session_reset_hour` in `timezone`,
 * `both` whichever comes first, `none` never. A reset is a new generation, like `/new`.
 */
type ResetMode = 'none' | 'idle' | 'daily' | 'both';

export interface ResetOptions {
    mode: ResetMode;
    idleMinutes: number;
    resetHour: number;
    timeZone: string;
}

/** Why the session is due for a reset before the next turn, or undefined. */
export function resetDue(lastActiveAt: number | undefined, now: number, opts: ResetOptions): 'idle' | 'daily' | undefined {
    if (opts.mode === 'none' || lastActiveAt === undefined) {
        return undefined;
    }
    if ((opts.mode === 'idle' || opts.mode === 'both') && now - lastActiveAt >= opts.idleMinutes * 60_000) {
        return 'idle';
    }
    if ((opts.mode === 'daily' || opts.mode === 'both') && lastActiveAt < lastBoundary(now, opts.resetHour, opts.timeZone)) {
        return 'daily';
    }
    return undefined;
}

/** The latest moment at or before `now` when the clock in `timeZone` read `hour`:00. */
export function lastBoundary(now: number, hour: number, timeZone: string): number {
    const local = localParts(now, timeZone);
    // The zone's offset now (local wall time read as UTC, minus the instant); a DST change since the boundary moves it by at most an hour.
    const offset = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second) - Math.floor(now / 1000) * 1000;
    let boundary = Date.UTC(local.year, local.month - 1, local.day, hour) - offset;
    if (boundary > now) {
        boundary -= 86_400_000;
    }
    return boundary;
}

function localParts(at: number, timeZone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
    const parts = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
    }).formatToParts(new Date(at));
    const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
    return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour'), minute: get('minute'), second: get('second') };
}
