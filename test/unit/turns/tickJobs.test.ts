import { ContextFiles } from '../../../src/files/contextFiles';
import { PROCESS_ID } from '../../../src/turns/processId';
import { tick } from '../../../src/turns/tick';
import { HEARTBEAT_MS, LIVE_TICK_MS } from '../../../src/turns/tickTimes';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, ScriptedRuns, VirtualScheduler } from '../../support/turnPorts';

/**
 * What a tick starts from (tick.ts tick, step, takeText): a job for a turn another tick of it
 * is working on, the record or the text the job brings in hand, the session a woken turn reads
 * beside its record, the one write that sends a queued turn, and when a running turn whose
 * stream is here writes that it is still alive.
 */

let n = 0;
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;
const settle = async () => {
    for (let i = 0; i < 5; i++) {
        await new Promise((r) => setImmediate(r));
    }
};

function setup() {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched });
    const cancelled: string[] = [];
    env.ports.cancel = async (id) => {
        cancelled.push(id);
        sched.cancel(id);
    };
    const chainJobs = (turnId: string) =>
        sched.pending.filter((p) => p.job.turnId === turnId && !p.job.wake).map((p) => ({ chain: p.job.chain, in: p.at - sched.time }));
    return { sched, cancelled, chainJobs, ...env, transport: env.transport as ScriptedRuns };
}

type Env = ReturnType<typeof setup>;

/** The bodies of the run creations Hermes got. */
const runInputs = (env: Env) =>
    env.transport.requests
        .filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/runs')
        .map((r) => (JSON.parse(r.body ?? '{}') as { input: unknown }).input);

describe('a job for a turn another tick of it is working on', () => {
    it('of an old chain leaves the live chain’s waiting tick alone', async () => {
        const env = setup();
        const rec = queuedTurn(uid('T'), { createdAt: env.sched.time });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect(env.chainJobs(rec.id)).toEqual([{ chain: rec.chain, in: LIVE_TICK_MS }]);
        // A wake-up is working on the turn when a job of a replaced chain comes.
        await Promise.all([tick({ turnId: rec.id, chain: rec.chain, wake: true }, env.ports), tick({ turnId: rec.id, chain: 'an-old-chain' }, env.ports)]);
        expect(env.chainJobs(rec.id)).toEqual([{ chain: rec.chain, in: LIVE_TICK_MS }]);
        expect(env.cancelled).toEqual([]);
    });
});

describe('what a tick starts from', () => {
    it('the record its job brings in hand, not a read of the store', async () => {
        const env = setup();
        const rec = queuedTurn(uid('T'), { createdAt: env.sched.time, user: 'as the event saved it' });
        await env.store.save({ ...rec, user: 'an older copy' });
        await tick({ turnId: rec.id, chain: rec.chain, record: structuredClone(rec) }, env.ports);
        await settle();
        expect(runInputs(env)).toEqual(['as the event saved it']);
    });

    it('a woken turn whose record must be read reads its session beside it, not after it', async () => {
        const env = setup();
        const rec = queuedTurn(uid('T'), { createdAt: env.sched.time });
        await env.store.save(rec);
        const reads: string[] = [];
        const get = env.store.get.bind(env.store);
        env.store.get = async (id) => {
            reads.push(`record ${id}`);
            return get(id);
        };
        const session = env.ports.sessions.get.bind(env.ports.sessions);
        env.ports.sessions.get = async (key) => {
            reads.push(`session ${key}`);
            return session(key);
        };
        await tick({ turnId: rec.id, chain: rec.chain, open: [], sessionKey: rec.sessionKey }, env.ports);
        await settle();
        expect(reads).toEqual([`session ${rec.sessionKey}`, `record ${rec.id}`]);
        expect(env.transport.count('POST', /^\/v1\/runs$/)).toBe(1);
    });

    it('the text its event built meanwhile, and the context files that came with it', async () => {
        const env = setup();
        const files: ContextFiles = { files: [], max: 2, overCount: 1, unreadable: 0 };
        const rec = queuedTurn(uid('T'), { createdAt: env.sched.time, user: undefined as unknown as string });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: rec.chain, text: Promise.resolve({ user: 'the built text', contextFiles: files }) }, env.ports);
        await settle();
        expect(runInputs(env)).toEqual(['the built text']);
        expect((await env.store.get(rec.id))?.contextFiles).toEqual(files);
    });

    it('context files of its own over the ones the text came with', async () => {
        const env = setup();
        const own: ContextFiles = { files: [], max: 3, overCount: 0, unreadable: 2 };
        const rec = queuedTurn(uid('T'), { createdAt: env.sched.time, contextFiles: own });
        await env.store.save(rec);
        const built: ContextFiles = { files: [], max: 1, overCount: 5, unreadable: 0 };
        await tick({ turnId: rec.id, chain: rec.chain, text: Promise.resolve({ user: 'the built text', contextFiles: built }) }, env.ports);
        expect((await env.store.get(rec.id))?.contextFiles).toEqual(own);
    });
});

describe('a chain tick that sends a queued turn', () => {
    it('writes its record once, with the claim that sends it', async () => {
        const env = setup();
        const rec = queuedTurn(uid('T'), { createdAt: env.sched.time });
        await env.store.save(rec);
        env.store.saves = 0;
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect(env.store.saves).toBe(1);
        const stored = await env.store.get(rec.id);
        expect(stored?.owner?.as).toBe('sending');
        expect(stored?.owner?.at).toBe(env.sched.time);
    });
});

describe('a running turn whose stream is in this process', () => {
    async function streaming(liveAgo: number, owner?: TurnRecord['owner'], tickAgo = 0) {
        const env = setup();
        const now = env.sched.time;
        const rec = queuedTurn(uid('S'), {
            phase: 'running',
            transport: 'runs',
            runId: 'run_1',
            createdAt: now,
            startedAt: now,
            tickAt: now - tickAgo,
            owner: owner ?? { as: 'streaming', process: PROCESS_ID, until: now - liveAgo + 30_000, at: now - liveAgo },
        } satisfies Partial<TurnRecord>);
        await env.store.save(rec);
        env.ports.live.followRun(rec.id, env.ports.hermes, 'run_1');
        env.store.saves = 0;
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        env.ports.live.end(rec.id);
        return { env, rec, now };
    }

    it('writes that it holds the stream 10 s after it last did', async () => {
        const { env, rec, now } = await streaming(HEARTBEAT_MS);
        expect(env.store.saves).toBe(1);
        expect(await env.store.get(rec.id)).toMatchObject({ tickAt: now, owner: { as: 'streaming', process: PROCESS_ID, until: now + 30_000, at: now } });
    });

    it('renews only its own stream claim: another process’s finishing lease stays as it was (one claim per turn)', async () => {
        const lease = { as: 'finishing' as const, token: 'their-token', process: 'another-instance', until: Number.MAX_SAFE_INTEGER };
        const { env, rec, now } = await streaming(HEARTBEAT_MS, lease, HEARTBEAT_MS);
        // Written (its tick is 10 s old), but the owner is still the other finisher's lease.
        expect(env.store.saves).toBe(1);
        expect(await env.store.get(rec.id)).toMatchObject({ tickAt: now, owner: lease });
    });

    it('writes nothing sooner', async () => {
        const { env, rec, now } = await streaming(HEARTBEAT_MS - 1);
        expect(env.store.saves).toBe(0);
        const stored = await env.store.get(rec.id);
        expect(stored?.owner?.as).toBe('streaming');
        expect(stored?.owner?.at).toBe(now - HEARTBEAT_MS + 1);
    });
});
