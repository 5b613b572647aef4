import { isPostRefusal, PostingFacts, postingRefusal } from '../../../src/admission/botPosting';

/** Rocket.Chat's rules for the bot's posts (canSendMessage.ts, methods/sendMessage.ts) as the app applies them ahead of a turn. */
const room = (over: Partial<PostingFacts> = {}): PostingFacts => ({ readOnly: false, muted: [], unmuted: [], encrypted: false, ...over });
const bot = { username: 'hermes.bot', roles: ['app'] };

describe('postingRefusal', () => {
    it('lets the bot post in an ordinary room', () => {
        expect(postingRefusal(room(), bot)).toBeUndefined();
        expect(postingRefusal(room(), { username: 'hermes.bot' })).toBeUndefined();
    });

    it('refuses a read-only room unless the bot holds post-readonly or a moderator unmuted it', () => {
        expect(postingRefusal(room({ readOnly: true }), bot)).toBe('read-only');
        expect(postingRefusal(room({ readOnly: true }), { username: 'hermes.bot' })).toBe('read-only');
        for (const role of ['admin', 'owner', 'moderator']) {
            expect(postingRefusal(room({ readOnly: true }), { ...bot, roles: ['app', role] })).toBeUndefined();
        }
        expect(postingRefusal(room({ readOnly: true, unmuted: ['hermes.bot'] }), bot)).toBeUndefined();
        expect(postingRefusal(room({ readOnly: true, unmuted: ['someone'] }), bot)).toBe('read-only');
    });

    it('refuses a room that muted the bot, by its username', () => {
        expect(postingRefusal(room({ muted: ['alice', 'hermes.bot'] }), bot)).toBe('muted');
        expect(postingRefusal(room({ muted: ['alice'] }), bot)).toBeUndefined();
    });

    it('refuses an encrypted room first, whatever else holds', () => {
        expect(postingRefusal(room({ encrypted: true, readOnly: true, muted: ['hermes.bot'] }), bot)).toBe('encrypted');
        expect(postingRefusal(room({ encrypted: true }), { ...bot, roles: ['admin'] })).toBe('encrypted');
    });
});

describe('isPostRefusal', () => {
    it('knows the server errors that no retry can change', () => {
        for (const text of [
            'room_is_blocked',
            'You_have_been_muted',
            "You can't send messages because the room is readonly.",
            'Not allowed to send un-encrypted messages in an encrypted room [error-not-allowed]',
        ]) {
            expect(isPostRefusal(new Error(text))).toBe(true);
        }
        expect(isPostRefusal('room_is_blocked')).toBe(true);
    });

    it('leaves everything else to the usual failure path', () => {
        expect(isPostRefusal(new Error('error-message-size-exceeded'))).toBe(false);
        expect(isPostRefusal(new Error('socket hang up'))).toBe(false);
        expect(isPostRefusal(undefined)).toBe(false);
    });
});
