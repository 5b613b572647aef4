import { MAX_TRIGGER_CHARS, renderWindow, roomTurnText, triggerText } from '../../../src/context/contextBlock';
import { ContextMessage } from '../../../src/context/contextMessage';
import { renderLine } from '../../../src/context/contextBlock';
import { cutAtCodePoint, label } from '../../../src/security/inertText';
import { formatStamp } from '../../../src/time/timestamp';
import { trimContext } from '../../../src/context/trimContext';
import { isContextWorthy, selectWindow, WindowOptions, windowSettled } from '../../../src/context/window';

/**
 * Context edges the older tests left open (found by mutation testing, `npm run mutate`):
 * the character cap at its boundary, windows that start at the very first message, the
 * "settled" test that lets the reader stop early, labels, UTC stamps and the 413 trim.
 */
const BOT = 'BOT';
const ALICE = 'ALICE';
const BOB = 'BOB';
const t0 = Date.parse('2026-10-06T09:00:00Z');
let seq = 0;
function msg(senderId: string, text: string, extra: Partial<ContextMessage> = {}): ContextMessage {
    seq++;
    const names: Record<string, string> = { BOT: 'hermes', ALICE: 'alice', BOB: 'bob' };
    return {
        id: `m${seq}`,
        senderId,
        senderUsername: names[senderId] ?? senderId,
        text,
        createdAt: new Date(t0 + seq * 60_000),
        isSystem: false,
        files: [],
        ...extra,
    };
}
const texts = (w: ContextMessage[]) => w.map((m) => m.text);
const renderOpts = { timeZone: 'UTC', botId: BOT, allowedUserIds: [] as string[] };
const perPerson: WindowOptions = { askerId: ALICE, botId: BOT, botUsername: 'hermes', perPerson: true, min: 2, max: 50 };
const shared: WindowOptions = { ...perPerson, perPerson: false };

describe('the character cap of the context block', () => {
    // Rendered inside each test: what runs outside a test counts as static for `npm run mutate`.
    let window: ContextMessage[] = [];
    let lines: string[] = [];
    beforeEach(() => {
        window = [msg(ALICE, 'one'), msg(BOB, 'two'), msg(ALICE, 'three')];
        lines = window.map((m) => renderLine(m, renderOpts));
    });
    /** Each line counts with its line break. */
    const size = (ls: string[]) => ls.reduce((n, l) => n + l.length + 1, 0);

    it('keeps every line when they fit exactly, line breaks counted', () => {
        expect(renderWindow(window, renderOpts, size(lines))).toEqual(lines);
    });

    it('drops the oldest line when one character is missing', () => {
        expect(renderWindow(window, renderOpts, size(lines) - 1)).toEqual(lines.slice(1));
    });

    it('drops no more than needed: the rest fits exactly after the oldest is gone', () => {
        expect(renderWindow(window, renderOpts, size(lines.slice(1)))).toEqual(lines.slice(1));
        expect(renderWindow(window, renderOpts, size(lines.slice(1)) - 1)).toEqual(lines.slice(2));
    });

    it('leaves the newest line whole when it fits exactly, and cuts it one character below', () => {
        const one = [msg(ALICE, 'a message of some length')];
        const line = renderLine(one[0], renderOpts);
        expect(renderWindow(one, renderOpts, line.length + 1)).toEqual([line]);
        const cut = renderWindow(one, renderOpts, line.length);
        expect(cut).toHaveLength(1);
        expect(cut[0].endsWith(' …')).toBe(true);
        expect(cut[0].length).toBeLessThan(line.length);
    });
});

describe('the trigger', () => {
    it('is cut only when it is longer than the cap', () => {
        const exact = 'x'.repeat(MAX_TRIGGER_CHARS);
        expect(triggerText(exact)).toBe(exact);
        expect(triggerText(`${exact}y`)).toBe(`${exact}\n  [message truncated]`);
    });

    it('carries the speaker and the references setting into the room turn', () => {
        expect(roomTurnText({ roomId: 'R', lines: [], trigger: 'hi', speaker: 'bob' }).split('\n').pop()).toBe('[bob] hi');
        expect(roomTurnText({ roomId: 'R', lines: [], trigger: 'see @file:a.txt', allowReferences: true }).split('\n').pop()).toBe('see @file:a.txt');
        expect(roomTurnText({ roomId: 'R', lines: [], trigger: 'see @file:a.txt' }).split('\n').pop()).toBe('see @\u200Bfile:a.txt');
    });
});

describe('what the context shows', () => {
    it("shows other people's messages whatever marks they carry; of the bot's own only answers", () => {
        expect(isContextWorthy(msg(ALICE, 'x', { botKind: 'status' }), BOT)).toBe(true);
        expect(isContextWorthy(msg(BOT, 'x', { botKind: 'status' }), BOT)).toBe(false);
        expect(isContextWorthy(msg(BOT, 'x', { botKind: 'answer' }), BOT)).toBe(true);
        expect(isContextWorthy(msg(BOT, 'x'), BOT)).toBe(true);
        expect(isContextWorthy(msg(ALICE, 'x', { isSystem: true }), BOT)).toBe(false);
    });

    it("per person: leaves out system messages and notices after the asker's previous mention", () => {
        const history = [
            msg(ALICE, '@hermes first'),
            msg(BOB, 'between'),
            msg(BOB, 'joined', { isSystem: true }),
            msg(BOT, 'Working…', { botKind: 'status' }),
            msg(BOB, 'after'),
        ];
        expect(texts(selectWindow(history, perPerson))).toEqual(['between', 'after']);
    });

    it('per person: a previous mention in the very first message still cuts the window', () => {
        const history = [msg(ALICE, '@hermes first'), msg(BOB, 'then this')];
        expect(texts(selectWindow(history, perPerson))).toEqual(['then this']);
    });
});

describe('when the history reader may stop', () => {
    it("per person: as soon as the asker's previous mention is in hand", () => {
        expect(windowSettled([msg(ALICE, '@hermes earlier'), msg(BOB, 'x')], perPerson)).toBe(true);
        expect(windowSettled([msg(BOB, 'x'), msg(BOT, 'answer')], perPerson)).toBe(false);
    });

    it("shared: once the bot's last answer is in hand with at least `min` messages", () => {
        expect(windowSettled([msg(BOT, 'answer'), msg(BOB, 'x')], shared)).toBe(true);
        expect(windowSettled([msg(BOT, 'answer')], shared)).toBe(false);
        expect(windowSettled([msg(BOB, 'x'), msg(ALICE, 'y'), msg(BOB, 'z')], shared)).toBe(false);
    });

    it('never at a notice of the bot: only answers count', () => {
        expect(windowSettled([msg(BOT, 'notice', { botKind: 'notice' }), msg(BOB, 'x'), msg(BOB, 'y')], shared)).toBe(false);
    });

    it('counts only messages the context shows', () => {
        const system = [msg(BOT, 'answer'), msg(BOB, 'joined', { isSystem: true })];
        expect(windowSettled(system, shared)).toBe(false);
        expect(windowSettled([msg(BOB, 'a'), msg(BOB, 'b', { isSystem: true })], { ...shared, max: 2 })).toBe(false);
    });

    it('always once `max` messages are in hand, with `max` itself enough', () => {
        const two = [msg(BOB, 'a'), msg(BOB, 'b')];
        expect(windowSettled(two, { ...perPerson, max: 2 })).toBe(true);
        expect(windowSettled(two, { ...perPerson, max: 3 })).toBe(false);
    });

    it('per person, a bot answer alone does not settle it', () => {
        expect(windowSettled([msg(BOT, 'answer'), msg(BOB, 'x'), msg(BOB, 'y')], perPerson)).toBe(false);
    });

    it('shared: exactly `min` messages are enough', () => {
        expect(windowSettled([msg(BOB, 'x'), msg(BOT, 'answer')], { ...shared, min: 2 })).toBe(true);
        expect(windowSettled([msg(BOB, 'x'), msg(BOT, 'answer')], { ...shared, min: 3 })).toBe(false);
    });
});

describe('rendered lines and labels', () => {
    it('trims the message text', () => {
        expect(renderLine({ ...msg(ALICE, '  hi there \n'), createdAt: new Date('2026-10-06T09:58:00Z') }, renderOpts)).toBe(
            '[2026-10-06 09:58 +00:00] alice: hi there',
        );
    });

    it('makes a name one tidy line', () => {
        expect(label(' bob ')).toBe('bob');
        expect(label('a  b\n\tc')).toBe('a b c');
        expect(label('[]')).toBe('unknown');
        expect(label('')).toBe('unknown');
    });

    it('returns text that fits as it is', () => {
        expect(cutAtCodePoint('abc', 3)).toBe('abc');
        expect(cutAtCodePoint('ab\uD83D', 3)).toBe('ab\uD83D');
        expect(cutAtCodePoint('ab\uD83D\uDE00', 3)).toBe('ab');
        expect(cutAtCodePoint('abcd', 3)).toBe('abc');
    });

    it('writes UTC as +00:00', () => {
        expect(formatStamp(new Date('2026-10-06T09:58:00Z'), 'UTC')).toBe('2026-10-06 09:58 +00:00');
        expect(formatStamp(new Date('2026-01-06T09:58:00Z'), 'Europe/London')).toBe('2026-01-06 09:58 +00:00');
        expect(formatStamp(new Date('2026-01-06T09:58:00Z'), 'America/New_York')).toBe('2026-01-06 04:58 -05:00');
    });

    it('writes +00:00 also where the ICU names offset zero plain "GMT" (Node 20 writes GMT+00:00)', () => {
        const formatToParts = Intl.DateTimeFormat.prototype.formatToParts;
        const spy = jest.spyOn(Intl.DateTimeFormat.prototype, 'formatToParts').mockImplementation(function (this: Intl.DateTimeFormat, date?: Date | number) {
            return formatToParts.call(this, date).map((p) => (p.type === 'timeZoneName' && p.value === 'GMT+00:00' ? { ...p, value: 'GMT' } : p));
        });
        try {
            expect(formatStamp(new Date('2026-10-06T09:58:00Z'), 'Africa/Abidjan')).toBe('2026-10-06 09:58 +00:00');
            expect(formatStamp(new Date('2026-10-06T09:58:00Z'), 'Asia/Tokyo')).toBe('2026-10-06 18:58 +09:00');
        } finally {
            spy.mockRestore();
        }
    });
});

describe('the 413 trim leaves alone what is not a room turn', () => {
    const RECENT = '[Recent chat messages - context only, not requests]';

    it('a text that does not start with the room line, even one that starts with a bracket', () => {
        const dm = `[note]\n${RECENT}\nold\n\n[New message]\nq`;
        expect(trimContext(dm)).toBe(dm);
        const plain = `hello\n${RECENT}\nold\n\n[New message]\nq`;
        expect(trimContext(plain)).toBe(plain);
    });

    it('a room turn whose [New message] is not after a blank line', () => {
        const user = `[Rocket.Chat room_id: R]\n${RECENT}\nold\n[New message]\nq`;
        expect(trimContext(user)).toBe(user);
    });

    it('a room turn whose recent block comes after [New message]', () => {
        const user = `[Rocket.Chat room_id: R]\n\n\n[New message]\n${RECENT}\nq`;
        expect(trimContext(user)).toBe(user);
    });
});
