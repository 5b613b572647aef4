/**
 * Issue 31 item 7: the one admission of a turn (src/admission/turnAdmission.ts), whatever starts
 * it: the room's policy (off, malformed, its profile and instruction), automation rooms, the
 * allowlist, the room type and the daily budgets.
 */
import { admitTurn, budgetHit, refusalNotice, roomRules, TurnAsk } from '../../../src/admission/turnAdmission';
import { renderFor } from '../../../src/i18n/messages';
import { UsagePort } from '../../../src/usage/usage';
import { TEST_CONFIG } from '../../support/turnPorts';

const ROOM = 'Hx7Yq2LmN4pR8sT0v';
const ask = (over: Partial<TurnAsk> = {}): TurnAsk => ({
    source: 'action',
    asker: { id: 'U1', username: 'alice' },
    room: { id: ROOM, type: 'c' },
    ...over,
});
const config = (over: Partial<typeof TEST_CONFIG> = {}) => ({ ...TEST_CONFIG, ...over });

/** Usage that counts its reads and reports `turns` used today for the person and the room. */
function usage(turns: number) {
    const reads: string[] = [];
    const port: UsagePort = {
        today: async (_day, userId, roomId) => (reads.push(`${userId}@${roomId}`), { user: { turns, in: 0, out: 0 }, room: { turns, in: 0, out: 0 } }),
        record: async () => undefined,
        over: async () => ({ turns: 0, in: 0, out: 0 }),
    };
    return { port, reads };
}

describe('roomRules: what needs no read', () => {
    it('a room set to off refuses every source, a scheduled prompt too; a malformed entry refuses as room-policy', () => {
        const off = config({ roomPolicies: `${ROOM} off` });
        for (const source of ['message', 'action', 'cron'] as const) {
            expect(roomRules(ask({ source }), off)).toEqual({ admit: false, reason: 'room-off' });
        }
        expect(roomRules(ask(), config({ roomPolicies: `${ROOM} mode=loud` }))).toEqual({ admit: false, reason: 'room-policy' });
    });

    it("a room's profile, model and instruction come with the admission; a room without an entry gets none", () => {
        const withEntry = roomRules(ask(), config({ roomPolicies: `${ROOM} profile=research model=fast prompt="Answer in French."` }));
        expect(withEntry).toMatchObject({
            admit: true,
            kind: 'room',
            route: { profile: 'research', model: 'fast' },
            instruction: 'Answer in French.',
            profile: 'research',
        });
        expect(roomRules(ask(), config({ roomPolicies: `${ROOM} prompt="Be brief."` }))).toMatchObject({ route: undefined, instruction: 'Be brief.' });
        const plain = roomRules(ask(), config());
        expect(plain).toMatchObject({ admit: true, route: undefined, instruction: undefined, profile: undefined });
    });

    it('a 1:1 DM is not a room for room_policies (its id listed off changes nothing); a group DM is', () => {
        const policies = config({ roomPolicies: `${ROOM} off` });
        expect(roomRules(ask({ room: { id: ROOM, type: 'd', directMemberCount: 2 } }), policies)).toMatchObject({ admit: true, kind: 'dm' });
        expect(roomRules(ask({ room: { id: ROOM, type: 'd', directMemberCount: 3 } }), policies)).toEqual({ admit: false, reason: 'room-off' });
    });

    it("the policy the caller looked up is the one applied (a message's event looks it up once)", () => {
        const lookedUp = { kind: 'entry' as const, policy: { mode: 'mention' as const, profile: 'ops' } };
        expect(roomRules(ask({ policy: lookedUp }), config({ roomPolicies: `${ROOM} off` }))).toMatchObject({ admit: true, profile: 'ops' });
    });

    it("automation rooms refuse people's turns (messages, actions), never their scheduled deliveries", () => {
        const automation = config({ automationRoomIds: [ROOM] });
        expect(roomRules(ask({ source: 'action' }), automation)).toEqual({ admit: false, reason: 'automation' });
        expect(roomRules(ask({ source: 'message' }), automation)).toEqual({ admit: false, reason: 'automation' });
        expect(roomRules(ask({ source: 'cron' }), automation)).toMatchObject({ admit: true });
    });

    it('the allowlist, ignored senders and rooms that are no conversation', () => {
        expect(roomRules(ask(), config({ allowedUserIds: ['U2'] }))).toEqual({ admit: false, reason: 'not-allowed' });
        expect(roomRules(ask(), config({ allowedUserIds: ['U1'] }))).toMatchObject({ admit: true });
        expect(roomRules(ask(), config({ ignoreSenders: ['ALICE'] }))).toEqual({ admit: false, reason: 'ignored-sender' });
        expect(roomRules(ask({ room: { id: ROOM, type: 'l' } }), config())).toEqual({ admit: false, reason: 'not-a-room-type' });
    });
});

describe('budgetHit and admitTurn', () => {
    it('no budget set: no read; over the person’s budget: the budget and its limit; admins exempt', async () => {
        const none = usage(9);
        expect(await budgetHit(ask(), config(), none.port, Date.now())).toBeUndefined();
        expect(none.reads).toEqual([]);
        const over = usage(3);
        expect(await budgetHit(ask(), config({ budgetUserTurns: 3 }), over.port, Date.now())).toEqual({ budget: 'user_turns', limit: 3 });
        expect(over.reads).toEqual([`U1@${ROOM}`]);
        const admin = usage(3);
        expect(await budgetHit(ask(), config({ budgetUserTurns: 3, adminUserIds: ['U1'] }), admin.port, Date.now())).toBeUndefined();
        expect(admin.reads).toEqual([]);
        expect(await budgetHit(ask(), config({ budgetRoomTurns: 4 }), usage(3).port, Date.now())).toBeUndefined();
    });

    it('the budget is read only for a turn the rules let through', async () => {
        const u = usage(0);
        const off = config({ roomPolicies: `${ROOM} off`, budgetUserTurns: 3 });
        expect(await admitTurn(ask(), off, { usage: u.port, now: Date.now })).toEqual({ admit: false, reason: 'room-off' });
        expect(u.reads).toEqual([]);
        const over = await admitTurn(ask(), config({ budgetUserTurns: 3 }), { usage: usage(5).port, now: Date.now });
        expect(over).toEqual({ admit: false, reason: 'budget', hit: { budget: 'user_turns', limit: 3 } });
    });

    it('each refusal has a private notice in the asker’s language', () => {
        const tz = { timezone: 'Europe/Berlin' };
        const budget = refusalNotice({ admit: false, reason: 'budget', hit: { budget: 'room_tokens', limit: 500 } }, tz);
        expect(renderFor(budget, 'de')).toBe(
            'Dieser Raum hat seine 500 Tokens für heute aufgebraucht. Das Budget wird um Mitternacht (Europe/Berlin) zurückgesetzt.',
        );
        expect(renderFor(refusalNotice({ admit: false, reason: 'room-off' }, tz), 'en')).toBe('Hermes is switched off in this room by its room policy.');
        expect(renderFor(refusalNotice({ admit: false, reason: 'room-off' }, tz), 'fr')).toBe('Hermes est désactivé dans ce salon par sa règle de salon.');
        expect(renderFor(refusalNotice({ admit: false, reason: 'automation' }, tz), 'en')).toContain('only receives scheduled deliveries');
        expect(renderFor(refusalNotice({ admit: false, reason: 'room-policy' }, tz), 'en')).toContain('its room policy has an error');
        expect(renderFor(refusalNotice({ admit: false, reason: 'not-allowed' }, tz), 'en')).toBe('Hermes is not available here.');
    });
});
