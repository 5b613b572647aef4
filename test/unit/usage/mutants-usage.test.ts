import { add, overBudget, shortCount, usageDay, usageOf, ZERO } from '../../../src/usage/usage';

/**
 * Usage edges the older tests left open (found by mutation testing, `npm run mutate`): the
 * footer's short counts at each unit's boundary, totals added field by field, what Hermes's
 * usage object may hold that counts for nothing, and the order of the budgets.
 */
describe('shortCount', () => {
    it('writes counts under a thousand as they are', () => {
        expect(shortCount(0)).toBe('0');
        expect(shortCount(340)).toBe('340');
        expect(shortCount(999)).toBe('999');
    });

    it('writes thousands with one decimal under 10k, none from 10k, and drops a trailing .0', () => {
        expect(shortCount(1000)).toBe('1k');
        expect(shortCount(1234)).toBe('1.2k');
        expect(shortCount(9_949)).toBe('9.9k');
        expect(shortCount(10_000)).toBe('10k');
        expect(shortCount(12_345)).toBe('12k');
        expect(shortCount(999_499)).toBe('999k');
    });

    it('writes millions with one decimal, a trailing .0 dropped', () => {
        expect(shortCount(1_000_000)).toBe('1M');
        expect(shortCount(2_500_000)).toBe('2.5M');
        expect(shortCount(12_340_000)).toBe('12.3M');
    });
});

describe('add', () => {
    it('adds each field to its own', () => {
        expect(add({ turns: 1, in: 20, out: 300 }, { turns: 4000, in: 50_000, out: 600_000 })).toEqual({ turns: 4001, in: 50_020, out: 600_300 });
        expect(add(ZERO, { turns: 2, in: 3, out: 5 })).toEqual({ turns: 2, in: 3, out: 5 });
    });

    it('starts from zero everywhere', () => {
        expect(ZERO).toEqual({ turns: 0, in: 0, out: 0 });
    });
});

describe('usageOf: what counts for nothing', () => {
    it('is undefined without an object or without a count in it', () => {
        expect(usageOf(undefined)).toBeUndefined();
        expect(usageOf(null)).toBeUndefined();
        expect(usageOf(42)).toBeUndefined();
        expect(usageOf('input_tokens')).toBeUndefined();
        expect(usageOf({})).toBeUndefined();
        expect(usageOf({ total_tokens: 800 })).toBeUndefined();
    });

    it('skips counts that are not finite non-negative numbers', () => {
        expect(usageOf({ input_tokens: -1, output_tokens: '5' })).toBeUndefined();
        expect(usageOf({ input_tokens: Number.NaN, output_tokens: Number.POSITIVE_INFINITY })).toBeUndefined();
        expect(usageOf({ input_tokens: -1, output_tokens: 7 })).toEqual({ in: 0, out: 7 });
        expect(usageOf({ input_tokens: 0, output_tokens: 0 })).toEqual({ in: 0, out: 0 });
    });

    it('rounds fractional counts', () => {
        expect(usageOf({ input_tokens: 2.4, output_tokens: 2.6 })).toEqual({ in: 2, out: 3 });
    });

    it("prefers the runs' names, falling back to the chat names one count at a time", () => {
        expect(usageOf({ input_tokens: 1, prompt_tokens: 2, output_tokens: 3, completion_tokens: 4 })).toEqual({ in: 1, out: 3 });
        expect(usageOf({ input_tokens: 'x', prompt_tokens: 2, output_tokens: null, completion_tokens: 4 })).toEqual({ in: 2, out: 4 });
    });
});

describe('overBudget: order and limits', () => {
    const none = { userTurns: 0, userTokens: 0, roomTurns: 0, roomTokens: 0 };

    it('counts turns against the turn budgets, at the limit and not before', () => {
        expect(overBudget({ ...none, userTurns: 3 }, { turns: 3, in: 0, out: 0 }, undefined)).toEqual({ budget: 'user_turns', limit: 3 });
        expect(overBudget({ ...none, userTurns: 3 }, { turns: 2, in: 900, out: 900 }, undefined)).toBeUndefined();
        expect(overBudget({ ...none, roomTurns: 3 }, undefined, { turns: 3, in: 0, out: 0 })).toEqual({ budget: 'room_turns', limit: 3 });
        expect(overBudget({ ...none, roomTurns: 3 }, undefined, { turns: 2, in: 900, out: 900 })).toBeUndefined();
    });

    it("names the person's budgets before the room's, turns before tokens", () => {
        const used = { turns: 9, in: 900, out: 900 };
        expect(overBudget({ userTurns: 1, userTokens: 1, roomTurns: 1, roomTokens: 1 }, used, used)).toEqual({ budget: 'user_turns', limit: 1 });
        expect(overBudget({ userTurns: 0, userTokens: 1, roomTurns: 1, roomTokens: 1 }, used, used)).toEqual({ budget: 'user_tokens', limit: 1 });
        expect(overBudget({ userTurns: 0, userTokens: 0, roomTurns: 1, roomTokens: 1 }, used, used)).toEqual({ budget: 'room_turns', limit: 1 });
    });

    it('ignores a budget of 0 however much was used', () => {
        expect(overBudget(none, { turns: 1e6, in: 1e9, out: 1e9 }, { turns: 1e6, in: 1e9, out: 1e9 })).toBeUndefined();
    });
});

describe('usageDay', () => {
    it('pads month and day to two digits', () => {
        expect(usageDay(Date.parse('2026-03-04T12:00:00Z'), 'UTC')).toBe('2026-03-04');
    });
});
