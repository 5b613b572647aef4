import { describeSchedule, nextFire, parseSchedule, Schedule } from '../../../src/time/schedule';

const BERLIN = 'Europe/Berlin';
const UTC = 'UTC';
const t = (iso: string) => Date.parse(iso);
const NOW = t('2026-03-01T00:00:00Z');

const cron = (expr: string): Schedule => ({ kind: 'cron', expr });

/** The next `n` fire times after `after`, as ISO strings, each found from the one before. */
function fires(schedule: Schedule, after: string, n: number, timeZone = UTC, anchor?: number): string[] {
    const out: string[] = [];
    let at = t(after);
    for (let i = 0; i < n; i++) {
        const next = nextFire(schedule, at, timeZone, anchor);
        if (next === undefined) {
            break;
        }
        out.push(new Date(next).toISOString().replace(':00.000Z', 'Z'));
        at = next;
    }
    return out;
}

function parsed(text: string, timeZone = BERLIN, now = NOW): { schedule: Schedule; rest: string } {
    const result = parseSchedule(text, timeZone, now);
    if ('error' in result) {
        throw new Error(`unexpected error: ${result.error}`);
    }
    return result;
}

function parseError(text: string, timeZone = BERLIN, now = NOW): string {
    const result = parseSchedule(text, timeZone, now);
    if (!('error' in result)) {
        throw new Error(`expected an error, got ${JSON.stringify(result)}`);
    }
    return result.error;
}

describe('cron field syntax', () => {
    it('steps over the whole range', () => {
        expect(fires(cron('*/15 * * * *'), '2026-05-01T10:07:00Z', 4)).toEqual([
            '2026-05-01T10:15Z',
            '2026-05-01T10:30Z',
            '2026-05-01T10:45Z',
            '2026-05-01T11:00Z',
        ]);
        expect(fires(cron('0 */6 * * *'), '2026-05-01T05:00:00Z', 4)).toEqual([
            '2026-05-01T06:00Z',
            '2026-05-01T12:00Z',
            '2026-05-01T18:00Z',
            '2026-05-02T00:00Z',
        ]);
        expect(fires(cron('0 0 1 */4 *'), '2026-05-02T00:00:00Z', 3)).toEqual(['2026-09-01T00:00Z', '2027-01-01T00:00Z', '2027-05-01T00:00Z']);
    });

    it('steps within a range', () => {
        expect(fires(cron('5-10/2 * * * *'), '2026-05-01T10:00:00Z', 4)).toEqual([
            '2026-05-01T10:05Z',
            '2026-05-01T10:07Z',
            '2026-05-01T10:09Z',
            '2026-05-01T11:05Z',
        ]);
    });

    it('reads lists of numbers and ranges', () => {
        expect(fires(cron('1,2,30 * * * *'), '2026-05-01T10:01:00Z', 3)).toEqual(['2026-05-01T10:02Z', '2026-05-01T10:30Z', '2026-05-01T11:01Z']);
        expect(fires(cron('0 22-23,1 * * *'), '2026-05-01T12:00:00Z', 4)).toEqual([
            '2026-05-01T22:00Z',
            '2026-05-01T23:00Z',
            '2026-05-02T01:00Z',
            '2026-05-02T22:00Z',
        ]);
        expect(fires(cron('0 0 1-3 * *'), '2026-05-02T12:00:00Z', 3)).toEqual(['2026-05-03T00:00Z', '2026-06-01T00:00Z', '2026-06-02T00:00Z']);
    });

    it('fires strictly after the given instant', () => {
        expect(fires(cron('0 9 * * *'), '2026-05-01T09:00:00Z', 1)).toEqual(['2026-05-02T09:00Z']);
        expect(fires(cron('0 9 * * *'), '2026-05-01T09:00:30Z', 1)).toEqual(['2026-05-02T09:00Z']);
        expect(nextFire(cron('0 9 * * *'), t('2026-05-01T08:59:59.999Z'), UTC)).toBe(t('2026-05-01T09:00:00Z'));
        expect(fires(cron('* * * * *'), '2026-05-01T10:00:30Z', 2)).toEqual(['2026-05-01T10:01Z', '2026-05-01T10:02Z']);
        expect(fires(cron('0 0 1 1 *'), '2026-12-31T23:59:00Z', 1)).toEqual(['2027-01-01T00:00Z']);
    });

    it('reads month and weekday names in any case', () => {
        expect(fires(cron('0 0 1 jan,JUL *'), '2026-03-01T00:00:00Z', 3)).toEqual(['2026-07-01T00:00Z', '2027-01-01T00:00Z', '2027-07-01T00:00Z']);
        expect(fires(cron('0 0 15 mar-may *'), '2026-01-01T00:00:00Z', 4)).toEqual([
            '2026-03-15T00:00Z',
            '2026-04-15T00:00Z',
            '2026-05-15T00:00Z',
            '2027-03-15T00:00Z',
        ]);
        // 2026-07-03 is a Friday.
        expect(fires(cron('0 9 * * MON-fri'), '2026-07-03T09:00:00Z', 2)).toEqual(['2026-07-06T09:00Z', '2026-07-07T09:00Z']);
        expect(parsed('0 9 * * MON-Fri go').schedule).toEqual({ kind: 'cron', expr: '0 9 * * mon-fri' });
    });

    it('takes both 0 and 7 as Sunday', () => {
        // 2026-07-05 is a Sunday.
        for (const dow of ['0', '7', 'sun', 'SUN']) {
            expect(fires(cron(`0 12 * * ${dow}`), '2026-07-01T00:00:00Z', 2)).toEqual(['2026-07-05T12:00Z', '2026-07-12T12:00Z']);
        }
        expect(fires(cron('0 12 * * 5-7'), '2026-07-03T00:00:00Z', 4)).toEqual([
            '2026-07-03T12:00Z',
            '2026-07-04T12:00Z',
            '2026-07-05T12:00Z',
            '2026-07-10T12:00Z',
        ]);
    });
});

describe('cron day-of-month and day-of-week', () => {
    it('matches either when both are restricted', () => {
        // April 2026: Fridays are the 3rd, 10th, 17th; the 13th is a Monday.
        expect(fires(cron('0 0 13 * 5'), '2026-04-01T00:00:00Z', 4)).toEqual([
            '2026-04-03T00:00Z',
            '2026-04-10T00:00Z',
            '2026-04-13T00:00Z',
            '2026-04-17T00:00Z',
        ]);
    });

    it('matches only the restricted one when the other is *', () => {
        expect(fires(cron('0 0 13 * *'), '2026-04-01T00:00:00Z', 2)).toEqual(['2026-04-13T00:00Z', '2026-05-13T00:00Z']);
        expect(fires(cron('0 0 * * 5'), '2026-04-01T00:00:00Z', 2)).toEqual(['2026-04-03T00:00Z', '2026-04-10T00:00Z']);
        expect(fires(cron('0 0 * 5 *'), '2026-04-01T00:00:00Z', 2)).toEqual(['2026-05-01T00:00Z', '2026-05-02T00:00Z']);
    });

    it('treats a field starting with * (a step over everything) as unrestricted, as Vixie cron does', () => {
        // Days 1, 11, 21, 31 that are also Mondays: 2026-05-11 and 2026-06-01, not Friday 2026-05-01.
        expect(fires(cron('0 0 */10 * 1'), '2026-04-30T00:00:00Z', 2)).toEqual(['2026-05-11T00:00Z', '2026-06-01T00:00Z']);
    });
});

describe('invalid cron fields', () => {
    it.each([
        ['60 * * * *', 'minute', '60'],
        ['*/0 * * * *', 'minute', '*/0'],
        ['5/10 * * * *', 'minute', '5/10'],
        ['10-5 * * * *', 'minute', '10-5'],
        ['1,,2 * * * *', 'minute', '1,,2'],
        ['1-2-3 * * * *', 'minute', '1-2-3'],
        ['* 24 * * *', 'hour', '24'],
        ['* mon * * *', 'hour', 'mon'],
        ['* * 0 * *', 'day-of-month', '0'],
        ['* * 32 * *', 'day-of-month', '32'],
        ['* * ? * *', 'day-of-month', '?'],
        ['* * * 0 *', 'month', '0'],
        ['* * * 13 *', 'month', '13'],
        ['* * * foo *', 'month', 'foo'],
        ['* * * * 8', 'day-of-week', '8'],
        ['* * * * mon-jan', 'day-of-week', 'mon-jan'],
        ['0 9 * * hello', 'day-of-week', 'hello'],
    ])('refuses %s naming the %s field', (expr, field, text) => {
        expect(parseError(`${expr} do something`).startsWith(`invalid ${field} field "${text}":`)).toBe(true);
    });

    it('says what is wrong', () => {
        expect(parseError('60 * * * * x')).toBe('invalid minute field "60": 60 is out of range 0-59');
        expect(parseError('* * * * 1-funday x')).toBe('invalid day-of-week field "1-funday": "funday" is not a number or a name');
        expect(parseError('* 3-1 * * * x')).toBe('invalid hour field "3-1": the range 3-1 runs backwards');
    });

    it('needs five fields', () => {
        expect(parseError('0 9')).toMatch(/needs 5 fields/);
        expect(parseError('0 9 * *')).toMatch(/needs 5 fields/);
    });

    it('refuses an expression that never fires', () => {
        expect(parseError('0 0 31 2 * x')).toMatch(/never fires/);
        expect(parseError('0 0 30 2 * x')).toMatch(/never fires/);
    });

    it('refuses text that is no schedule at all', () => {
        expect(parseError('tomorrow summarize the news')).toMatch(/^"tomorrow" is not a schedule/);
        expect(parseError('   ')).toMatch(/schedule is missing/);
    });

    it('never fires for a corrupt stored expression instead of throwing', () => {
        expect(nextFire(cron('nonsense'), NOW, UTC)).toBeUndefined();
        expect(nextFire(cron('0 9 * *'), NOW, UTC)).toBeUndefined();
        expect(nextFire(cron('61 9 * * *'), NOW, UTC)).toBeUndefined();
    });
});

describe('parsing the rest of the command', () => {
    it('returns the trimmed prompt, keeping its inner layout', () => {
        expect(parsed('  every 2h   check the\n  build  ')).toEqual({ schedule: { kind: 'every', everyMs: 2 * 3_600_000 }, rest: 'check the\n  build' });
        expect(parsed('0 9 * * 1-5 5 things to do').rest).toBe('5 things to do');
        expect(parsed('\tevery day 09:00\nGood morning').rest).toBe('Good morning');
    });

    it('requires a prompt', () => {
        for (const text of ['0 9 * * 1-5   ', 'every 30m', 'every day 09:00 \n ', 'at 2026-12-24 09:00']) {
            expect(parseError(text)).toBe('a prompt is missing');
        }
    });

    it('reads keywords in any case', () => {
        expect(parsed('EVERY 30M x').schedule).toEqual({ kind: 'every', everyMs: 30 * 60_000 });
        expect(parsed('Every Day 07:05 x').schedule).toEqual({ kind: 'daily', hour: 7, minute: 5 });
        expect(parsed('At 2026-12-24 09:00 x').schedule).toEqual({ kind: 'at', at: t('2026-12-24T08:00:00Z') });
    });

    it('refuses an unknown time zone', () => {
        expect(parseError('every 30m x', 'Mars/Olympus_Mons')).toBe('unknown time zone "Mars/Olympus_Mons"');
    });
});

describe('every', () => {
    it('parses m, h and d with a 5-minute minimum', () => {
        expect(parsed('every 5m x').schedule).toEqual({ kind: 'every', everyMs: 5 * 60_000 });
        expect(parsed('every 2h x').schedule).toEqual({ kind: 'every', everyMs: 2 * 3_600_000 });
        expect(parsed('every 1d x').schedule).toEqual({ kind: 'every', everyMs: 86_400_000 });
        expect(parseError('every 4m x')).toBe('the interval must be at least 5 minutes');
        expect(parseError('every 0h x')).toBe('the interval must be at least 5 minutes');
        for (const bad of ['every 30s x', 'every 45 minutes x', 'every m x', 'every x', 'every']) {
            expect(parseError(bad)).toMatch(/^expected an interval/);
        }
        expect(parseError('every 99999999999999d x')).toBe('the interval is too long');
    });

    it('fires at the anchor plus whole intervals', () => {
        const every30: Schedule = { kind: 'every', everyMs: 30 * 60_000 };
        const anchor = t('2026-05-01T10:07:13Z');
        expect(nextFire(every30, t('2026-05-01T12:00:00Z'), UTC, anchor)).toBe(t('2026-05-01T12:07:13Z'));
        expect(nextFire(every30, t('2026-05-01T12:07:13Z'), UTC, anchor)).toBe(t('2026-05-01T12:37:13Z'));
        expect(nextFire(every30, t('2026-05-01T12:07:12.999Z'), UTC, anchor)).toBe(t('2026-05-01T12:07:13Z'));
        // Created now: the first run is one interval later, never the creation instant itself.
        expect(nextFire(every30, anchor, UTC, anchor)).toBe(t('2026-05-01T10:37:13Z'));
        expect(nextFire(every30, t('2026-05-01T10:00:00Z'), UTC, anchor)).toBe(t('2026-05-01T10:37:13Z'));
        expect(nextFire(every30, t('2026-05-01T12:00:00Z'), UTC)).toBe(t('2026-05-01T12:30:00Z'));
    });

    it('ignores the zone: an interval is elapsed time, also across DST', () => {
        const every1d: Schedule = { kind: 'every', everyMs: 86_400_000 };
        expect(nextFire(every1d, t('2026-03-28T08:00:00Z'), BERLIN, t('2026-03-27T08:00:00Z'))).toBe(t('2026-03-29T08:00:00Z'));
    });
});

describe('every day', () => {
    it('parses a 24-hour time', () => {
        expect(parsed('every day 9:30 x').schedule).toEqual({ kind: 'daily', hour: 9, minute: 30 });
        expect(parsed('every day 23:59 x').schedule).toEqual({ kind: 'daily', hour: 23, minute: 59 });
        for (const bad of ['every day 24:00 x', 'every day 09:60 x', 'every day 9am x', 'every day x']) {
            expect(parseError(bad)).toMatch(/^expected a 24-hour time/);
        }
    });

    it('fires later today or tomorrow, in local time', () => {
        const nine: Schedule = { kind: 'daily', hour: 9, minute: 0 };
        expect(fires(nine, '2026-06-10T06:59:00Z', 2, BERLIN)).toEqual(['2026-06-10T07:00Z', '2026-06-11T07:00Z']);
        expect(fires(nine, '2026-06-10T07:00:00Z', 1, BERLIN)).toEqual(['2026-06-11T07:00Z']);
    });

    it('crosses local midnight', () => {
        // 22:00Z is already 00:00 on June 11 in Berlin.
        expect(fires({ kind: 'daily', hour: 0, minute: 30 }, '2026-06-10T22:00:00Z', 2, BERLIN)).toEqual(['2026-06-10T22:30Z', '2026-06-11T22:30Z']);
        expect(fires({ kind: 'daily', hour: 23, minute: 45 }, '2026-06-10T21:50:00Z', 1, BERLIN)).toEqual(['2026-06-11T21:45Z']);
    });

    it('keeps the local time across DST changes', () => {
        const nine: Schedule = { kind: 'daily', hour: 9, minute: 0 };
        expect(fires(nine, '2026-03-28T08:00:00Z', 2, BERLIN)).toEqual(['2026-03-29T07:00Z', '2026-03-30T07:00Z']);
        expect(fires(nine, '2026-10-24T07:00:00Z', 2, BERLIN)).toEqual(['2026-10-25T08:00Z', '2026-10-26T08:00Z']);
    });

    it('fires once at the end of a spring-forward gap, and once on a repeated time', () => {
        const twoThirty: Schedule = { kind: 'daily', hour: 2, minute: 30 };
        // 2026-03-29 02:30 does not exist in Berlin: 03:00 CEST is the first minute after it.
        expect(fires(twoThirty, '2026-03-28T02:00:00Z', 3, BERLIN)).toEqual(['2026-03-29T01:00Z', '2026-03-30T00:30Z', '2026-03-31T00:30Z']);
        // 2026-10-25 02:30 happens at 00:30Z (CEST) and again at 01:30Z (CET): only the first counts.
        expect(fires(twoThirty, '2026-10-24T12:00:00Z', 2, BERLIN)).toEqual(['2026-10-25T00:30Z', '2026-10-26T01:30Z']);
    });
});

describe('cron across DST in Europe/Berlin', () => {
    it('fires a time inside the spring-forward gap at the first valid minute after it', () => {
        expect(fires(cron('30 2 * * *'), '2026-03-28T12:00:00Z', 2, BERLIN)).toEqual(['2026-03-29T01:00Z', '2026-03-30T00:30Z']);
        // Several times inside the gap collapse into one run.
        expect(fires(cron('*/20 2 * * *'), '2026-03-29T00:00:00Z', 2, BERLIN)).toEqual(['2026-03-29T01:00Z', '2026-03-30T00:00Z']);
        expect(fires(cron('0 * * * *'), '2026-03-29T00:00:00Z', 3, BERLIN)).toEqual(['2026-03-29T01:00Z', '2026-03-29T02:00Z', '2026-03-29T03:00Z']);
    });

    it('fires a repeated time once, at its first occurrence', () => {
        expect(fires(cron('30 2 * * *'), '2026-10-24T12:00:00Z', 2, BERLIN)).toEqual(['2026-10-25T00:30Z', '2026-10-26T01:30Z']);
        expect(fires(cron('*/30 * * * *'), '2026-10-24T23:45:00Z', 4, BERLIN)).toEqual([
            '2026-10-25T00:00Z',
            '2026-10-25T00:30Z',
            '2026-10-25T02:00Z',
            '2026-10-25T02:30Z',
        ]);
        // From inside the second pass of 02:00-03:00, the repeated times are already behind.
        expect(fires(cron('*/30 * * * *'), '2026-10-25T01:10:00Z', 1, BERLIN)).toEqual(['2026-10-25T02:00Z']);
    });

    it('uses the wall clock of the given zone', () => {
        expect(fires(cron('0 9 * * *'), '2026-01-15T00:00:00Z', 1, BERLIN)).toEqual(['2026-01-15T08:00Z']);
        expect(fires(cron('0 9 * * *'), '2026-07-15T00:00:00Z', 1, BERLIN)).toEqual(['2026-07-15T07:00Z']);
        // New York springs forward on 2026-03-08: 02:30 does not exist, 03:00 EDT is 07:00Z.
        expect(fires(cron('30 2 * * *'), '2026-03-07T12:00:00Z', 2, 'America/New_York')).toEqual(['2026-03-08T07:00Z', '2026-03-09T06:30Z']);
    });
});

describe('cron performance and the 5-year horizon', () => {
    /**
     * The work one search does, counted rather than timed: the local days it looks at (each day
     * is checked with one `getUTCMonth`) and the time-zone conversions it makes (each one a
     * `formatToParts`, the costly step). A search that converted every minute or every day of
     * the years it walks would make hundreds of thousands of conversions.
     */
    function work<T>(search: () => T): { result: T; days: number; conversions: number } {
        const days = jest.spyOn(Date.prototype, 'getUTCMonth');
        const conversions = jest.spyOn(Intl.DateTimeFormat.prototype, 'formatToParts');
        try {
            const result = search();
            return { result, days: days.mock.calls.length, conversions: conversions.mock.calls.length };
        } finally {
            days.mockRestore();
            conversions.mockRestore();
        }
    }

    it('finds a leap day years ahead quickly', () => {
        const { result, days, conversions } = work(() => nextFire(cron('0 0 29 2 *'), t('2026-03-01T00:00:00Z'), BERLIN));
        expect(result).toBe(t('2028-02-28T23:00:00Z'));
        // One look per day from 2026-03-01 to 2028-02-29 (731 days), converting only the start and the one match.
        expect(days).toBeLessThanOrEqual(733);
        expect(conversions).toBeLessThanOrEqual(20);
    });

    it('gives up after 5 years quickly', () => {
        const never = work(() => nextFire(cron('0 0 30 2 *'), NOW, BERLIN));
        expect(never.result).toBeUndefined();
        // 2100 is no leap year, and 2104 is more than 5 years after 2096.
        const noLeap = work(() => nextFire(cron('0 0 29 2 *'), t('2096-03-01T00:00:00Z'), UTC));
        expect(noLeap.result).toBeUndefined();
        // Each walks 5 years of days at one look a day, and converts only its start: no day matched.
        for (const { days, conversions } of [never, noLeap]) {
            expect(days).toBeLessThanOrEqual(5 * 366 + 2);
            expect(conversions).toBe(1);
        }
    });
});

describe('at', () => {
    it('parses a local time in the zone and fires once', () => {
        const { schedule } = parsed('at 2026-12-24 09:00 Merry Christmas');
        expect(schedule).toEqual({ kind: 'at', at: t('2026-12-24T08:00:00Z') });
        expect(nextFire(schedule, NOW, BERLIN)).toBe(t('2026-12-24T08:00:00Z'));
        expect(nextFire(schedule, t('2026-12-24T07:59:59.999Z'), BERLIN)).toBe(t('2026-12-24T08:00:00Z'));
        expect(nextFire(schedule, t('2026-12-24T08:00:00Z'), BERLIN)).toBeUndefined();
        expect(nextFire(schedule, t('2027-01-01T00:00:00Z'), BERLIN)).toBeUndefined();
        expect(parsed('at 2026-12-24 09:00 x', 'America/New_York').schedule).toEqual({ kind: 'at', at: t('2026-12-24T14:00:00Z') });
    });

    it('refuses a time in the past or now', () => {
        expect(parseError('at 2026-02-28 09:00 x')).toBe('2026-02-28 09:00 is in the past');
        // 01:00 in Berlin on March 1 is exactly NOW.
        expect(parseError('at 2026-03-01 01:00 x')).toBe('2026-03-01 01:00 is in the past');
        expect(parsed('at 2026-03-01 01:01 x').schedule).toEqual({ kind: 'at', at: t('2026-03-01T00:01:00Z') });
    });

    it('refuses dates that do not exist and malformed input', () => {
        expect(parseError('at 2026-02-30 09:00 x')).toBe('2026-02-30 is not a date');
        for (const bad of ['at 2026-12-24 9am x', 'at 24.12.2026 09:00 x', 'at 2026-12-24 x', 'at']) {
            expect(parseError(bad)).toMatch(/^expected a local date and 24-hour time/);
        }
    });

    it('moves a time in the spring-forward gap to its end, and takes the first of a repeated time', () => {
        expect(parsed('at 2026-03-29 02:30 x').schedule).toEqual({ kind: 'at', at: t('2026-03-29T01:00:00Z') });
        expect(parsed('at 2026-10-25 02:30 x').schedule).toEqual({ kind: 'at', at: t('2026-10-25T00:30:00Z') });
    });
});

describe('describeSchedule', () => {
    it('describes each kind briefly', () => {
        expect(describeSchedule(cron('0 9 * * 1-5'), BERLIN)).toBe('cron 0 9 * * 1-5');
        expect(describeSchedule(parsed('  0   9 * * MON-FRI  x').schedule, BERLIN)).toBe('cron 0 9 * * mon-fri');
        expect(describeSchedule({ kind: 'every', everyMs: 30 * 60_000 }, BERLIN)).toBe('every 30m');
        expect(describeSchedule({ kind: 'every', everyMs: 90 * 60_000 }, BERLIN)).toBe('every 90m');
        expect(describeSchedule({ kind: 'every', everyMs: 2 * 3_600_000 }, BERLIN)).toBe('every 2h');
        expect(describeSchedule({ kind: 'every', everyMs: 36 * 3_600_000 }, BERLIN)).toBe('every 36h');
        expect(describeSchedule({ kind: 'every', everyMs: 48 * 3_600_000 }, BERLIN)).toBe('every 2d');
        expect(describeSchedule({ kind: 'daily', hour: 9, minute: 5 }, BERLIN)).toBe('every day 09:05');
        expect(describeSchedule({ kind: 'daily', hour: 0, minute: 0 }, BERLIN)).toBe('every day 00:00');
    });

    it('shows a one-shot in the local time of the zone', () => {
        const at: Schedule = { kind: 'at', at: t('2026-12-24T08:00:00Z') };
        expect(describeSchedule(at, BERLIN)).toBe('once at 2026-12-24 09:00');
        expect(describeSchedule(at, 'America/New_York')).toBe('once at 2026-12-24 03:00');
        expect(describeSchedule({ kind: 'at', at: t('2026-06-30T22:05:00Z') }, BERLIN)).toBe('once at 2026-07-01 00:05');
    });

    it('round-trips what parseSchedule accepted', () => {
        for (const text of ['every 30m', 'every 2h', 'every 1d', 'every day 09:00', 'at 2026-12-24 09:00', 'cron 0 9 * * 1-5']) {
            const input = text.startsWith('cron ') ? text.slice(5) : text;
            expect(describeSchedule(parsed(`${input} prompt`).schedule, BERLIN)).toBe(text.startsWith('at') ? `once ${text}` : text);
        }
    });
});
