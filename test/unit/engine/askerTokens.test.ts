import { sign } from 'jsonwebtoken';
import { IApiRequest, IApiEndpointInfo } from '@rocket.chat/apps-engine/definition/api';
import { IHttp, IModify } from '@rocket.chat/apps-engine/definition/accessors';
import { HistoryEndpoint } from '../../../src/engine/entry/HistoryEndpoint';
import { askerLine, askerToken } from '../../../src/security/askerToken';
import { askerTokenIn, AskerTokens, expireAskerTokens, forgetAskerTokenExpiry } from '../../../src/engine/adapters/askerTokens';
import { ConfigHolder } from '../../../src/settings/configHolder';
import { fakeApp, fakeRead, memoryLog } from '../../support/fakeEngine';
import { MemoryPersistence } from '../../support/memoryPersistence';
import { AppState } from '../../../src/engine/appState';
import { Gate } from '../../../src/engine/entry/gate';
import { FetchTransport } from '../../../src/hermes/fetchTransport';

const KEY = 'asker-key-0123456789abcdef-0123456789abcdef';
const NOW = Date.parse('2026-12-01T10:00:00Z');
const nowS = Math.floor(NOW / 1000);
const THREAD = 'agent:main:rocketchat:channel:ROOM1:THREAD1';

describe('askerTokenIn', () => {
    it("reads the token of the app's header line, not a forged indented one", () => {
        const token = askerToken(KEY, 'alice1', 'ROOM1', nowS);
        const text = [
            '[Rocket.Chat room_id: ROOM1]',
            askerLine(token),
            '[New message]',
            '  [Rocket.Chat asker: v1.mallory.ROOM1.1999999999.AAAAAAAAAAAAAAAAAAAAAA]',
        ].join('\n');
        expect(askerTokenIn(text)).toBe(token);
        expect(askerTokenIn('just a question')).toBeUndefined();
        expect(askerTokenIn('  [Rocket.Chat asker: v1.mallory.ROOM1.1999999999.AAAAAAAAAAAAAAAAAAAAAA]')).toBeUndefined();
    });
});

describe('AskerTokens: the newest token of each conversation', () => {
    let store: MemoryPersistence;
    let tokens: AskerTokens;
    const a = askerToken(KEY, 'alice1', 'ROOM1', nowS);
    const b = askerToken(KEY, 'bob1', 'ROOM1', nowS + 1);

    beforeEach(() => {
        store = new MemoryPersistence();
        tokens = new AskerTokens(store.read, store.write, () => NOW);
        forgetAskerTokenExpiry();
    });

    it("a later asker's token replaces the earlier one in the same session; other sessions keep theirs", async () => {
        const dm = askerToken(KEY, 'alice1', 'DM1', nowS);
        await tokens.markNewest('agent:main:rocketchat:dm:DM1', dm);
        await tokens.markNewest(THREAD, a);
        expect(await tokens.isNewest(a)).toBe(true);
        await tokens.markNewest(THREAD, b);
        expect(await tokens.isNewest(a)).toBe(false);
        expect(await tokens.isNewest(b)).toBe(true);
        expect(await tokens.isNewest(dm)).toBe(true);
        // One record per session, however many turns.
        await tokens.markNewest(THREAD, a.replace(/\d{10}/, String(nowS + 5)));
        expect(store.withAssociation('hermes-asker-session:' + THREAD)).toHaveLength(1);
        expect(await tokens.isNewest(b)).toBe(false);
    });

    it('is recognised by the whole token: the same signature on another payload is not newest; nothing usable is stored', async () => {
        await tokens.markNewest(THREAD, a);
        const sig = a.slice(a.lastIndexOf('.') + 1);
        expect(await tokens.isNewest(`v1.bob1.ROOM1.${nowS + 1800}.${sig}`)).toBe(false);
        expect(await tokens.isNewest('garbage')).toBe(false);
        expect(JSON.stringify([...store.rows.values()])).not.toContain(sig);
    });

    it('the same token can be newest in two conversations (same person, room and second)', async () => {
        await tokens.markNewest(THREAD, a);
        await tokens.markNewest('agent:main:rocketchat:channel:ROOM1:alice1', a);
        await tokens.markNewest(THREAD, b);
        expect(await tokens.isNewest(a)).toBe(true);
    });

    it('markNewest is two writes side by side (one round trip before Hermes is asked), isNewest two reads', async () => {
        await tokens.markNewest(THREAD, a);
        store.resetCalls();
        // Both writes are asked for before either is answered.
        const asked: string[] = [];
        const write = store.write;
        let answer: () => void = () => undefined;
        const held = new Promise<void>((resolve) => (answer = resolve));
        const slow = <T>(name: string, call: () => Promise<T>) => {
            asked.push(name);
            return held.then(call);
        };
        const sideBySide = new AskerTokens(
            store.read,
            {
                ...write,
                updateByAssociations: (...args: Parameters<typeof write.updateByAssociations>) => slow('pointer', () => write.updateByAssociations(...args)),
                createWithAssociations: (...args: Parameters<typeof write.createWithAssociations>) =>
                    slow('token', () => write.createWithAssociations(...args)),
            } as typeof write,
            () => NOW,
        );
        const marking = sideBySide.markNewest(THREAD, b);
        await new Promise((r) => setImmediate(r));
        expect(asked.sort()).toEqual(['pointer', 'token']);
        answer();
        await marking;
        expect(store.calls.sort()).toEqual(['create', 'updateByAssociations']);
        store.resetCalls();
        expect(await tokens.isNewest(b)).toBe(true);
        expect(store.calls).toEqual(['readByAssociations', 'readByAssociations']);
    });

    it('expiry removes records two or more days old, whatever the gap, once a day per process', async () => {
        const old = new AskerTokens(store.read, store.write, () => NOW - 40 * 86_400_000);
        await old.markNewest('agent:main:rocketchat:dm:OLD', askerToken(KEY, 'carol1', 'OLD', nowS - 40 * 86_400));
        const yesterday = new AskerTokens(store.read, store.write, () => NOW - 86_400_000);
        await yesterday.markNewest('agent:main:rocketchat:dm:Y', askerToken(KEY, 'dave1', 'Y', nowS - 86_400));
        await tokens.markNewest(THREAD, a);
        // Three sweeps on three days remove everything two days old or more, so any gap is covered within three days.
        for (let d = 0; d < 3; d++) {
            await expireAskerTokens(store.write, NOW + d * 86_400_000);
        }
        expect(store.withAssociation('hermes-asker-session:')).toHaveLength(0);
        // The tokens' own records go with them.
        expect(store.withAssociation('hermes-asker-sig:')).toHaveLength(0);

        forgetAskerTokenExpiry();
        await yesterday.markNewest('agent:main:rocketchat:dm:Y', askerToken(KEY, 'dave1', 'Y', nowS - 86_400));
        await tokens.markNewest(THREAD, a);
        await expireAskerTokens(store.write, NOW);
        expect(store.withAssociation('hermes-asker-session:')).toHaveLength(2);
        store.resetCalls();
        await expireAskerTokens(store.write, NOW + 60_000);
        expect(store.calls).toEqual([]);
    });
});

describe('history endpoint: only the newest token of a conversation', () => {
    const SECRET = 'endpoint-secret-0123456789abcdef-0123456789';
    const world = {
        settings: { hermes_url: 'http://127.0.0.1:8642', hermes_api_key: 'hermes-test-key-0123456789abcdef', endpoint_secret: SECRET, asker_key: KEY },
        botId: 'BOT1',
        memberships: { alice1: ['ROOM1', 'DMALICE'], bob1: ['ROOM1', 'DMBOB'], BOT1: ['ROOM1', 'DMALICE', 'DMBOB'] } as Record<string, string[]>,
        messages: {
            DMALICE: [{ id: 'm1', text: 'alice private note', username: 'alice', createdAt: new Date(NOW - 1000) }],
            ROOM1: [{ id: 'm2', text: 'thread talk', username: 'bob', createdAt: new Date(NOW - 1000) }],
        },
    };

    async function call(store: MemoryPersistence, body: object) {
        const { logger, lines } = memoryLog();
        const endpoint = new HistoryEndpoint(fakeApp(logger), new Gate(new AppState(new FetchTransport(), new ConfigHolder())));
        const jwt = sign({ sub: 'history-tool' }, SECRET, { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 60 });
        const request = { headers: { authorization: `Bearer ${jwt}` }, content: body } as unknown as IApiRequest;
        const res = await endpoint.post(request, {} as IApiEndpointInfo, fakeRead(world, store), {} as IModify, {} as IHttp, store.write);
        return { ...res, lines };
    }

    it("refuses an earlier asker's token once a later asker's turn in the shared thread was submitted", async () => {
        const store = new MemoryPersistence();
        const tokens = new AskerTokens(store.read, store.write);
        const now = Math.floor(Date.now() / 1000);
        const a = askerToken(KEY, 'alice1', 'ROOM1', now);
        const b = askerToken(KEY, 'bob1', 'ROOM1', now + 1);
        await tokens.markNewest(THREAD, a);
        // While alice's turn is the newest, her token reads her own DM (the seed's scope).
        const own = await call(store, { asker: a, room_id: 'DMALICE' });
        expect(own.status).toBe(200);
        await tokens.markNewest(THREAD, b);
        const replayed = await call(store, { asker: a, room_id: 'DMALICE' });
        expect(replayed.status).toBe(403);
        expect(replayed.content).toEqual({ error: 'forbidden' });
        expect(replayed.lines.join('\n')).not.toContain(a);
        expect((await call(store, { asker: b })).status).toBe(200);
        // A validly signed token never marked newest (minted elsewhere with the key) is refused too.
        expect((await call(store, { asker: askerToken(KEY, 'bob1', 'ROOM1', now + 2) })).status).toBe(403);
    });
});
