import { admit, conversationKind, InboundMessage } from '../../../src/admission/admit';

const bot = { id: 'BOTid00000000000', username: 'hermes.bot' };
const base: InboundMessage = {
    id: 'MSG1',
    roomId: 'ROOM1',
    roomType: 'c',
    senderId: 'ALICEid000000000',
    senderUsername: 'alice',
    text: '@hermes.bot hello',
    isSystem: false,
    edited: false,
};
const open = { allowedUserIds: [] as string[] };

describe('admission', () => {
    it('takes a mention in a channel, with the mention removed', () => {
        expect(admit(base, bot, open)).toEqual({ admit: true, kind: 'room', text: 'hello' });
    });

    it('takes a 1:1 DM without a mention', () => {
        expect(admit({ ...base, roomType: 'd', directMemberCount: 2, text: 'hi there' }, bot, open)).toEqual({ admit: true, kind: 'dm', text: 'hi there' });
    });

    it('treats a direct room of more than two people as a room: mention needed', () => {
        expect(admit({ ...base, roomType: 'd', directMemberCount: 3, text: 'hi there' }, bot, open)).toEqual({ admit: false, reason: 'no-mention' });
        expect(admit({ ...base, roomType: 'd', directMemberCount: 3 }, bot, open)).toMatchObject({ admit: true, kind: 'room' });
    });

    it.each([
        [{ senderId: bot.id }, 'own-message'],
        [{ isSystem: true }, 'system'],
        [{ edited: true }, 'edited'],
        [{ roomType: 'l' }, 'not-a-room-type'],
        [{ text: 'hello everyone' }, 'no-mention'],
        [{ text: '@hermes.bot-beta hello' }, 'no-mention'],
        [{ text: '@hermes.bot' }, 'empty'],
    ] as Array<[Partial<InboundMessage>, string]>)('refuses %j as %s', (patch, reason) => {
        expect(admit({ ...base, ...patch }, bot, open)).toEqual({ admit: false, reason });
    });

    it('answers nobody outside a non-empty allowlist, in rooms and DMs', () => {
        const allow = { allowedUserIds: ['BOBid00000000000'] };
        expect(admit(base, bot, allow)).toEqual({ admit: false, reason: 'not-allowed' });
        expect(admit({ ...base, roomType: 'd', directMemberCount: 2 }, bot, allow)).toEqual({ admit: false, reason: 'not-allowed' });
        expect(admit({ ...base, senderId: 'BOBid00000000000' }, bot, allow)).toMatchObject({ admit: true });
    });

    it('knows the conversation kinds', () => {
        expect(conversationKind({ roomType: 'c' })).toBe('room');
        expect(conversationKind({ roomType: 'p' })).toBe('room');
        expect(conversationKind({ roomType: 'd', directMemberCount: 2 })).toBe('dm');
        expect(conversationKind({ roomType: 'd', directMemberCount: 4 })).toBe('room');
        expect(conversationKind({ roomType: 'l' })).toBeUndefined();
    });
});
