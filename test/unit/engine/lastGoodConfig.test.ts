import { sign } from 'jsonwebtoken';
import { IApiEndpointInfo, IApiRequest } from '@rocket.chat/apps-engine/definition/api';
import { IHttp, IModify } from '@rocket.chat/apps-engine/definition/accessors';
import { PingEndpoint } from '../../../src/engine/entry/PingEndpoint';
import { ConfigHolder } from '../../../src/settings/configHolder';
import { ensureConfig } from '../../../src/engine/adapters/ensureConfig';
import { readSettings } from '../../../src/engine/adapters/readSettings';
import { reportConfig } from '../../../src/settings/reportConfig';
import { fakeApp, fakeRead, memoryLog } from '../../support/fakeEngine';
import { MemoryPersistence } from '../../support/memoryPersistence';
import { AppState } from '../../../src/engine/appState';
import { Gate } from '../../../src/engine/entry/gate';
import { FetchTransport } from '../../../src/hermes/fetchTransport';

const API_KEY = 'hermes-test-key-0123456789abcdef';
const SECRET = 'endpoint-secret-0123456789abcdef-0123456789';
const ALICE = 'aliceid0000000000';
const good = { hermes_url: 'http://127.0.0.1:8642', hermes_api_key: API_KEY, endpoint_secret: SECRET, allowed_user_ids: ALICE };
const world = (settings: Record<string, unknown>) => ({ settings, botId: 'BOT1', memberships: {} });

describe('last good configuration across restarts', () => {
    it('a fresh process with invalid settings acts on the last good one persisted earlier, and says so without secrets', async () => {
        const store = new MemoryPersistence();
        // Process 1: valid settings, loaded by the first call that can write.
        const first = new ConfigHolder();
        const log1 = memoryLog();
        expect(await ensureConfig(first, fakeRead(world(good), store), log1.logger, store.write)).toMatchObject({ allowedUserIds: [ALICE] });

        // Process 2: the admin broke the URL while the app was down.
        const broken = { ...good, hermes_url: 'not a url' };
        const second = new ConfigHolder();
        const log2 = memoryLog();
        const config = await ensureConfig(second, fakeRead(world(broken), store), log2.logger, store.write);
        expect(config).toMatchObject({ hermesUrl: 'http://127.0.0.1:8642', hermesApiKey: API_KEY, allowedUserIds: [ALICE] });
        const text = log2.lines.join('\n');
        expect(text).toContain('uses the last valid settings it stored');
        expect(text).not.toContain(API_KEY);
        expect(text).not.toContain(SECRET);
        // Looked for once per process, not on every call.
        store.resetCalls();
        await ensureConfig(second, fakeRead(world(broken), store), log2.logger, store.write);
        expect(store.calls).toEqual([]);
    });

    it('when settings events apply the configuration (no persistence there), the next call that can write stores it', async () => {
        const store = new MemoryPersistence();
        const holder = new ConfigHolder();
        // What HermesApp.reloadSettings does on onEnable / onSettingUpdated.
        reportConfig(holder.apply(await readSettings(fakeRead(world(good), store).getEnvironmentReader().getSettings())), memoryLog().logger);
        await ensureConfig(holder, fakeRead(world(good), store), memoryLog().logger);
        expect(store.withAssociation('hermes-config-last-good')).toHaveLength(0);
        await ensureConfig(holder, fakeRead(world(good), store), memoryLog().logger, store.write);
        expect(store.withAssociation('hermes-config-last-good')).toHaveLength(1);
        store.resetCalls();
        await ensureConfig(holder, fakeRead(world(good), store), memoryLog().logger, store.write);
        expect(store.calls).toEqual([]);

        // A fresh process whose onEnable found the settings invalid still takes the stored one up.
        const fresh = new ConfigHolder();
        expect(fresh.apply({ ...good, hermes_api_key: 'short' }).kind).toBe('unusable');
        expect(await ensureConfig(fresh, fakeRead(world({ ...good, hermes_api_key: 'short' }), store), memoryLog().logger)).toMatchObject({
            hermesApiKey: API_KEY,
        });
    });

    it('valid settings win over the stored configuration; nothing stored and invalid settings stay unconfigured', async () => {
        const store = new MemoryPersistence();
        await ensureConfig(new ConfigHolder(), fakeRead(world(good), store), memoryLog().logger, store.write);
        const changed = await ensureConfig(new ConfigHolder(), fakeRead(world({ ...good, allowed_user_ids: '' }), store), memoryLog().logger, store.write);
        expect(changed?.allowedUserIds).toEqual([]);
        expect(await ensureConfig(new ConfigHolder(), fakeRead(world({ hermes_url: '' }), new MemoryPersistence()), memoryLog().logger)).toBeUndefined();
    });
});

describe('/ping after a restart', () => {
    it('loads the configuration before checking the caller (no 503 from an empty process)', async () => {
        const store = new MemoryPersistence();
        const { logger } = memoryLog();
        const ping = new PingEndpoint(fakeApp(logger), new Gate(new AppState(new FetchTransport(), new ConfigHolder())), '9.9.9');
        const jwt = sign({ sub: 'tool' }, SECRET, { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 60 });
        const res = await ping.get(
            { headers: { authorization: `Bearer ${jwt}` } } as unknown as IApiRequest,
            {} as IApiEndpointInfo,
            fakeRead(world(good), store),
            {} as IModify,
            {} as IHttp,
            store.write,
        );
        expect(res.status).toBe(200);
        expect(res.content).toEqual({ ok: true, app: 'hermes', version: '9.9.9' });
    });
});
