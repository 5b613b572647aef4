import { commandNeed, parseTextCommand } from '../../../src/admission/textCommand';
import { AccessFacts, accessRefusal } from '../../../src/admission/access';

/** The gate's one rule (src/security/access.ts), fact by fact: each row changes one fact of a request that passes. */
describe('accessRefusal', () => {
    const passing: AccessFacts = {
        caller: { id: 'u1', username: 'alice' },
        botId: 'bot',
        room: { type: 'p' },
        callerIsMember: true,
        botIsMember: true,
        need: 'post',
        callerMayPost: true,
    };
    const config = { allowedUserIds: [], ignoreSenders: ['otherbot'] };

    it.each<[string, Partial<AccessFacts>, string | undefined]>([
        ['a member, bot in the room, may post', {}, undefined],
        ['the bot itself', { caller: { id: 'bot', username: 'hermes.bot' } }, 'own-command'],
        ['the bot itself, naming no room', { caller: { id: 'bot', username: 'hermes.bot' }, room: undefined }, 'own-command'],
        ['an ignored sender', { caller: { id: 'u9', username: 'otherbot' } }, 'ignored-sender'],
        ['no such room', { room: undefined }, 'no-room'],
        ['a livechat room', { room: { type: 'l' } }, 'not-a-room-type'],
        ['the bot is not in the room', { botIsMember: false }, 'bot-not-member'],
        ['the caller is not in the room', { callerIsMember: false }, 'caller-not-member'],
        ['the message named is in another room', { messageInRoom: false }, 'message-elsewhere'],
        ['the message named is in this room', { messageInRoom: true }, undefined],
        ['the thread named is in another room', { threadInRoom: false }, 'thread-elsewhere'],
        ['the thread named is in this room', { threadInRoom: true }, undefined],
        ['a read-only room, a change', { callerMayPost: false }, 'may-not-post'],
        ['a read-only room, a look', { callerMayPost: false, need: 'read' }, undefined],
        ['not a member, even just to look', { callerIsMember: false, need: 'read' }, 'caller-not-member'],
    ])('%s', (_what, change, expected) => {
        expect(accessRefusal({ ...passing, ...change }, config)).toBe(expected);
    });

    it('allowed_user_ids: anyone else is refused before any room fact counts', () => {
        expect(accessRefusal(passing, { allowedUserIds: ['u2'], ignoreSenders: [] })).toBe('not-allowed');
        expect(accessRefusal(passing, { allowedUserIds: ['u1'], ignoreSenders: [] })).toBeUndefined();
    });

    it('without a configuration, the room facts still apply', () => {
        expect(accessRefusal({ ...passing, callerIsMember: false }, undefined)).toBe('caller-not-member');
        expect(accessRefusal(passing, undefined)).toBeUndefined();
    });
});

describe('commandNeed', () => {
    it.each<[string, 'read' | 'post']>([
        ['/status', 'read'],
        ['/help', 'read'],
        ['/sessions all', 'read'],
        ['/search kubernetes', 'read'],
        ['/usage room', 'read'],
        ['/title', 'read'],
        ['/title Release planning', 'post'],
        ['/cron', 'read'],
        ['/cron list', 'read'],
        ['/cron LIST', 'read'],
        ['/cron add --every 1h ping', 'post'],
        ['/cron listing', 'post'],
        ['/new', 'post'],
        ['/reset', 'post'],
        ['/stop', 'post'],
        ['/resume abc', 'post'],
        ['/unfollow', 'post'],
        ['/sethome', 'post'],
        ['/automation on', 'post'],
        ['/frobnicate', 'read'],
    ])('%s needs %s', (line, need) => {
        expect(commandNeed(parseTextCommand(line))).toBe(need);
    });

    it('a missing command only shows its usage', () => {
        expect(commandNeed(undefined)).toBe('read');
    });
});
