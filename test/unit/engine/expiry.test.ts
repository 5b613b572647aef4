import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { EngineSessions, expireSessions, SESSION_KEEP_DAYS } from '../../../src/engine/adapters/engineSessions';
import { sessionIdFor } from '../../../src/sessions/sessionRecord';
import { resetSession } from '../../../src/sessions/sessionRecord';
import { forgetDayMemo } from '../../../src/engine/adapters/dayIndex';
import { expireReceipts, Receipts } from '../../../src/engine/adapters/receipts';
import { MemoryPersistence } from '../../support/memoryPersistence';

const DAY = 86_400_000;
const T0 = Date.parse('2026-12-01T12:00:00Z');
const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);

let store: MemoryPersistence;

beforeEach(() => {
    store = new MemoryPersistence();
    forgetDayMemo();
});

describe('receipt expiry', () => {
    const receipts = () => new Receipts(store.read, store.write);
    const left = () => (store.withAssociation('hermes-receipt:') as Array<{ messageId: string }>).map((r) => r.messageId).sort();

    it('removes every bucket older than the keep window however long the app was off', async () => {
        await receipts().claim('old1', T0);
        await receipts().claim('old2', T0 + 3 * DAY);
        // Off for a month, then one sweep.
        const back = T0 + 33 * DAY;
        await receipts().claim('recent', back - DAY);
        await receipts().claim('today', back);
        await receipts().expire(back);
        expect(left()).toEqual(['recent', 'today']);
        // A receipt still refuses its message twice.
        expect(await receipts().claim('today', back)).toBe(false);
    });

    it('keeps today and the two days before, as before', async () => {
        for (let d = 0; d <= 3; d++) {
            await receipts().claim(`d${d}`, T0 - d * DAY);
        }
        await expireReceipts(store.read, store.write, T0);
        expect(left()).toEqual(['d0', 'd1', 'd2']);
    });

    it('costs one index write per day per process on claims, and nothing on later sweeps of the same day', async () => {
        await receipts().claim('a', T0);
        store.resetCalls();
        await receipts().claim('b', T0 + 1000);
        // Read, write, and the read back that tells whose receipt came first.
        expect(store.calls).toEqual(['readByAssociations', 'create', 'readByAssociations']);
        await expireReceipts(store.read, store.write, T0);
        store.resetCalls();
        await expireReceipts(store.read, store.write, T0 + 30_000);
        expect(store.calls).toEqual([]);
    });
});

describe('session records', () => {
    const sessions = (now: number) => new EngineSessions(store.read, store.write, () => now);
    const keys = () => (store.withAssociation('hermes-session:') as Array<{ key: string }>).map((r) => r.key).sort();

    it('one stored copy per key, moved to the day of its last save; get reads the newest', async () => {
        const key = 'agent:main:rocketchat:channel:R:T';
        await sessions(T0).save({ ...(await sessions(T0).get(key)), turns: 1 });
        await sessions(T0 + 1000).save({ ...(await sessions(T0).get(key)), turns: 2 });
        expect(keys()).toEqual([key]);
        const later = sessions(T0 + 5 * DAY);
        await resetSession(later, key);
        expect(keys()).toEqual([key]);
        expect(await later.get(key)).toMatchObject({ generation: 1, sessionId: sessionIdFor(key, 1), turns: 0 });
    });

    it('reads a record 0.1.0 wrote, and a later save shadows it', async () => {
        const key = 'agent:main:rocketchat:channel:R:U';
        store.seed({ key, generation: 2, sessionId: sessionIdFor(key, 2), turns: 3 }, [misc(`hermes-session:${key}`)]);
        expect(await sessions(T0).get(key)).toMatchObject({ generation: 2, turns: 3 });
        await resetSession(sessions(T0), key);
        expect(await sessions(T0).get(key)).toMatchObject({ generation: 3 });
    });

    it('expiry drops only records a missing one would equal, after the keep window, however long the app was off', async () => {
        const thread = 'agent:main:rocketchat:channel:R:T';
        const perPerson = 'agent:main:rocketchat:channel:R:U';
        const dmThread = 'agent:main:rocketchat:dm:D:T';
        const dm = 'agent:main:rocketchat:dm:D';
        const reset = 'agent:main:rocketchat:channel:R2:U';
        const rotated = 'agent:main:rocketchat:channel:R3:U';
        const active = 'agent:main:rocketchat:channel:R4:U';
        const old = sessions(T0);
        for (const key of [thread, perPerson, dmThread, dm, active]) {
            await old.save({ ...(await old.get(key)), turns: 1 });
        }
        await resetSession(old, reset);
        await old.save({ ...(await old.get(rotated)), sessionId: 'hermes-rotated-id', turns: 1 });
        // Still in use: saved again recently.
        const back = T0 + 100 * DAY;
        await sessions(back - DAY).save({ ...(await old.get(active)), sessionId: 'hermes-rotated-2' });
        await sessions(back - DAY).save({ ...(await old.get(active)), sessionId: sessionIdFor(active, 0) });

        expect(await expireSessions(store.read, store.write, back)).toBe(3);
        expect(keys()).toEqual([active, dm, rotated, reset].sort());
        // A dropped record reads back as the same session: the derived id.
        expect((await sessions(back).get(thread)).sessionId).toBe(sessionIdFor(thread, 0));
        expect((await sessions(back).get(reset)).generation).toBe(1);
        // Kept records are not read again by later sweeps.
        forgetDayMemo();
        store.resetCalls();
        await expireSessions(store.read, store.write, back + 1000);
        expect(store.calls).toEqual(['readByAssociations']);
    });

    it('keeps everything inside the window', async () => {
        const key = 'agent:main:rocketchat:channel:R:T';
        await sessions(T0).save({ ...(await sessions(T0).get(key)), turns: 1 });
        expect(await expireSessions(store.read, store.write, T0 + (SESSION_KEEP_DAYS - 1) * DAY)).toBe(0);
        expect(keys()).toEqual([key]);
    });
});
