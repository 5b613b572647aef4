import { usageDay } from '../../../src/usage/usage';

describe('usageDay: the budget day in the configured zone', () => {
    it('is the local calendar day, as YYYY-MM-DD, on both sides of midnight', () => {
        const at = Date.parse('2026-12-01T23:30:00Z');
        expect(usageDay(at, 'UTC')).toBe('2026-12-01');
        expect(usageDay(at, 'Europe/Berlin')).toBe('2026-12-02');
        expect(usageDay(at, 'America/New_York')).toBe('2026-12-01');
        expect(usageDay(Date.parse('2026-01-05T04:59:00Z'), 'America/New_York')).toBe('2026-01-04');
        expect(usageDay(Date.parse('2026-01-05T05:00:00Z'), 'America/New_York')).toBe('2026-01-05');
    });

    it('follows daylight saving time (the zone formatter is shared, not rebuilt)', () => {
        // Berlin is UTC+2 in summer, UTC+1 in winter: 22:30 UTC is past midnight only in summer.
        expect(usageDay(Date.parse('2026-07-10T22:30:00Z'), 'Europe/Berlin')).toBe('2026-07-11');
        expect(usageDay(Date.parse('2026-01-10T22:30:00Z'), 'Europe/Berlin')).toBe('2026-01-10');
        // Asked again with another zone in between: each zone keeps its own answer.
        expect(usageDay(Date.parse('2026-07-10T22:30:00Z'), 'UTC')).toBe('2026-07-10');
        expect(usageDay(Date.parse('2026-07-10T22:30:00Z'), 'Europe/Berlin')).toBe('2026-07-11');
    });
});
