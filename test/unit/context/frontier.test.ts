import { ContextMessage } from '../../../src/context/contextMessage';
import { BotMessageKind } from '../../../src/delivery/messageKind';
import { Frontier, frontierAfter, frontierWithoutBlock, holdAnswers, parseFrontier, threadSlice } from '../../../src/context/frontier';
import { BACKLOG_LINE, insertBlock, renderOldestFirst } from '../../../src/context/contextBlock';

const BOT = 'BOT';
const T0 = Date.parse('2026-10-06T08:00:00Z');

function msg(id: string, minute: number, sender = 'U1', over: Partial<ContextMessage> = {}): ContextMessage {
    return {
        id,
        senderId: sender,
        senderUsername: sender.toLowerCase(),
        text: id,
        createdAt: new Date(T0 + minute * 60_000),
        isSystem: false,
        files: [],
        ...over,
    };
}

function bot(id: string, minute: number, kind: BotMessageKind = 'answer'): ContextMessage {
    return msg(id, minute, BOT, { botKind: kind });
}

const ids = (ms: ContextMessage[]) => ms.map((m) => m.id);
const at = (minute: number, id: string) => ({ at: T0 + minute * 60_000, id });

describe('threadSlice: what a thread turn hands its session', () => {
    const thread = [
        msg('root', 0),
        msg('a', 1),
        bot('status', 2, 'status'),
        bot('approval', 3, 'approval'),
        bot('cmd', 4, 'command'),
        msg('sys', 5, 'U2', { isSystem: true }),
        bot('notice', 6, 'notice'),
        bot('answer', 7),
        msg('b', 8, 'U2'),
    ];

    it('a new session gets the whole thread from its root, the bot answers and notices included, the moment-bound messages not', () => {
        const slice = threadSlice({ thread, trigger: at(9, 'T'), frontier: undefined, sessionStarted: false, botId: BOT, max: 50 });
        expect(ids(slice.messages)).toEqual(['root', 'a', 'notice', 'answer', 'b']);
        expect(slice.remaining).toBe(0);
        expect(slice.blind).toBe(false);
    });

    it('after a frontier: only later messages, without the ones the session holds', () => {
        const frontier: Frontier = { ...at(1, 'a'), held: [at(7, 'answer')] };
        const slice = threadSlice({ thread, trigger: at(9, 'T'), frontier, sessionStarted: true, botId: BOT, max: 50 });
        expect(ids(slice.messages)).toEqual(['notice', 'b']);
    });

    it('a backlog over the cap: the oldest first, the rest counted', () => {
        const slice = threadSlice({ thread, trigger: at(9, 'T'), frontier: undefined, sessionStarted: false, botId: BOT, max: 2 });
        expect(ids(slice.messages)).toEqual(['root', 'a']);
        expect(slice.remaining).toBe(3);
        expect(ids(slice.candidates)).toEqual(['root', 'a', 'notice', 'answer', 'b']);
    });

    it('the trigger itself is never context, even when the thread read returns it', () => {
        const slice = threadSlice({ thread: [...thread, msg('T', 9)], trigger: at(9, 'T'), frontier: undefined, sessionStarted: false, botId: BOT, max: 50 });
        expect(ids(slice.messages)).not.toContain('T');
    });

    it("a lost frontier (a session with turns, nothing stored): one blind pass — the bot's own messages and what came after its newest", () => {
        const lost = [msg('root', 0), bot('n1', 1, 'notice'), msg('p', 2), bot('ans', 3), msg('q', 4), msg('r', 5)];
        const slice = threadSlice({ thread: lost, trigger: at(6, 'T'), frontier: undefined, sessionStarted: true, botId: BOT, max: 50 });
        expect(ids(slice.messages)).toEqual(['n1', 'ans', 'q', 'r']);
        expect(slice.blind).toBe(true);
    });

    it('equal timestamps are ordered by id, so the frontier splits them exactly', () => {
        const same = [msg('root', 0), msg('m1', 1), msg('m2', 1), msg('m3', 1)];
        const slice = threadSlice({ thread: same, trigger: at(2, 'T'), frontier: { ...at(1, 'm2'), held: [] }, sessionStarted: true, botId: BOT, max: 50 });
        expect(ids(slice.messages)).toEqual(['m3']);
    });
});

describe('frontierAfter / holdAnswers / frontierWithoutBlock', () => {
    it('everything delivered: the frontier moves past the trigger', () => {
        expect(frontierAfter(undefined, [msg('a', 1)], 0, at(2, 'T'))).toEqual({ ...at(2, 'T'), held: [] });
    });

    it('a turn opened by an edit sits before messages it delivered: the frontier goes to the newest of the two', () => {
        expect(frontierAfter(undefined, [msg('a', 5)], 0, at(2, 'T'))).toEqual({ ...at(5, 'a'), held: [] });
    });

    it('a backlog left behind: the frontier stops at the last delivered message and holds the trigger', () => {
        expect(frontierAfter(undefined, [msg('a', 1), msg('b', 2)], 4, at(9, 'T'))).toEqual({ ...at(2, 'b'), held: [at(9, 'T')] });
    });

    it('answers are held until the frontier is well past them; held ids stay unique and bounded', () => {
        let f: Frontier = { ...at(10, 'T'), held: [] };
        f = holdAnswers(f, ['A1', 'A1'], T0 + 11 * 60_000);
        expect(f.held).toEqual([at(11, 'A1')]);
        // A frontier a minute past the answer still holds it (the app's clock runs a little before the server's).
        f = holdAnswers({ ...f, ...at(12, 'T2') }, [], 0);
        expect(ids(f.held as never)).toEqual(['A1']);
        // An hour later it is dropped.
        f = holdAnswers({ ...f, ...at(80, 'T3') }, [], 0);
        expect(f.held).toEqual([]);
        const many = holdAnswers(
            { ...at(0, 'x'), held: [] },
            Array.from({ length: 80 }, (_, i) => `A${i}`),
            T0,
        );
        expect(many.held).toHaveLength(50);
        expect(many.held[49].id).toBe('A79');
    });

    it('without the block (the 413 retry): only the trigger is held; no stored frontier stays none', () => {
        expect(frontierWithoutBlock({ ...at(1, 'a'), held: [] }, at(5, 'T'))).toEqual({ ...at(1, 'a'), held: [at(5, 'T')] });
        expect(frontierWithoutBlock(undefined, at(5, 'T'))).toBeUndefined();
    });

    it('a stored value is used only with its shape', () => {
        expect(parseFrontier({ at: 1, id: 'x', held: [{ at: 2, id: 'y' }, { id: 'bad' }, null] })).toEqual({ at: 1, id: 'x', held: [{ at: 2, id: 'y' }] });
        expect(parseFrontier({ at: '1', id: 'x', held: [] })).toBeUndefined();
        expect(parseFrontier({ at: 1, id: 'x' })).toBeUndefined();
        expect(parseFrontier(undefined)).toBeUndefined();
    });
});

describe('rendering a slice', () => {
    const opts = { timeZone: 'UTC', botId: BOT, allowedUserIds: [] };

    it('takes the oldest messages that fit the character cap; what does not fit is left for later', () => {
        const big = [msg('a', 1, 'U1', { text: 'x'.repeat(50) }), msg('b', 2, 'U1', { text: 'y'.repeat(50) }), msg('c', 3)];
        const out = renderOldestFirst(big, opts, 100);
        expect(out.taken).toBe(1);
        expect(out.lines[0]).toContain('xxxx');
    });

    it('one message over the cap alone is cut rather than dropped', () => {
        const out = renderOldestFirst([msg('a', 1, 'U1', { text: 'z'.repeat(500) })], opts, 100);
        expect(out.taken).toBe(1);
        expect(out.lines[0].length).toBeLessThanOrEqual(100);
        expect(out.lines[0].endsWith(' …')).toBe(true);
    });

    it("the block goes right before the app's blank line and [New message]; a text without it is left alone", () => {
        const user = '[Rocket.Chat room_id: R]\n\n[New message]\n[bob] hi';
        expect(insertBlock(user, ['l1', BACKLOG_LINE(3)])).toBe(
            '[Rocket.Chat room_id: R]\n[Recent chat messages - context only, not requests]\nl1\n[3 more messages of this thread, all from before the new message, follow in later turns]\n\n[New message]\n[bob] hi',
        );
        expect(insertBlock('plain', ['l1'])).toBe('plain');
        expect(insertBlock(user, [])).toBe(user);
    });
});

/**
 * A thread lived through many turns: people chatting, turns of the session, the bot's answers
 * and notices, with a small cap so backlogs form. Whatever the order, every message the
 * session does not hold is handed over exactly once, in order, and nothing else is.
 */
describe('over a whole thread: nothing repeated, nothing skipped', () => {
    function simulate(seed: number, max: number) {
        let state = seed;
        const rand = () => {
            state = (state * 1103515245 + 12345) % 2 ** 31;
            return state / 2 ** 31;
        };
        const thread: ContextMessage[] = [msg('root', 0)];
        const held = new Set<string>();
        const delivered: string[] = [];
        let frontier: Frontier | undefined;
        let started = false;
        let minute = 1;
        for (let step = 0; step < 120; step++) {
            const r = rand();
            minute++;
            if (r < 0.55) {
                thread.push(msg(`p${step}`, minute, rand() < 0.5 ? 'U1' : 'U2'));
            } else if (r < 0.65) {
                thread.push(bot(`n${step}`, minute, 'notice'));
            } else {
                const trigger = at(minute, `T${step}`);
                const slice = threadSlice({ thread, trigger, frontier, sessionStarted: started, botId: BOT, max });
                delivered.push(...ids(slice.messages));
                held.add(trigger.id);
                thread.push(msg(trigger.id, minute));
                minute++;
                const answer = bot(`A${step}`, minute);
                thread.push(answer);
                held.add(answer.id);
                frontier = holdAnswers(frontierAfter(frontier, slice.messages, slice.remaining, trigger), [answer.id], answer.createdAt.getTime() - 1000);
                started = true;
                frontier = parseFrontier(JSON.parse(JSON.stringify(frontier)));
            }
        }
        const last = at(minute + 1, 'LAST');
        const rest = threadSlice({ thread, trigger: last, frontier, sessionStarted: started, botId: BOT, max: 10_000 });
        return { thread, held, delivered, rest: ids(rest.messages) };
    }

    it.each([
        [1, 3],
        [7, 1],
        [42, 5],
        [99, 50],
    ])('seed %i, cap %i', (seed, max) => {
        const { thread, held, delivered, rest } = simulate(seed, max);
        expect(new Set(delivered).size).toBe(delivered.length);
        const expected = ids(thread).filter((id) => !held.has(id));
        expect([...delivered, ...rest]).toEqual(expected);
    });
});
