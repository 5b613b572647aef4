import { shownSoFar, STREAM_CURSOR, textPrint } from '../../../src/delivery/streamText';

/** What of a growing answer is shown (delivery/streamText.ts). */
describe('the words of an answer still being written', () => {
    it('are whole: the last word waits until a space or line break ends it', () => {
        expect(shownSoFar('Hello wor')).toBe('Hello');
        expect(shownSoFar('Hello world ')).toBe('Hello world');
        expect(shownSoFar('Hello\nworld')).toBe('Hello');
        expect(shownSoFar('Hello')).toBe('');
        expect(shownSoFar('')).toBe('');
    });

    it('never end in a half-typed mention', () => {
        expect(shownSoFar('Ask @al')).toBe('Ask');
        expect(shownSoFar('Ask @alice ')).toBe('Ask @alice');
    });

    it('are trimmed as the final answer is, and leave MEDIA: tags out', () => {
        expect(shownSoFar('\n\nTOOL_RESULT_SEEN: ok ')).toBe('TOOL_RESULT_SEEN: ok');
        expect(shownSoFar('Chart:\nMEDIA:/tmp/a.png\nthere ')).toBe('Chart:\nthere');
    });

    it('all of them when the text stopped growing (an approval request)', () => {
        expect(shownSoFar('Let me check', true)).toBe('Let me check');
    });

    it('end with the block cursor of Hermes’s own gateways', () => {
        expect(STREAM_CURSOR).toBe(' \u2589');
    });
});

describe('the fingerprint of streamed words', () => {
    it('is FNV-1a (32 bits): the published test vectors', () => {
        expect(textPrint('')).toBe('811c9dc5');
        expect(textPrint('a')).toBe('e40c292c');
        expect(textPrint('foobar')).toBe('bf9cf968');
        // Eight hex digits always, leading zeros kept.
        expect(textPrint('w0')).toBe('0f473672');
    });
});
