import { admit, InboundMessage, isIgnoredSender } from '../../../src/admission/admit';
import { findMentions, mentions, stripMentions } from '../../../src/admission/mention';
import { RecentlySeen } from '../../../src/admission/recentlySeen';

/**
 * Admission edges the older tests left open (found by mutation testing, `npm run mutate`):
 * the ignore list, the age limit at its boundary, DM text, and where a mention ends.
 */
const bot = { id: 'BOT', username: 'hermes' };
const base: InboundMessage = {
    id: 'M1',
    roomId: 'R1',
    roomType: 'c',
    senderId: 'ALICE',
    senderUsername: 'alice',
    text: '@hermes hello',
    isSystem: false,
    edited: false,
};
const open = { allowedUserIds: [] as string[] };

describe('ignored senders', () => {
    it('refuses a sender on the ignore list, by id or by username in any case', () => {
        expect(admit({ ...base, senderId: 'OTHERBOT', senderUsername: 'Deploy-Bot' }, bot, { ...open, ignoreSenders: ['OTHERBOT'] })).toEqual({
            admit: false,
            reason: 'ignored-sender',
        });
        expect(admit({ ...base, senderId: 'OTHERBOT', senderUsername: 'Deploy-Bot' }, bot, { ...open, ignoreSenders: ['deploy-bot'] })).toEqual({
            admit: false,
            reason: 'ignored-sender',
        });
        expect(admit({ ...base, senderId: 'OTHERBOT', senderUsername: 'deploy-bot' }, bot, { ...open, ignoreSenders: ['DEPLOY-BOT'] })).toEqual({
            admit: false,
            reason: 'ignored-sender',
        });
    });

    it('takes everyone else', () => {
        expect(admit(base, bot, { ...open, ignoreSenders: ['OTHERBOT', 'deploy-bot'] })).toEqual({ admit: true, kind: 'room', text: 'hello' });
    });

    it('matches ids exactly and usernames whole', () => {
        const sender = { senderId: 'OtherBot', senderUsername: 'ci' };
        expect(isIgnoredSender(sender, ['OtherBot'])).toBe(true);
        expect(isIgnoredSender(sender, ['CI'])).toBe(true);
        expect(isIgnoredSender(sender, ['otherbot2', 'c', 'cii'])).toBe(false);
        expect(isIgnoredSender(sender, [])).toBe(false);
    });
});

describe('the age limit', () => {
    const at = 1_800_000_000_000;

    it('takes a message exactly at the limit and refuses one a millisecond older', () => {
        expect(admit({ ...base, createdAt: at - 60_000 }, bot, { ...open, maxAgeSeconds: 60, now: at })).toMatchObject({ admit: true });
        expect(admit({ ...base, createdAt: at - 60_001 }, bot, { ...open, maxAgeSeconds: 60, now: at })).toEqual({ admit: false, reason: 'too-old' });
    });

    it('counts the limit in seconds', () => {
        expect(admit({ ...base, createdAt: at - 5_000 }, bot, { ...open, maxAgeSeconds: 10, now: at })).toMatchObject({ admit: true });
        expect(admit({ ...base, createdAt: at - 11_000 }, bot, { ...open, maxAgeSeconds: 10, now: at })).toEqual({ admit: false, reason: 'too-old' });
    });

    it('takes a message from the future (clock skew) and one without a timestamp', () => {
        expect(admit({ ...base, createdAt: at + 3_600_000 }, bot, { ...open, maxAgeSeconds: 60, now: at })).toMatchObject({ admit: true });
        expect(admit(base, bot, { ...open, maxAgeSeconds: 60, now: at })).toMatchObject({ admit: true });
    });

    it('reads the clock when no time is given', () => {
        expect(admit({ ...base, createdAt: Date.now() - 3_600_000 }, bot, { ...open, maxAgeSeconds: 60 })).toEqual({ admit: false, reason: 'too-old' });
        expect(admit({ ...base, createdAt: Date.now() - 1_000 }, bot, { ...open, maxAgeSeconds: 60 })).toMatchObject({ admit: true });
    });
});

describe('DM text', () => {
    it('is the message as written, trimmed: a mention in a DM is part of the text', () => {
        expect(admit({ ...base, roomType: 'd', directMemberCount: 2, text: '  @hermes what is @hermes?  ' }, bot, open)).toEqual({
            admit: true,
            kind: 'dm',
            text: '@hermes what is @hermes?',
        });
    });
});

describe('where a mention ends', () => {
    it('a name character after the username continues the name, even at the end of the text', () => {
        expect(mentions('@hermes- hi', 'hermes')).toBe(false);
        expect(mentions('@hermes_', 'hermes')).toBe(false);
        expect(mentions('@hermes.x', 'hermes')).toBe(false);
        expect(mentions('@hermes. next', 'hermes')).toBe(true);
    });

    it('drops only a comma or colon right after the mention, not other punctuation', () => {
        expect(stripMentions('@hermes?x', 'hermes')).toBe('?x');
        expect(stripMentions('@hermes!', 'hermes')).toBe('!');
        expect(stripMentions('@hermes;go', 'hermes')).toBe(';go');
        expect(stripMentions('@hermes,go', 'hermes')).toBe('go');
    });

    it('finds a mention at the very start of the text', () => {
        expect(findMentions('@hermes', 'hermes')).toEqual([{ start: 0, end: 7 }]);
    });
});

describe('messages already taken as a turn', () => {
    it('are claimed once: the second event of a DM is not a second turn', () => {
        const seen = new RecentlySeen();
        expect(seen.claim('M1')).toBe(true);
        expect(seen.claim('M1')).toBe(false);
        expect(seen.claim('M2')).toBe(true);
    });

    it('are remembered up to the capacity, the oldest forgotten first', () => {
        const seen = new RecentlySeen(2);
        expect(seen.claim('a')).toBe(true);
        expect(seen.claim('b')).toBe(true);
        expect(seen.claim('a')).toBe(false);
        expect(seen.claim('b')).toBe(false);
        expect(seen.claim('c')).toBe(true);
        expect(seen.claim('b')).toBe(false);
        expect(seen.claim('c')).toBe(false);
        expect(seen.claim('a')).toBe(true);
    });
});
