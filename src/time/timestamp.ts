const formatters = new Map<string, Intl.DateTimeFormat>();

/**
 * An `en-US`, 24-hour formatter of `timeZone` with these fields, built once (they are costly
 * to build). Throws for an unknown zone. Shared by the stamps here and the schedules' wall clock.
 */
export function zoneFormatter(timeZone: string, fields: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
    const key = `${timeZone}|${JSON.stringify(fields)}`;
    let f = formatters.get(key);
    if (!f) {
        f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', ...fields });
        formatters.set(key, f);
    }
    return f;
}

const STAMP_FIELDS: Intl.DateTimeFormatOptions = {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'longOffset',
};

/**
 * Stamps already formatted, by zone and minute: a stamp shows no seconds, so it is a function of
 * the minute, and each turn renders the same recent messages again. formatToParts costs about
 * 8 µs a line, most of rendering a 100-message window (a millisecond a turn). Bounded.
 */
const stamps = new Map<string, string>();
const MAX_STAMPS = 5_000;

/** `2026-10-06 11:58 +02:00`: local wall time in the configured zone, with its offset. */
export function formatStamp(date: Date, timeZone: string): string {
    const key = `${timeZone}|${Math.floor(date.getTime() / 60_000)}`;
    const known = stamps.get(key);
    if (known !== undefined) {
        return known;
    }
    const stamp = computeStamp(date, timeZone);
    stamps.set(key, stamp);
    if (stamps.size > MAX_STAMPS) {
        stamps.delete(stamps.keys().next().value as string);
    }
    return stamp;
}

function computeStamp(date: Date, timeZone: string): string {
    const parts: Record<string, string> = {};
    for (const p of zoneFormatter(timeZone, STAMP_FIELDS).formatToParts(date)) {
        parts[p.type] = p.value;
    }
    // longOffset is "GMT+02:00", or plain "GMT" at offset zero.
    const offset = parts.timeZoneName === 'GMT' ? '+00:00' : (parts.timeZoneName ?? 'GMT+00:00').replace('GMT', '');
    return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${offset}`;
}
