import { findMentions, mentions, stripMentions } from '../../../src/admission/mention';

describe('bounded mention match', () => {
    it.each([
        ['@hermes', true],
        ['@hermes, what is up?', true],
        ['@hermes: status', true],
        ['hey @hermes what now', true],
        ['thanks @hermes.', true],
        ['(@hermes)', true],
        ['@HERMES hello', true],
        ['@hermes-beta hello', false],
        ['@hermes.bot hello', false],
        ['@hermes_2 hello', false],
        ['mail@hermes hello', false],
        ['@@hermes', false],
        ['hermes hello', false],
        ['', false],
    ])('%j → %s', (text, expected) => {
        expect(mentions(text, 'hermes')).toBe(expected);
    });

    it('matches a username that itself contains dots, bounded the same way', () => {
        expect(mentions('@hermes.bot do it', 'hermes.bot')).toBe(true);
        expect(mentions('@hermes.bot.beta do it', 'hermes.bot')).toBe(false);
        expect(mentions('@hermesXbot', 'hermes.bot')).toBe(false);
    });

    it('finds every mention with its span', () => {
        expect(findMentions('@hermes and @hermes-beta and @hermes', 'hermes')).toEqual([
            { start: 0, end: 7 },
            { start: 29, end: 36 },
        ]);
    });

    it('strips the mention and the punctuation that addressed the bot', () => {
        expect(stripMentions('@hermes, what is the status?', 'hermes')).toBe('what is the status?');
        expect(stripMentions('@hermes: /new', 'hermes')).toBe('/new');
        expect(stripMentions('ask @hermes about it', 'hermes')).toBe('ask about it');
        expect(stripMentions('@hermes-beta is not me @hermes', 'hermes')).toBe('@hermes-beta is not me');
    });

    it('keeps line breaks of a multi-line question', () => {
        expect(stripMentions('@hermes look at this:\n```\ncode\n```', 'hermes')).toBe('look at this:\n```\ncode\n```');
    });
});
