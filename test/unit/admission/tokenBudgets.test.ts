/**
 * Issue 31, "Tests that make this last": token budgets count the tokens in AND the tokens out.
 * overBudget (src/usage/usage.ts) decides, from today's totals; usageOf reads both counts from
 * either of Hermes's usage shapes; budgetHit reads the totals the budgets set need. The end-to-end
 * half is test/e2e/tokenBudgets.test.ts.
 */
import { budgetHit } from '../../../src/admission/turnAdmission';
import { Budgets, overBudget, Totals, UsagePort, usageOf } from '../../../src/usage/usage';
import { TEST_CONFIG } from '../../support/turnPorts';

const NONE: Budgets = { userTurns: 0, userTokens: 0, roomTurns: 0, roomTokens: 0 };
/** One answered turn: 300 in, 500 out. Neither count alone reaches 800; their sum does. */
const USED: Totals = { turns: 1, in: 300, out: 500 };

describe('overBudget: a token budget is the tokens in plus the tokens out', () => {
    it("a person's budget of exactly in + out is used up; one token more is not", () => {
        expect(overBudget({ ...NONE, userTokens: 800 }, USED, undefined)).toEqual({ budget: 'user_tokens', limit: 800 });
        expect(overBudget({ ...NONE, userTokens: 801 }, USED, undefined)).toBeUndefined();
    });

    it("a room's budget of exactly in + out is used up; one token more is not", () => {
        expect(overBudget({ ...NONE, roomTokens: 800 }, undefined, USED)).toEqual({ budget: 'room_tokens', limit: 800 });
        expect(overBudget({ ...NONE, roomTokens: 801 }, undefined, USED)).toBeUndefined();
    });

    it('input only or output only counts in full, on either side', () => {
        expect(overBudget({ ...NONE, userTokens: 300 }, { turns: 1, in: 300, out: 0 }, undefined)).toEqual({ budget: 'user_tokens', limit: 300 });
        expect(overBudget({ ...NONE, userTokens: 500 }, { turns: 1, in: 0, out: 500 }, undefined)).toEqual({ budget: 'user_tokens', limit: 500 });
        expect(overBudget({ ...NONE, roomTokens: 300 }, undefined, { turns: 1, in: 300, out: 0 })).toEqual({ budget: 'room_tokens', limit: 300 });
        expect(overBudget({ ...NONE, roomTokens: 500 }, undefined, { turns: 1, in: 0, out: 500 })).toEqual({ budget: 'room_tokens', limit: 500 });
    });

    it("the person's tokens count against the person's budget, the room's against the room's", () => {
        const quiet: Totals = { turns: 1, in: 1, out: 1 };
        expect(overBudget({ ...NONE, userTokens: 800 }, quiet, USED)).toBeUndefined();
        expect(overBudget({ ...NONE, roomTokens: 800 }, USED, quiet)).toBeUndefined();
        // Tokens are not turns, and turns are not tokens.
        expect(overBudget({ ...NONE, userTurns: 2, roomTurns: 2 }, USED, USED)).toBeUndefined();
        expect(overBudget({ ...NONE, userTokens: 2, roomTokens: 2 }, { turns: 5, in: 0, out: 0 }, { turns: 5, in: 0, out: 0 })).toBeUndefined();
    });

    it('no totals yet (nothing used today) is under every budget', () => {
        expect(overBudget({ userTurns: 1, userTokens: 1, roomTurns: 1, roomTokens: 1 }, undefined, undefined)).toBeUndefined();
    });
});

describe("usageOf: both counts, in Hermes's two shapes", () => {
    it('runs report input/output_tokens, chat completions prompt/completion_tokens', () => {
        expect(usageOf({ input_tokens: 300, output_tokens: 500, total_tokens: 800 })).toEqual({ in: 300, out: 500 });
        expect(usageOf({ prompt_tokens: 300, completion_tokens: 500, total_tokens: 800 })).toEqual({ in: 300, out: 500 });
    });

    it('one count missing is 0, the other kept', () => {
        expect(usageOf({ input_tokens: 300 })).toEqual({ in: 300, out: 0 });
        expect(usageOf({ completion_tokens: 500 })).toEqual({ in: 0, out: 500 });
    });
});

describe('budgetHit: the totals a token budget needs, read once', () => {
    function usage() {
        const asked: Array<{ user: boolean; room: boolean }> = [];
        const port: UsagePort = {
            today: async (_day, _userId, _roomId, need) => (asked.push(need), { user: need.user ? USED : undefined, room: need.room ? USED : undefined }),
            record: async () => undefined,
            over: async () => ({ turns: 0, in: 0, out: 0 }),
        };
        return { port, asked };
    }
    const ask = { asker: { id: 'U1', username: 'alice' }, room: { id: 'R1', type: 'c' } };

    it("a person's token budget reads the person's totals only, and is hit at in + out", async () => {
        const u = usage();
        expect(await budgetHit(ask, { ...TEST_CONFIG, budgetUserTokens: 800 }, u.port, Date.now())).toEqual({ budget: 'user_tokens', limit: 800 });
        expect(u.asked).toEqual([{ user: true, room: false }]);
        expect(await budgetHit(ask, { ...TEST_CONFIG, budgetUserTokens: 801 }, usage().port, Date.now())).toBeUndefined();
    });

    it("a room's token budget reads the room's totals only, and is hit at in + out", async () => {
        const u = usage();
        expect(await budgetHit(ask, { ...TEST_CONFIG, budgetRoomTokens: 800 }, u.port, Date.now())).toEqual({ budget: 'room_tokens', limit: 800 });
        expect(u.asked).toEqual([{ user: false, room: true }]);
        expect(await budgetHit(ask, { ...TEST_CONFIG, budgetRoomTokens: 801 }, usage().port, Date.now())).toBeUndefined();
    });
});
