import { HermesError } from '../../../src/hermes/errors';
import { onError } from '../../../src/turns/retryPolicy';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, VirtualScheduler } from '../../support/turnPorts';

/**
 * A submission Hermes refused once the retry window (a minute) is over (retryPolicy.ts): a
 * busy Hermes (429) is waited for as long as it runs other turns of this app, counted from the
 * tickets; a draining Hermes (503) is not, and the asker is told.
 */

let n = 0;
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;

/** A queued turn asked 61 s ago (past the retry window), and the other open turns of the app. */
async function lateTurn(others: Array<Partial<TurnRecord>>) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched });
    const rec = queuedTurn(uid('L'), { createdAt: sched.time - 61_000, attempts: 1 });
    await env.store.save(rec);
    for (const other of others) {
        await env.store.save(queuedTurn(uid('O'), { sessionKey: uid('session'), ...other }));
    }
    return { ...env, sched, rec };
}

type Late = Awaited<ReturnType<typeof lateTurn>>;

async function expectRetriedAfter(env: Late, ms: number) {
    const saved = await env.store.get(env.rec.id);
    expect(saved?.retryAt).toBe(env.sched.time + ms);
    expect(env.sched.pending.map((p) => [p.job.turnId, p.at - env.sched.time])).toEqual([[env.rec.id, ms]]);
    expect(env.chat.visible()).toEqual([]);
}

describe('a busy Hermes after the retry window', () => {
    it('is waited for while another turn of the app has a run there', async () => {
        const env = await lateTurn([{ phase: 'running', runId: 'run_other' }]);
        await onError(env.rec, new HermesError('rate-limited', 'HTTP 429', 429, 4), env.ports);
        await expectRetriedAfter(env, 4_000);
    });

    it('ends the turn when the only run there is its own record', async () => {
        const env = await lateTurn([]);
        env.rec.runId = 'run_stale';
        await env.store.save(env.rec);
        await onError(env.rec, new HermesError('rate-limited', 'HTTP 429', 429, 4), env.ports);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
        expect(env.logs).toEqual([`Hermes turn failed for message ${env.rec.id} in room R1 after 61000 ms: rate-limited: HTTP 429`]);
    });

    it('ends the turn when the other open turns have no run yet', async () => {
        const env = await lateTurn([{ phase: 'queued' }, { phase: 'running' }]);
        await onError(env.rec, new HermesError('rate-limited', 'HTTP 429', 429, 4), env.ports);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
        expect(env.chat.visible().map((m) => [m.kind, m.mark?.turnId])).toEqual([['notice', env.rec.id]]);
    });
});

describe('a draining Hermes after the retry window', () => {
    it('ends the turn even while other turns of the app have runs there', async () => {
        const env = await lateTurn([{ phase: 'running', runId: 'run_other' }]);
        await onError(env.rec, new HermesError('draining', 'HTTP 503', 503, 4), env.ports);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
        expect(env.chat.visible().map((m) => [m.kind, m.mark?.turnId])).toEqual([['notice', env.rec.id]]);
        expect(env.logs).toEqual([`Hermes turn failed for message ${env.rec.id} in room R1 after 61000 ms: draining: HTTP 503`]);
    });
});
