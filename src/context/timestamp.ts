const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
    let f = formatters.get(timeZone);
    if (!f) {
        f = new Intl.DateTimeFormat('en-US', {
            timeZone,
            hourCycle: 'h23',
            year: 'numeric',
            month: '2-digit',
            day: '2-digit',
            hour: '2-digit',
            minute: '2-digit',
            timeZoneName: 'longOffset',
        });
        formatters.set(timeZone, f);
    }
    return f;
}

/** `2026-10-06 11:58 +02:00`: local wall time in the configured zone, with its offset. */
export function formatStamp(date: Date, timeZone: string): string {
    const parts: Record<string, string> = {};
    for (const p of formatter(timeZone).formatToParts(date)) {
        parts[p.type] = p.value;
    }
    // longOffset is "GMT+02:00", or plain "GMT" at offset zero.
    const offset = parts.timeZoneName === 'GMT' ? '+00:00' : (parts.timeZoneName ?? 'GMT+00:00').replace('GMT', '');
    return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${offset}`;
}
