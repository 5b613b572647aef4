import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { EngineTurns } from '../../../src/engine/adapters/engineTurns';
import { EngineCron } from '../../../src/engine/adapters/engineCron';
import { ThreadFollows } from '../../../src/engine/adapters/threadFollows';
import { EngineSessions, expireSessions, SESSION_KEEP_DAYS } from '../../../src/engine/adapters/engineSessions';
import { EngineSessionIndex } from '../../../src/engine/adapters/engineSessionIndex';
import { forgetDayMemo } from '../../../src/engine/adapters/dayIndex';
import { expireReceipts, Receipts } from '../../../src/engine/adapters/receipts';
import { AskerTokens } from '../../../src/engine/adapters/askerTokens';
import { LastGoodConfig } from '../../../src/engine/adapters/lastGoodConfig';
import { EngineSummaries } from '../../../src/engine/adapters/engineSummaries';
import { sweepTurns } from '../../../src/turns/sweep';
import { distinctNewestFirst } from '../../../src/sessions/sessionIndex';
import { sessionIdFor } from '../../../src/sessions/sessionRecord';
import { askerToken } from '../../../src/security/askerToken';
import { ConfigSchema, DEFAULT_OPTIONS, HermesConfig } from '../../../src/settings/config';
import { CronJob } from '../../../src/cron/job';
import { MemoryPersistence } from '../../support/memoryPersistence';
import { queuedTurn } from '../../support/turnPorts';

/**
 * Rocket.Chat's persistence has no unique index: two instances upserting the same new record at
 * once both insert, and `updateByAssociations` (an updateOne) then keeps updating the first only.
 * `MemoryPersistence.duplicate` makes that outcome; every read that expects one record copes.
 */
const DAY = 86_400_000;
const T0 = Date.parse('2026-12-01T12:00:00Z');
const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const isHead = (d: Record<string, unknown>) => d.payloadOf === undefined && d.ticketOf === undefined && d.waiterFor === undefined;

let store: MemoryPersistence;

beforeEach(() => {
    store = new MemoryPersistence();
    forgetDayMemo();
});

describe('the memory store models the race', () => {
    it('updateByAssociations changes the first exact match only; reads return both, removal takes both', async () => {
        await store.write.updateByAssociations([misc('a'), misc('b')], { v: 1 }, true);
        store.duplicate('a', { v: 2 });
        await store.write.updateByAssociations([misc('a'), misc('b')], { v: 3 }, true);
        expect(await store.read.readByAssociation(misc('a'))).toEqual([{ v: 3 }, { v: 2 }]);
        expect(await store.write.removeByAssociation(misc('b'))).toHaveLength(2);
        expect(store.rows.size).toBe(0);
    });
});

describe('turn records stored twice', () => {
    it('lists show each turn once, the copy its saves update (open, a session, the tickets)', async () => {
        const turns = new EngineTurns(store.read, store.write);
        await turns.save(queuedTurn('DUP1'));
        store.duplicate('hermes-turn:DUP1', {}, isHead);
        await turns.save(queuedTurn('DUP1', { phase: 'running', tickAt: 7 }));
        const open = await turns.open();
        expect(open.map((t) => [t.id, t.phase])).toEqual([['DUP1', 'running']]);
        expect((await turns.openInSession(open[0].sessionKey)).map((t) => t.tickAt)).toEqual([7]);
        expect((await turns.tickets()).map((t) => [t.id, t.phase])).toEqual([['DUP1', 'running']]);
        // The turn's removal takes both copies.
        await turns.remove('DUP1');
        expect(store.withAssociation('hermes-turn:DUP1')).toEqual([]);
    });

    it('the sweep does not restart a stale copy over the live turn', async () => {
        const turns = new EngineTurns(store.read, store.write);
        await turns.save(queuedTurn('DUP2', { createdAt: T0, seq: T0 }));
        store.duplicate('hermes-turn:DUP2', {}, isHead);
        const now = T0 + 60_000;
        await turns.save(queuedTurn('DUP2', { createdAt: T0, seq: T0, phase: 'running', tickAt: now - 1_000 }));
        const scheduled: string[] = [];
        const restarted = await sweepTurns({
            store: turns,
            schedule: async (job) => {
                scheduled.push(job.turnId);
            },
            log: { info: () => undefined },
            now: () => now,
        });
        expect(restarted).toBe(0);
        expect(scheduled).toEqual([]);
        expect((await turns.get('DUP2'))?.phase).toBe('running');
    });

    it('a blocker that took its claim back is gone to a waiter, whatever its stale copy says', async () => {
        const turns = new EngineTurns(store.read, store.write);
        await turns.save(queuedTurn('DUP3B'));
        store.duplicate('hermes-turn:DUP3B', {}, isHead);
        await turns.save(queuedTurn('DUP3B', { waiting: true }));
        await turns.save(queuedTurn('DUP3W'));
        expect(await turns.waitOn('DUP3W', ['DUP3B'])).toEqual(['DUP3B']);
    });

    it('a turn read by id, its decision and its stop are the first copy (harmless)', async () => {
        const turns = new EngineTurns(store.read, store.write);
        await turns.save(queuedTurn('DUP4'));
        store.duplicate('hermes-turn:DUP4', { phase: 'done' }, isHead);
        store.duplicate('hermes-turn-payload:DUP4', { user: 'stale text' });
        expect(await turns.get('DUP4')).toMatchObject({ phase: 'queued', user: 'user text' });
        await turns.decide('DUP4', { messageId: 'm1', decided: { by: 'alice', choice: 'once' } });
        store.duplicate('hermes-turn-approval:DUP4:m1', { decided: { by: 'bob', choice: 'always' } });
        expect((await turns.decision('DUP4', 'm1'))?.decided?.by).toBe('alice');
        await turns.requestStop('DUP4', 'alice');
        store.duplicate('hermes-turn-stop:DUP4', { by: 'bob' });
        expect(await turns.stopRequest('DUP4')).toBe('alice');
        await turns.remove('DUP4');
        expect(store.rows.size).toBe(0);
    });
});

describe('cron jobs stored twice', () => {
    const job = (over: Partial<CronJob> = {}): CronJob => ({
        id: 'J1',
        name: 'daily',
        ownerId: 'U1',
        ownerUsername: 'alice',
        roomId: 'R1',
        roomType: 'c',
        kind: 'room',
        schedule: { kind: 'every', everyMs: DAY },
        prompt: 'report',
        createdAt: T0,
        nextAt: T0 + DAY,
        ...over,
    });

    it('the sweep sees each job once, as last saved (a stale copy would fire it again); removal takes both', async () => {
        const cron = new EngineCron(store.read, store.write);
        await cron.save(job());
        store.duplicate('hermes-cron-job:J1');
        await cron.save(job({ nextAt: T0 + 2 * DAY }));
        expect((await cron.all()).map((j) => j.nextAt)).toEqual([T0 + 2 * DAY]);
        expect((await cron.get('J1'))?.nextAt).toBe(T0 + 2 * DAY);
        await cron.remove('J1');
        expect(await cron.all()).toEqual([]);
    });
});

describe('followed threads stored twice', () => {
    it("two instances adding askers at once keep both askers, and a later add loses neither; the record's move leaves none behind", async () => {
        let now = T0;
        const follows = () => new ThreadFollows(store.read, store.write, () => now);
        await follows().add('TH', 'U1');
        // The other instance's insert, at the same moment, with its own asker.
        store.duplicate('hermes-follow:TH', { askers: ['U2'] });
        expect((await follows().askers('TH'))?.sort()).toEqual(['U1', 'U2']);
        await follows().add('TH', 'U3');
        expect((await follows().askers('TH'))?.sort()).toEqual(['U1', 'U2', 'U3']);
        now = T0 + DAY;
        await follows().add('TH', 'U4');
        expect(store.withAssociation('hermes-follow:TH')).toHaveLength(1);
        expect((await follows().askers('TH'))?.sort()).toEqual(['U1', 'U2', 'U3', 'U4']);
    });
});

describe('session records stored twice', () => {
    const sessions = (now: number) => new EngineSessions(store.read, store.write, () => now);
    const key = 'agent:main:rocketchat:channel:R:T';

    it('get takes the newer copy, and expiry keeps a key whose newer copy must stay', async () => {
        await sessions(T0).save({ ...(await sessions(T0).get(key)), turns: 1 });
        // The other instance's /new, inserted beside it at the same moment.
        store.duplicate(`hermes-session:${key}`, { generation: 1, sessionId: sessionIdFor(key, 1), storedAt: T0 + 1 });
        expect(await sessions(T0).get(key)).toMatchObject({ generation: 1 });
        expect(await expireSessions(store.read, store.write, T0 + (SESSION_KEEP_DAYS + 1) * DAY)).toBe(0);
        expect(await sessions(T0 + (SESSION_KEEP_DAYS + 1) * DAY).get(key)).toMatchObject({ generation: 1 });
    });

    it('expiry drops both copies of a key whose newer copy is derivable', async () => {
        await sessions(T0).save({ ...(await sessions(T0).get(key)), turns: 1 });
        store.duplicate(`hermes-session:${key}`, { turns: 2, storedAt: T0 + 1 });
        expect(await expireSessions(store.read, store.write, T0 + (SESSION_KEEP_DAYS + 1) * DAY)).toBe(1);
        expect(store.withAssociation('hermes-session:')).toEqual([]);
    });

    it('the session index lists a session once however many entries it has (harmless)', async () => {
        const index = new EngineSessionIndex(store.read, store.write);
        const entry = { sessionId: 'S1', key, roomId: 'R', kind: 'room' as const, startedAt: T0 };
        await index.add('U1', entry);
        store.duplicate('hermes-owner:U1', { startedAt: T0 + 5 });
        expect(distinctNewestFirst(await index.owned('U1')).map((e) => e.sessionId)).toEqual(['S1']);
        expect(distinctNewestFirst(await index.inScope(key))).toHaveLength(1);
    });
});

describe('a claim when both instances read before either writes', () => {
    it('two claims of one id side by side: each reads none, both write, only the first stored wins', async () => {
        const a = new Receipts(store.read, store.write);
        const b = new Receipts(store.read, store.write);
        // Each step of a claim is awaited, so the two interleave read, read, write, write, as two instances' round trips do.
        const won = await Promise.all([a.claim('cron.J1.100', T0), b.claim('cron.J1.100', T0)]);
        expect(won).toEqual([true, false]);
        expect(store.withAssociation('hermes-receipt:cron.J1.100')).toHaveLength(2);
        // A later claim sees it taken without writing.
        expect(await a.claim('cron.J1.100', T0 + 5)).toBe(false);
        expect(store.withAssociation('hermes-receipt:cron.J1.100')).toHaveLength(2);
    });

    it('a turn sending claimed without a read first: the first stored wins, a later claim of it loses, and it expires with its day', async () => {
        const a = new Receipts(store.read, store.write);
        const b = new Receipts(store.read, store.write);
        expect(await Promise.all([a.claimFirst('send:T1:1:c1', T0), b.claimFirst('send:T1:1:c1', T0)])).toEqual([true, false]);
        expect(await a.claimFirst('send:T1:1:c1', T0 + 5)).toBe(false);
        expect(await a.claimFirst('send:T1:2:c1', T0 + 5)).toBe(true);
        await expireReceipts(store.read, store.write, T0 + 10 * DAY);
        expect(store.withAssociation('hermes-receipt:send:')).toEqual([]);
    });
});

describe('small records stored twice (harmless)', () => {
    it('receipts: a message taken twice is taken, at the earliest time; a day listed twice expires once, with both copies', async () => {
        const receipts = new Receipts(store.read, store.write);
        await receipts.claim('M1', T0);
        store.duplicate('hermes-receipt:M1', { at: T0 + 5 });
        store.duplicate('hermes-receipts-days:2026-12-01');
        expect(await receipts.claim('M1', T0 + 10)).toBe(false);
        expect(await receipts.claimedAt('M1')).toBe(T0);
        await expireReceipts(store.read, store.write, T0 + 10 * DAY);
        expect(store.withAssociation('hermes-receipt:')).toEqual([]);
        expect(store.withAssociation('hermes-receipts-days:2026-12-01')).toEqual([]);
    });

    it('asker tokens: the newest pointer decides, the one every mark updates', async () => {
        const key = 'asker-key-0123456789abcdef-0123456789abcdef';
        const thread = 'agent:main:rocketchat:channel:ROOM1:THREAD1';
        const nowS = Math.floor(T0 / 1000);
        const a = askerToken(key, 'alice1', 'ROOM1', nowS);
        const b = askerToken(key, 'bob1', 'ROOM1', nowS + 1);
        let now = T0;
        const tokens = new AskerTokens(store.read, store.write, () => now);
        await tokens.markNewest(thread, a, 'S1');
        store.duplicate(`hermes-asker-session:${thread}`, {}, (d) => d.pointer === true);
        now = T0 + 1_000;
        await tokens.markNewest(thread, b, 'S1');
        expect(await tokens.isNewest(b)).toBe(true);
        expect(await tokens.isNewest(a)).toBe(false);
    });

    it('the last good configuration: the copy every save updates', async () => {
        const config = (url: string) => ConfigSchema.parse({ ...DEFAULT_OPTIONS, hermesUrl: url, hermesApiKey: 'k'.repeat(32) }) as HermesConfig;
        const last = new LastGoodConfig(store.read, store.write);
        await last.save(config('http://one:8642'));
        store.duplicate('hermes-config-last-good');
        await last.save(config('http://two:8642'));
        expect((await last.load())?.hermesUrl).toBe('http://two:8642');
    });

    it('a private summary kept twice is taken once, and both copies go', async () => {
        const summaries = new EngineSummaries(store.read, store.write);
        await summaries.keep({ id: 'S1', ownerId: 'U1', roomId: 'R1', threadId: 'TH', text: 'sum', at: T0 });
        store.duplicate('hermes-summary:S1');
        expect((await summaries.take('S1'))?.text).toBe('sum');
        expect(await summaries.take('S1')).toBeUndefined();
    });
});
