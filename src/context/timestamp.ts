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

/** `2026-10-06 11:58 +02:00`: local wall time in the configured zone, with its offset. */
export function formatStamp(date: Date, timeZone: string): string {
    const parts: Record<string, string> = {};
    for (const p of zoneFormatter(timeZone, STAMP_FIELDS).formatToParts(date)) {
        parts[p.type] = p.value;
    }
    // longOffset is "GMT+02:00", or plain "GMT" at offset zero.
    const offset = parts.timeZoneName === 'GMT' ? '+00:00' : (parts.timeZoneName ?? 'GMT+00:00').replace('GMT', '');
    return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${offset}`;
}
