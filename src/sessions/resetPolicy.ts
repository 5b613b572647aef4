import { nextFire } from '../time/schedule';

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
    // Daily: the first reset hour after the last activity has come (the same wall-clock rules as the scheduled prompts, DST included).
    const boundary = nextFire({ kind: 'daily', hour: opts.resetHour, minute: 0 }, lastActiveAt, opts.timeZone);
    if ((opts.mode === 'daily' || opts.mode === 'both') && boundary !== undefined && boundary <= now) {
        return 'daily';
    }
    return undefined;
}
