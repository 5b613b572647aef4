import { fenceAfter, MAX_PARTS, splitMessage } from '../../../src/delivery/split';
import { t } from '../../../src/i18n/messages';
import { quotePrefix } from '../../../src/delivery/quote';

describe('splitting long answers', () => {
    it('leaves a short answer whole', () => {
        expect(splitMessage('hello', 100)).toEqual(['hello']);
    });

    it('splits on paragraphs first and keeps every chunk within the limit', () => {
        const paras = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${'word '.repeat(20)}`.trim());
        const chunks = splitMessage(paras.join('\n\n'), 400);
        expect(chunks.length).toBeGreaterThan(1);
        chunks.forEach((c) => expect(c.length).toBeLessThanOrEqual(400));
        expect(chunks.join('\n\n').replace(/\s+/g, ' ')).toBe(paras.join('\n\n').replace(/\s+/g, ' '));
        chunks.forEach((c) => expect(c.startsWith('Paragraph')).toBe(true));
    });

    it('closes a code fence at the cut and reopens it with its language', () => {
        const code = Array.from({ length: 60 }, (_, i) => `const line${i} = ${i};`).join('\n');
        const text = `Here:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`;
        const chunks = splitMessage(text, 300);
        expect(chunks.length).toBeGreaterThan(2);
        chunks.forEach((c) => {
            expect(c.length).toBeLessThanOrEqual(300);
            expect(fenceAfter(c, undefined)).toBeUndefined();
        });
        expect(chunks[1].startsWith('```ts\n')).toBe(true);
        expect(chunks[chunks.length - 1]).toContain('Done.');
    });

    it('reserves room for the quote prefix in the first chunk', () => {
        const chunks = splitMessage('x '.repeat(300), 200, 80);
        expect(chunks[0].length).toBeLessThanOrEqual(120);
        chunks.slice(1).forEach((c) => expect(c.length).toBeLessThanOrEqual(200));
    });

    it('hard-cuts a single line longer than the limit', () => {
        const chunks = splitMessage('y'.repeat(1000), 300);
        expect(chunks.join('')).toBe('y'.repeat(1000));
        chunks.forEach((c) => expect(c.length).toBeLessThanOrEqual(300));
    });
});

describe('quote prefix', () => {
    it('links the question in channels, groups and DMs and mentions the asker', () => {
        const base = { siteUrl: 'https://chat.example.com/', roomId: 'RID', messageId: 'MID', askerUsername: 'alice' };
        expect(quotePrefix({ ...base, roomType: 'c', roomName: 'general' })).toBe('[ ](https://chat.example.com/channel/general?msg=MID) @alice ');
        expect(quotePrefix({ ...base, roomType: 'p', roomName: 'secret' })).toBe('[ ](https://chat.example.com/group/secret?msg=MID) @alice ');
        expect(quotePrefix({ ...base, roomType: 'd' })).toBe('[ ](https://chat.example.com/direct/RID?msg=MID) @alice ');
    });
});

/** Every part fits: the first together with the reserved prefix. */
function expectWithinLimit(parts: string[], limit: number, firstReserve = 0): void {
    parts.forEach((p, i) => {
        const room = limit - (i === 0 ? firstReserve : 0);
        if (p.length > room) {
            throw new Error(`part ${i + 1} of ${parts.length} has ${p.length} characters, the limit is ${room}`);
        }
    });
}

describe('split boundaries', () => {
    it('the limit check catches a part one character over', () => {
        expect(() => expectWithinLimit(['x'.repeat(101)], 100)).toThrow('part 1 of 1 has 101 characters, the limit is 100');
        expect(() => expectWithinLimit(['x'.repeat(80), 'y'.repeat(101)], 100, 20)).toThrow('part 2 of 2');
        expect(() => expectWithinLimit(['x'.repeat(81)], 100, 20)).toThrow('part 1 of 1 has 81 characters, the limit is 80');
        expect(() => expectWithinLimit(['x'.repeat(100)], 100)).not.toThrow();
    });

    it.each([
        ['exactly at the limit', 300, 0, 1],
        ['one over the limit', 301, 0, 2],
        ['exactly at the limit minus the reserve', 220, 80, 1],
        ['one over the limit minus the reserve', 221, 80, 2],
    ])('%s', (_name, length, reserve, parts) => {
        const chunks = splitMessage('y'.repeat(length), 300, reserve);
        expect(chunks).toHaveLength(parts);
        expectWithinLimit(chunks, 300, reserve);
        expect(chunks.join('')).toBe('y'.repeat(length));
    });

    it('keeps every part within the limit for fenced text at and around the limit', () => {
        for (const limit of [40, 41, 57, 100, 301]) {
            for (const reserve of [0, 1, Math.floor(limit / 2)]) {
                for (let extra = -3; extra <= 3; extra++) {
                    for (const opener of ['```', '~~~~', '```ts', `\`\`\`${'x'.repeat(limit - 5)}`, '`'.repeat(30)]) {
                        const body = 'z'.repeat(Math.max(0, limit + extra - opener.length - 1));
                        const text = `${opener}\n${body}\n${body}\n${opener.replace(/[^`~].*$/, '')}\nafter ${'w '.repeat(limit)}`;
                        expectWithinLimit(splitMessage(text, limit, reserve), limit, reserve);
                    }
                }
            }
        }
    });

    it('does not flood: a fence opener near the limit leaves parts near the limit', () => {
        const limit = 5000;
        const code = Array.from({ length: 1000 }, (_, i) => `line ${i} ${'x'.repeat(20)}`).join('\n');
        const text = `\`\`\`${'a'.repeat(limit - 10)}\n${code}\n\`\`\``;
        const chunks = splitMessage(text, limit);
        expectWithinLimit(chunks, limit);
        expect(chunks.length).toBeLessThanOrEqual(Math.ceil(text.length / (limit / 2)) + 1);
        chunks.slice(0, -1).forEach((c) => expect(c.length).toBeGreaterThan(limit / 2));
        // The over-long opener is reopened as a plain fence.
        expect(chunks[1].startsWith('```\n')).toBe(true);
    });

    it(`stops at MAX_PARTS, the last part saying the answer was cut`, () => {
        expect(MAX_PARTS).toBe(20);
        const chunks = splitMessage('word '.repeat(50_000), 500, 30);
        expect(chunks).toHaveLength(MAX_PARTS);
        expectWithinLimit(chunks, 500, 30);
        expect(chunks[MAX_PARTS - 1].endsWith(`\n${t('answer_cut')}`)).toBe(true);
        expect(chunks.slice(0, -1).some((c) => c.includes(t('answer_cut')))).toBe(false);
        // Exactly MAX_PARTS parts of text are not cut.
        const exact = splitMessage('y'.repeat(300 * MAX_PARTS), 300);
        expect(exact).toHaveLength(MAX_PARTS);
        expect(exact.join('')).toBe('y'.repeat(300 * MAX_PARTS));
    });

    it("closes the last part's code fence before the cut marker", () => {
        const chunks = splitMessage(`\`\`\`py\n${'print(1)\n'.repeat(5000)}`, 300);
        expect(chunks).toHaveLength(MAX_PARTS);
        expectWithinLimit(chunks, 300);
        expect(chunks[MAX_PARTS - 1].endsWith(`\n\`\`\`\n${t('answer_cut')}`)).toBe(true);
    });

    it('closes a tilde fence with tildes', () => {
        const chunks = splitMessage(`~~~\n${'a line\n'.repeat(100)}~~~`, 200);
        expect(chunks[0].endsWith('\n~~~')).toBe(true);
        expect(chunks[1].startsWith('~~~\n')).toBe(true);
    });

    it('never cuts a surrogate pair in half', () => {
        const chunks = splitMessage(`a${'😀'.repeat(400)}`, 101);
        expectWithinLimit(chunks, 101);
        chunks.forEach((c) => expect(c).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/));
        expect(chunks.join('')).toBe(`a${'😀'.repeat(400)}`);
    });
});
