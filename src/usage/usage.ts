import { zoneFormatter } from '../time/timestamp';

/** Tokens of one turn, as Hermes reports them (runs: input/output_tokens; chat: prompt/completion_tokens). */
export interface Usage {
    in: number;
    out: number;
}

/** What a person or room used in a period. */
export interface Totals {
    turns: number;
    in: number;
    out: number;
}

export const ZERO: Totals = { turns: 0, in: 0, out: 0 };

export function add(a: Totals, b: Totals): Totals {
    return { turns: a.turns + b.turns, in: a.in + b.in, out: a.out + b.out };
}

/** Reads Hermes's usage object in either shape; undefined when it says nothing usable. */
export function usageOf(raw: unknown): Usage | undefined {
    const u = raw as Record<string, unknown> | undefined;
    if (!u || typeof u !== 'object') {
        return undefined;
    }
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined);
    const input = n(u.input_tokens) ?? n(u.prompt_tokens);
    const output = n(u.output_tokens) ?? n(u.completion_tokens);
    return input === undefined && output === undefined ? undefined : { in: input ?? 0, out: output ?? 0 };
}

/** `1.2k`, `340`, `2.5M`: short enough for a footer. */
export function shortCount(n: number): string {
    if (n < 1000) {
        return String(n);
    }
    if (n < 1_000_000) {
        return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0).replace(/\.0$/, '')}k`;
    }
    return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

export interface Budgets {
    userTurns: number;
    userTokens: number;
    roomTurns: number;
    roomTokens: number;
}

export type BudgetHit = { budget: 'user_turns' | 'user_tokens' | 'room_turns' | 'room_tokens'; limit: number };

/** The first daily budget this turn would go over (0 = no budget), given today's totals. */
export function overBudget(budgets: Budgets, user: Totals | undefined, room: Totals | undefined): BudgetHit | undefined {
    const checks: Array<[BudgetHit['budget'], number, number | undefined]> = [
        ['user_turns', budgets.userTurns, user?.turns],
        ['user_tokens', budgets.userTokens, user && user.in + user.out],
        ['room_turns', budgets.roomTurns, room?.turns],
        ['room_tokens', budgets.roomTokens, room && room.in + room.out],
    ];
    for (const [budget, limit, used] of checks) {
        if (limit > 0 && (used ?? 0) >= limit) {
            return { budget, limit };
        }
    }
    return undefined;
}

/** Where usage lives: per person, room and day (the app's persistence), 35 days kept. */
/** What a finished turn's usage row keeps besides the counts. */
export interface FinishedTurn {
    /** The question's message id: the row is its lasting receipt. */
    receipt: string;
    answered: boolean;
    /** The answer's messages, the Hermes session and run: what a vote on one of them is recorded with (feedback/). */
    answers?: string[];
    sessionId?: string;
    runId?: string;
    /** An answered turn of a conversation: what `/hermes retry` and `undo` find it by (sessions/exchanges.ts). */
    exchange?: ExchangeFacts;
}

/** What a conversation's answered turn records for retry and undo, beside its usage (never its text). */
export interface ExchangeFacts {
    key: string;
    question: string;
    askerUsername: string;
    threadId?: string;
    print: string;
    at: number;
}

export interface UsagePort {
    /**
     * Adds one finished turn to the day's totals of the person in the room: `answered` turns count,
     * with their tokens. The same write is the turn's lasting receipt (`receipt`: its message id),
     * so ending a turn costs one call for both.
     */
    record(day: string, userId: string, roomId: string, usage: Usage | undefined, turn: FinishedTurn): Promise<void>;
    /** Today's totals for the budget check, in one read: what `need` asks for. */
    today(day: string, userId: string, roomId: string, need: { user: boolean; room: boolean }): Promise<{ user?: Totals; room?: Totals }>;
    /** Totals over days (for `/hermes usage`), by person, room or everyone. */
    over(days: string[], who: { userId?: string; roomId?: string }): Promise<Totals>;
}

const DAY_FIELDS: Intl.DateTimeFormatOptions = { year: 'numeric', month: '2-digit', day: '2-digit' };

/** The usage day of a moment, in the app's time zone (budgets reset at local midnight). */
export function usageDay(at: number, timeZone: string): string {
    // The shared formatter: building one costs more than the rest of a turn's finish (the Deno profile of a turn).
    const parts = zoneFormatter(timeZone, DAY_FIELDS).formatToParts(new Date(at));
    const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
    return `${get('year')}-${get('month')}-${get('day')}`;
}
