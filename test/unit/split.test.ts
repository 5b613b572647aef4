import { fenceAfter, splitMessage } from '../../src/delivery/split';
import { quotePrefix } from '../../src/delivery/quote';

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
