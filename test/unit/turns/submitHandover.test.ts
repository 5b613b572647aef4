import { tick } from '../../../src/turns/tick';
import { memoryTickPorts, queuedTurn, ScriptedRuns, VirtualScheduler } from '../../support/turnPorts';

/**
 * Issue 16 §3: a turn being handed to Hermes by another instance. The request's answer lives
 * in that instance's memory (v0.18.2 runs take no Idempotency-Key: a second request is a second
 * run), so a tick here neither sends it again nor gives up on it while the claim is fresh; it
 * records the run once the sender hands the answer over; an expired claim (the sender died) is
 * sent again.
 */
function setup() {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched });
    const rec = queuedTurn('T1', {
        attempts: 1,
        transport: 'runs',
        sessionId: 'rc_s_g0',
        owner: { as: 'sending', process: 'another-instance', until: sched.time + 15_000 },
    });
    return { sched, ...env, transport: env.transport as ScriptedRuns, rec };
}

describe('a turn another instance is sending', () => {
    it('is not sent again while the claim is fresh; a chain tick asks for one more look soon, a wake-up does not', async () => {
        const { sched, store, transport, ports, rec } = setup();
        await store.save(rec);
        await tick({ turnId: 'T1', chain: rec.chain }, ports);
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(0);
        const wakes = () => sched.pending.filter((p) => p.job.turnId === 'T1' && p.job.wake);
        expect(wakes().map((p) => p.at - sched.time)).toEqual([250]);
        await tick({ turnId: 'T1', chain: rec.chain, wake: true }, ports);
        expect(wakes()).toHaveLength(1);
        expect((await store.get('T1'))?.phase).toBe('queued');
    });

    it('is recorded here once its sender handed the run over, and the hand-over record is dropped', async () => {
        const { store, transport, ports, rec } = setup();
        await store.save(rec);
        await store.recordSent('T1', { attempt: 1, runId: 'run_from_there' });
        await tick({ turnId: 'T1', chain: rec.chain }, ports);
        const now = await store.get('T1');
        expect([now?.phase, now?.runId]).toEqual(['running', 'run_from_there']);
        expect(now?.owner?.as).not.toBe('sending');
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(0);
        expect(store.sents.size).toBe(0);
    });

    it('takes a hand-over of an earlier attempt for nothing, and sends again once the claim has lapsed', async () => {
        const { sched, store, transport, ports, rec } = setup();
        await store.save(rec);
        await store.recordSent('T1', { attempt: 0, runId: 'run_old' });
        await tick({ turnId: 'T1', chain: rec.chain }, ports);
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(0);
        sched.time += 15_001;
        await tick({ turnId: 'T1', chain: rec.chain }, ports);
        await new Promise((r) => setImmediate(r));
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(1);
        expect((await store.get('T1'))?.attempts).toBe(2);
    });
});

describe('the newest asker token of a conversation (asker_key)', () => {
    const settle = async () => {
        for (let i = 0; i < 10; i++) {
            await new Promise((r) => setImmediate(r));
        }
    };

    it('is written beside the transcript read, and the run request goes only once it is written', async () => {
        const sched = new VirtualScheduler();
        const marks: string[] = [];
        let written: () => void = () => undefined;
        const env = memoryTickPorts({
            sched,
            // v0.18.2: the app reads the transcript and sends it with the run.
            capabilities: async () => ({ runs: true, runsLoadHistory: false, version: '0.18.2' }) as never,
            markNewestToken: (sessionKey) => {
                marks.push(sessionKey);
                return new Promise<void>((resolve) => {
                    written = resolve;
                });
            },
        });
        const transport = env.transport as ScriptedRuns;
        const rec = queuedTurn('MARKED');
        await env.store.save(rec);
        await tick({ turnId: 'MARKED', chain: rec.chain }, env.ports);
        await settle();
        expect(marks).toEqual([rec.sessionKey]);
        expect(transport.count('GET', /^\/api\/sessions\/[^/]+\/messages$/)).toBe(1);
        // The mark is still on its way: Hermes has not been asked yet (its history tool would find the old token newest).
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(0);
        written();
        await settle();
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(1);
    });
});
