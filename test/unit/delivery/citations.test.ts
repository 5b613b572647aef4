import { linkedMessageIds, withoutLinks } from '../../../src/delivery/citations';

/**
 * Links in an answer to messages of this server: found by the web client's address forms
 * (delivery/quote.ts writes them), and taken out when the asker may not read the message.
 */
const SITE = 'https://chat.example.com';

describe('linkedMessageIds', () => {
    it('finds each message of this server once, in channel, group and direct links, bare or in Markdown', () => {
        const text = [
            `See ${SITE}/channel/eng?msg=AAA111 and [the plan](${SITE}/group/ops?msg=BBB222).`,
            `Again ${SITE}/channel/eng?msg=AAA111, a DM ${SITE}/direct/XYZ?foo=1&msg=CCC333#top`,
            `Elsewhere: https://other.example.com/channel/eng?msg=DDD444 and ${SITE}/channel/eng (no message).`,
        ].join('\n');
        expect(linkedMessageIds(text, SITE)).toEqual(['AAA111', 'BBB222', 'CCC333']);
    });

    it('a Site_Url with a trailing slash or a path; none without one', () => {
        expect(linkedMessageIds('https://x.org/chat/channel/a?msg=M1', 'https://x.org/chat/')).toEqual(['M1']);
        expect(linkedMessageIds(`${SITE}/channel/a?msg=M1`, '')).toEqual([]);
        // A dot of the address is a dot: another host that differs only there is not this server.
        expect(linkedMessageIds('https://chatXexample.com/channel/a?msg=M1', SITE)).toEqual([]);
    });
});

describe('withoutLinks', () => {
    it('a forbidden Markdown link keeps its words, a forbidden bare link goes; allowed ones stay', () => {
        const text = `Decided in [the ops thread](${SITE}/group/ops?msg=BAD1), see ${SITE}/group/ops?msg=BAD1 and ${SITE}/channel/eng?msg=OK1.`;
        expect(withoutLinks(text, SITE, new Set(['BAD1']))).toBe(`Decided in the ops thread, see  and ${SITE}/channel/eng?msg=OK1.`);
        expect(withoutLinks(text, SITE, new Set())).toBe(text);
        expect(withoutLinks(`[a](${SITE}/channel/eng?msg=OK1)`, SITE, new Set(['BAD1']))).toBe(`[a](${SITE}/channel/eng?msg=OK1)`);
    });
});

describe('a Site_Url with several trailing slashes', () => {
    it('is the same server', () => {
        expect(linkedMessageIds(`${SITE}/channel/a?msg=M1`, `${SITE}//`)).toEqual(['M1']);
    });
});
