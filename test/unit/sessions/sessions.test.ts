import { isSharedSession, sessionKey, SessionScope } from '../../../src/sessions/sessionKey';
import { isAcceptableSessionId, sessionIdFor } from '../../../src/sessions/sessionRecord';

const on = { groupSessionsPerUser: true, threadSessionsPerUser: false };

describe('session keys in the Hermes gateway format', () => {
    it.each([
        [{ chatType: 'dm', roomId: 'R', userId: 'U' }, on, 'agent:main:rocketchat:dm:R'],
        [{ chatType: 'dm', roomId: 'R', threadId: 'T', userId: 'U' }, on, 'agent:main:rocketchat:dm:R:T'],
        [{ chatType: 'channel', roomId: 'R', userId: 'U' }, on, 'agent:main:rocketchat:channel:R:U'],
        [{ chatType: 'channel', roomId: 'R', userId: 'U' }, { ...on, groupSessionsPerUser: false }, 'agent:main:rocketchat:channel:R'],
        [{ chatType: 'channel', roomId: 'R', threadId: 'T', userId: 'U' }, on, 'agent:main:rocketchat:channel:R:T'],
        [{ chatType: 'channel', roomId: 'R', threadId: 'T', userId: 'U' }, { ...on, threadSessionsPerUser: true }, 'agent:main:rocketchat:channel:R:T:U'],
    ] as Array<[SessionScope, typeof on, string]>)('%j %j → %s', (scope, opts, key) => {
        expect(sessionKey(scope, opts)).toBe(key);
    });

    it('marks shared sessions (they get the [name] prefix)', () => {
        expect(isSharedSession({ chatType: 'dm', roomId: 'R', userId: 'U' }, on)).toBe(false);
        expect(isSharedSession({ chatType: 'channel', roomId: 'R', userId: 'U' }, on)).toBe(false);
        expect(isSharedSession({ chatType: 'channel', roomId: 'R', threadId: 'T', userId: 'U' }, on)).toBe(true);
        expect(isSharedSession({ chatType: 'channel', roomId: 'R', threadId: 'T', userId: 'U' }, { ...on, threadSessionsPerUser: true })).toBe(false);
    });
});

describe('session ids', () => {
    it('are stable per key and generation, new after a reset, and path-safe', () => {
        const key = 'agent:main:rocketchat:channel:R:T:U';
        expect(sessionIdFor(key, 0)).toBe(sessionIdFor(key, 0));
        expect(sessionIdFor(key, 1)).not.toBe(sessionIdFor(key, 0));
        expect(sessionIdFor('agent:main:rocketchat:dm:R', 0)).not.toBe(sessionIdFor(key, 0));
        expect(sessionIdFor(key, 0)).toMatch(/^rc_[0-9a-f]{32}_g0$/);
        expect(isAcceptableSessionId(sessionIdFor(key, 7))).toBe(true);
    });

    it.each(['', 'a/b', 'a\\b', 'x..y', 'C:evil', 'a\nb', 'a\0b', 'x'.repeat(257)])('rejects %j', (id) => {
        expect(isAcceptableSessionId(id)).toBe(false);
    });
});
