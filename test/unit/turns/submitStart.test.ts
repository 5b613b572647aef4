import { PROCESS_ID } from '../../../src/turns/processId';
import { submit } from '../../../src/turns/submit';
import { sendKey } from '../../../src/turns/sendResult';
import { LiveTurns } from '../../../src/hermes/liveTurns';
import { chainOn } from '../../../src/turns/chain';
import { TurnRecord } from '../../../src/turns/turnRecord';
import {
    MemoryHistory,
    MemorySessions,
    memoryTickPorts,
    queuedTurn,
    ScriptedRuns,
    TEST_CONFIG,
    settleBackground,
    VirtualScheduler,
} from '../../support/turnPorts';

/**
 * The first tick of a turn's submission (submit.ts `start`): which session and thread it is
 * sent with, a turn stored without its text, a claim stored fresh by this process, the order
 * of a quick turn's save and its request, the end of the session a reset replaced, and the
 * transcript read beside the session.
 */

let n = 0;
/** Per-process state (pending images, wakers) is kept by turn id: every test uses fresh ids. */
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;

const settle = settleBackground;

async function setup(over: Partial<TurnRecord> = {}, ports: Partial<Parameters<typeof memoryTickPorts>[0]> = {}) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched, ...ports });
    const rec = queuedTurn(uid('S'), { createdAt: sched.time, ...over });
    await env.store.save(rec);
    const transport = env.transport as ScriptedRuns;
    return {
        ...env,
        sched,
        rec,
        transport,
        sessions: env.ports.sessions as MemorySessions,
        history: env.ports.history as MemoryHistory,
        runBodies: () =>
            transport.requests.filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/runs').map((r) => JSON.parse(r.body as string)),
    };
}

describe('the session and thread a turn is sent with', () => {
    it('sends a room turn in the session its event read, reading no thread and no session of its own', async () => {
        const env = await setup();
        env.sessions.records.set(env.rec.sessionKey, { key: env.rec.sessionKey, generation: 3, sessionId: 'stored_session', turns: 4 });
        const fromEvent = { key: env.rec.sessionKey, generation: 2, sessionId: 'event_session', turns: 1 };
        expect(await submit(env.rec, env.ports, { session: fromEvent })).toBe(false);
        await settle();
        expect(env.rec.sessionId).toBe('event_session');
        expect(env.history.reads).toBe(0);
        expect(env.runBodies()).toEqual([{ model: 'hermes-agent', input: 'user text', instructions: 'system text', session_id: 'event_session' }]);
    });

    it("reads a thread turn's session afresh, not the event's copy, and its thread beside it", async () => {
        const env = await setup({ threadId: 'TH1', threadContext: 'pending' });
        env.sessions.records.set(env.rec.sessionKey, { key: env.rec.sessionKey, generation: 3, sessionId: 'stored_session', turns: 4 });
        const fromEvent = { key: env.rec.sessionKey, generation: 2, sessionId: 'event_session', turns: 1 };
        await submit(env.rec, env.ports, { session: fromEvent });
        await settle();
        expect(env.rec.sessionId).toBe('stored_session');
        expect(env.history.reads).toBe(1);
        expect(env.runBodies().map((b) => b.session_id)).toEqual(['stored_session']);
    });
});

describe('a turn stored without its text', () => {
    it.each([
        ['its question', { user: undefined as unknown as string }],
        ['its instructions', { system: undefined as unknown as string }],
    ])('missing %s, and whose question can no longer be read, ends with a notice instead of reaching Hermes', async (_what, missing) => {
        const env = await setup(missing);
        expect(await submit(env.rec, env.ports)).toBe(false);
        await settle();
        expect(env.transport.requests).toEqual([]);
        expect(env.logs).toEqual([
            `Turn message ${env.rec.id} in room R1 lost its text with the app process and its question can no longer be read; the asker is told.`,
            `Hermes turn failed for message ${env.rec.id} in room R1 after 0 ms: the turn was stored without its text`,
        ]);
        expect(env.chat.visible().map((m) => [m.kind, m.mark?.turnId])).toEqual([['notice', env.rec.id]]);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });
});

describe('a turn this process stored already claimed (a fresh claim)', () => {
    it('is sent under the claim it was stored with, without moving or saving the record, and is not running yet', async () => {
        const env = await setup();
        const claim = { as: 'sending' as const, process: PROCESS_ID, until: env.sched.time + 1_000, at: env.sched.time - 5 };
        env.rec.owner = { ...claim };
        env.rec.tickAt = env.sched.time - 10;
        const savesBefore = env.store.saves;
        expect(await submit(env.rec, env.ports, undefined, true)).toBe(false);
        expect(env.rec.owner).toEqual(claim);
        expect(env.rec.tickAt).toBe(env.sched.time - 10);
        expect(env.store.saves).toBe(savesBefore);
        await settle();
        expect(env.runBodies()).toHaveLength(1);
    });

    it('a turn sent normally claims it for its Hermes timeout and 5 s more, and moves', async () => {
        const env = await setup({ tickAt: 1 });
        await submit(env.rec, env.ports);
        const stored = await env.store.get(env.rec.id);
        // TEST_CONFIG: hermes_timeout_seconds 120.
        expect(stored?.owner).toEqual({ as: 'sending', process: PROCESS_ID, until: env.sched.time + 125_000, at: env.sched.time });
        expect(stored?.tickAt).toBe(env.sched.time);
    });
});

describe("the order of a turn's save and its request to Hermes", () => {
    /** A store whose next save is held until the test lets it through. */
    function holdNextSave(store: ReturnType<typeof memoryTickPorts>['store']) {
        const save = store.save.bind(store);
        let release: () => void = () => undefined;
        const held = new Promise<void>((r) => {
            release = r;
        });
        store.save = async (rec, opts) => {
            store.save = save;
            await held;
            return save(rec, opts);
        };
        return () => release();
    }

    function markedTokens() {
        const marked: string[] = [];
        return { marked, markNewestToken: async (_key: string, _user: string, sessionId: string) => void marked.push(sessionId) };
    }

    it('a turn of a scheduler job goes to Hermes only once its save is written', async () => {
        const tokens = markedTokens();
        const env = await setup({}, { markNewestToken: tokens.markNewestToken });
        const release = holdNextSave(env.store);
        let returned = false;
        const done = submit(env.rec, env.ports, {}).then(() => {
            returned = true;
        });
        await settle();
        expect([returned, tokens.marked, env.runBodies()]).toEqual([false, [], []]);
        release();
        await done;
        await settle();
        expect(tokens.marked).toEqual([env.rec.sessionId]);
        expect(env.runBodies()).toHaveLength(1);
    });

    it("a quick turn's request travels beside its save, and the call returns only once the save is written", async () => {
        const tokens = markedTokens();
        const env = await setup({}, { markNewestToken: tokens.markNewestToken });
        const release = holdNextSave(env.store);
        let returned = false;
        const done = submit(env.rec, env.ports, { quick: true }).then(() => {
            returned = true;
        });
        await settle();
        expect(tokens.marked).toEqual([env.rec.sessionId]);
        expect(env.runBodies()).toHaveLength(1);
        expect(returned).toBe(false);
        release();
        await done;
        expect((await env.store.get(env.rec.id))?.attempts).toBe(1);
    });
});

describe('the session a reset replaced', () => {
    const patches = (transport: ScriptedRuns) =>
        transport.requests.filter((r) => r.method === 'PATCH').map((r) => [new URL(r.url).pathname, JSON.parse(r.body as string)]);

    it('is marked ended in Hermes before the run is created', async () => {
        const env = await setup({ endPrevious: 'old_session' });
        await submit(env.rec, env.ports);
        await settle();
        expect(patches(env.transport)).toEqual([['/api/sessions/old_session', { end_reason: 'session_reset' }]]);
        // Then the run's events, read as soon as Hermes named the run.
        expect(env.transport.requests.map((r) => r.method)).toEqual(['PATCH', 'POST', 'GET']);
    });

    it('does not hold the turn back when Hermes cannot mark it ended: that is logged', async () => {
        const transport = new ScriptedRuns();
        const send = transport.send.bind(transport);
        transport.send = async (request) =>
            request.method === 'PATCH'
                ? { status: 403, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: 'forbidden', code: 'forbidden' } }) }
                : send(request);
        const env = await setup({ endPrevious: 'old_session' }, { transport });
        await submit(env.rec, env.ports);
        await settle();
        expect(env.logs).toEqual(['Session old_session could not be marked ended: unauthorized: HTTP 403 forbidden: forbidden']);
        expect(env.runBodies()).toHaveLength(1);
    });
});

describe('the transcript read beside the session', () => {
    const transcriptReads = (transport: ScriptedRuns) => transport.count('GET', /^\/api\/sessions\/[^/]+\/messages$/);

    it('is read for a server that does not load its history, for the session the event saw', async () => {
        const env = await setup({}, { capabilities: async () => ({ runs: true, runsLoadHistory: false, version: '0.18.2' }) as never });
        env.rec.sessionSeen = env.rec.sessionId = (await env.sessions.get(env.rec.sessionKey)).sessionId;
        await submit(env.rec, env.ports);
        await settle();
        expect(transcriptReads(env.transport)).toBe(1);
    });

    it('is not read when Hermes loads the history itself', async () => {
        const env = await setup({ sessionSeen: 'seen_session' });
        await submit(env.rec, env.ports);
        await settle();
        expect(transcriptReads(env.transport)).toBe(0);
        expect(env.runBodies()).toHaveLength(1);
    });

    it('is not read for the chat transport', async () => {
        const env = await setup(
            { sessionSeen: 'seen_session' },
            {
                config: { ...TEST_CONFIG, hermesTransport: 'chat' },
                capabilities: async () => ({ runs: true, runsLoadHistory: false, version: '0.18.2' }) as never,
            },
        );
        await submit(env.rec, env.ports);
        await settle();
        expect(transcriptReads(env.transport)).toBe(0);
        expect(env.rec.transport).toBe('chat');
    });
});

describe('two instances sending one turn (issue 32 §5)', () => {
    it('names a sending by the turn, its next attempt and its chain', () => {
        expect(sendKey({ id: 'T1', attempts: 0, chain: 'c1' })).toBe('T1:1:c1');
        expect(sendKey({ id: 'T1', attempts: 2 })).toBe('T1:3:');
    });

    it('the second of two ticks that read the same record sends nothing, saves nothing and drops its chain tick', async () => {
        const env = await setup({ chain: 'c1' });
        // Another instance: its own memory of streams and submissions, the same store.
        const other = { ...env.ports, live: new LiveTurns() };
        const copy = structuredClone(env.rec);
        // The other instance's step scheduled its chain's next tick before it submitted (tick.ts step).
        await chainOn({ turnId: env.rec.id, chain: 'c1' }, 2_000, other);
        expect(env.sched.pendingFor(env.rec.id)).toBe(1);
        await submit(env.rec, env.ports);
        const savesAfterFirst = env.store.saves;
        const firstClaim = (await env.store.get(env.rec.id))?.owner;
        expect(firstClaim?.as).toBe('sending');
        expect(await submit(copy, other)).toBe(false);
        await settle();
        expect(env.runBodies()).toHaveLength(1);
        expect(env.store.saves).toBe(savesAfterFirst);
        expect((await env.store.get(env.rec.id))?.owner).toEqual(firstClaim);
        expect(copy.attempts).toBe(0);
        expect(env.logs).toContain(`Turn message ${env.rec.id} in room R1 is being sent by another app process (its claim came first); left to it.`);
        expect(env.sched.pendingFor(env.rec.id)).toBe(0);
    });

    it('a later attempt, or the same attempt on a new chain, is a sending of its own', async () => {
        const claims: string[] = [];
        const env = await setup({ chain: 'c1', attempts: 1 }, { claimSend: async (key) => (claims.push(key), true) });
        await submit(env.rec, env.ports);
        await settle();
        expect(claims).toEqual([`${env.rec.id}:2:c1`]);
        expect(env.runBodies()).toHaveLength(1);
    });

    it('a fresh claim (stored claimed by this process a moment ago) makes no claim of its own', async () => {
        const claims: string[] = [];
        const env = await setup(
            { owner: { as: 'sending', process: PROCESS_ID, until: Number.MAX_SAFE_INTEGER, fresh: true } },
            { claimSend: async (key) => (claims.push(key), true) },
        );
        await submit(env.rec, env.ports, undefined, true);
        await settle();
        expect(claims).toEqual([]);
        expect(env.runBodies()).toHaveLength(1);
    });
});
