import { cutOut, findExchange, historyOf, inputPrint, MAX_CUTS, TranscriptRow, withoutCuts } from '../../../src/sessions/exchanges';
import { freshRecord } from '../../../src/sessions/sessionRecord';

/** A transcript as v0.18.2 gives it (transcript 32): increasing ids, tool rows already dropped by the client. */
const rows: TranscriptRow[] = [
    { id: 57, role: 'user', content: 'My name is Alice' },
    { id: 58, role: 'assistant', content: 'Hello Alice' },
    { id: 59, role: 'user', content: 'What is my name?' },
    { id: 61, role: 'assistant', content: 'Let me check.' },
    { id: 63, role: 'assistant', content: 'Alice' },
    { id: 64, role: 'user', content: 'thanks' },
    { id: 65, role: 'assistant', content: 'welcome' },
];

describe('inputPrint', () => {
    it('is a short fixed-size print, the same for the same text and different for another', () => {
        expect(inputPrint('What is my name?')).toMatch(/^[0-9a-f]{8}$/);
        expect(inputPrint('What is my name?')).toBe(inputPrint('What is my name?'));
        expect(inputPrint('What is my name?')).not.toBe(inputPrint('What is my name'));
        // FNV-1a 32 of the empty text is its offset basis.
        expect(inputPrint('')).toBe('811c9dc5');
    });
});

describe('findExchange', () => {
    it('spans the question through the last row before the next question', () => {
        expect(findExchange(rows, inputPrint('What is my name?'))).toEqual({ input: 'What is my name?', range: [59, 63] });
    });

    it('the last exchange runs to the end', () => {
        expect(findExchange(rows, inputPrint('thanks'))).toEqual({ input: 'thanks', range: [64, 65] });
    });

    it('takes the latest question with that print (a question asked twice)', () => {
        const twice = [...rows, { id: 70, role: 'user', content: 'thanks' }, { id: 71, role: 'assistant', content: 'again' }];
        expect(findExchange(twice, inputPrint('thanks'))?.range).toEqual([70, 71]);
    });

    it('a question without an answer is its own range', () => {
        expect(findExchange([...rows, { id: 80, role: 'user', content: 'lonely' }], inputPrint('lonely'))?.range).toEqual([80, 80]);
    });

    it('finds nothing for a print no question has, an answer with that print, or rows without ids', () => {
        expect(findExchange(rows, inputPrint('never asked'))).toBeUndefined();
        expect(findExchange(rows, inputPrint('Hello Alice'))).toBeUndefined();
        expect(findExchange([{ role: 'user', content: 'thanks' }], inputPrint('thanks'))).toBeUndefined();
    });

    it('an answer row without an id keeps the range at the last id seen', () => {
        const mixed = [
            { id: 5, role: 'user', content: 'q' },
            { id: 6, role: 'assistant', content: 'a' },
            { role: 'assistant', content: 'b' },
        ];
        expect(findExchange(mixed, inputPrint('q'))?.range).toEqual([5, 6]);
    });
});

describe('withoutCuts', () => {
    const cut = { sessionId: 's1', ranges: [[59, 63]] as Array<[number, number]> };

    it('leaves out the rows inside a range, both ends included', () => {
        expect(withoutCuts(rows, cut, 's1').map((r) => r.id)).toEqual([57, 58, 64, 65]);
        expect(
            withoutCuts(
                rows,
                {
                    sessionId: 's1',
                    ranges: [
                        [58, 58],
                        [65, 99],
                    ],
                },
                's1',
            ).map((r) => r.id),
        ).toEqual([57, 59, 61, 63, 64]);
    });

    it("does not apply another session's cut, or none", () => {
        expect(withoutCuts(rows, cut, 's2')).toEqual(rows);
        expect(withoutCuts(rows, undefined, 's1')).toEqual(rows);
        expect(withoutCuts(rows, { sessionId: 's1', ranges: [] }, 's1')).toEqual(rows);
    });

    it('keeps rows without an id', () => {
        expect(withoutCuts([{ role: 'user', content: 'x' }], cut, 's1')).toEqual([{ role: 'user', content: 'x' }]);
    });
});

describe('historyOf', () => {
    it('sends role and content only', () => {
        expect(historyOf(rows.slice(0, 2))).toEqual([
            { role: 'user', content: 'My name is Alice' },
            { role: 'assistant', content: 'Hello Alice' },
        ]);
        expect(Object.keys(historyOf(rows.slice(0, 1))[0])).toEqual(['role', 'content']);
    });
});

describe('cutOut', () => {
    it("adds a range to the session's own cut", () => {
        const session = freshRecord('k');
        const once = cutOut(session, [1, 2]);
        expect(once?.cut).toEqual({ sessionId: session.sessionId, ranges: [[1, 2]] });
        expect(cutOut(once!, [5, 9])?.cut?.ranges).toEqual([
            [1, 2],
            [5, 9],
        ]);
    });

    it('starts again when the cut named another session (Hermes rotated it), and stops at the limit', () => {
        const session = { ...freshRecord('k'), cut: { sessionId: 'old', ranges: [[1, 2]] as Array<[number, number]> } };
        expect(cutOut(session, [7, 8])?.cut).toEqual({ sessionId: session.sessionId, ranges: [[7, 8]] });
        const full = {
            ...freshRecord('k'),
            cut: { sessionId: freshRecord('k').sessionId, ranges: Array.from({ length: MAX_CUTS }, (_, i) => [i, i] as [number, number]) },
        };
        expect(cutOut(full, [500, 501])).toBeUndefined();
        expect(cutOut({ ...full, cut: { ...full.cut, ranges: full.cut.ranges.slice(1) } }, [500, 501])?.cut?.ranges).toHaveLength(MAX_CUTS);
    });
});
