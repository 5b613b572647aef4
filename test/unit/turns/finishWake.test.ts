import { finish } from '../../../src/turns/finish';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { noteStart } from '../../../src/turns/waiters';
import { queuedTurn, TEST_CONFIG } from '../../support/turnPorts';
import { answer, leaseWrites, runningTurn, uid } from '../../support/finishTurn';

/**
 * Finishing a turn, whom it wakes and when: the oldest waiters for the slot its run freed (as
 * soon as the run is over, when its start saw others waiting), its session's next turn, and what
 * the woken turns are handed. Each wake-up is noted with how many answers the room showed then.
 */

const HELD = { state: 'running', until: Number.MAX_SAFE_INTEGER } as const;
const WAITING = { state: 'waiting', until: Number.MAX_SAFE_INTEGER } as const;

/** A finishing turn holding a slot, a turn of another session waiting for one, and the wake-ups as they come. */
async function withWaiter(over: Partial<TurnRecord> = {}, portsOver: Parameters<typeof runningTurn>[1] = {}) {
    const env = await runningTurn({ seq: 1, slot: HELD, ...over }, portsOver);
    const waiter = queuedTurn(uid('W'), { seq: 2, sessionKey: 'agent:main:rocketchat:channel:R2:U2', roomId: 'R2', slot: WAITING, waiting: 'slot' });
    await env.store.save(waiter);
    const wakes: Array<[string, number]> = [];
    env.ports.schedule = async (job, delay) => {
        wakes.push([job.turnId, env.chat.answers().length]);
        return env.sched.schedule(job, delay);
    };
    return { ...env, waiter, wakes };
}

/** Notes the turn's start as this process saw it: alone, or with `waiting` queued beside it. */
function started(rec: TurnRecord, waiting?: TurnRecord): void {
    noteStart(rec.id, waiting ? [rec, waiting] : [rec]);
}

describe('the waiters for the slot, on a turn finished by its ticks', () => {
    it('are woken as soon as the lease frees the slot, before the answer is posted, and again at the end', async () => {
        const env = await withWaiter();
        started(env.rec, env.waiter);
        const writes = leaseWrites(env.ports);
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.wakes).toEqual([
            [env.waiter.id, 0],
            [env.waiter.id, 1],
        ]);
        expect(writes[0].slot).toBeUndefined();
    });

    it('are woken early too when this process does not know how the turn started', async () => {
        const env = await withWaiter();
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.wakes[0]).toEqual([env.waiter.id, 0]);
    });

    it('are not woken by a turn that started alone (a waiter since would have marked it)', async () => {
        const env = await withWaiter();
        started(env.rec);
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.wakes).toEqual([]);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['@alice hi']);
    });

    it('are woken only at the end by a turn that held no slot', async () => {
        const env = await withWaiter({ slot: undefined });
        started(env.rec, env.waiter);
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.wakes).toEqual([[env.waiter.id, 1]]);
    });

    it('leave a turn still waiting for a slot in its place in the lease write, and are woken once, at its end', async () => {
        const env = await withWaiter({ phase: 'queued', slot: WAITING, waiting: 'slot' });
        started(env.rec, env.waiter);
        const writes = leaseWrites(env.ports);
        await finish(env.rec, { kind: 'stopped', by: 'bob' }, env.ports);
        expect(writes[0].slot).toEqual({ state: 'waiting', until: Number.MAX_SAFE_INTEGER });
        expect(env.wakes.map(([id]) => id)).toEqual([env.waiter.id]);
    });
});

describe('the waiters for the slot, on a turn finished in its message event', () => {
    it('are woken when its run ended, before the answer is posted, where this call carries them', async () => {
        const env = await withWaiter({}, { carries: () => true });
        started(env.rec, env.waiter);
        await finish(env.rec, answer('hi'), env.ports, true);
        expect(env.wakes).toEqual([
            [env.waiter.id, 0],
            [env.waiter.id, 1],
        ]);
    });

    it('are woken only at the end by a turn that held no slot', async () => {
        const env = await withWaiter({ slot: undefined }, { carries: () => true });
        started(env.rec, env.waiter);
        await finish(env.rec, answer('hi'), env.ports, true);
        expect(env.wakes).toEqual([[env.waiter.id, 1]]);
    });

    it('are woken only at the end where the call does not carry the woken turns', async () => {
        const refused = await withWaiter({}, { carries: () => false });
        started(refused.rec, refused.waiter);
        await finish(refused.rec, answer('hi'), refused.ports, true);
        expect(refused.wakes).toEqual([[refused.waiter.id, 1]]);

        const absent = await withWaiter();
        started(absent.rec, absent.waiter);
        await finish(absent.rec, answer('hi'), absent.ports, true);
        expect(absent.wakes).toEqual([[absent.waiter.id, 1]]);
    });

    it('are woken only at the end when this process does not know how the turn started', async () => {
        const env = await withWaiter({}, { carries: () => true });
        await finish(env.rec, answer('hi'), env.ports, true);
        expect(env.wakes).toEqual([[env.waiter.id, 1]]);
    });

    it('read the tickets allowing a read already on its way; the end reads its own', async () => {
        const env = await withWaiter({}, { carries: () => true });
        started(env.rec, env.waiter);
        const reads: unknown[] = [];
        env.ports.store.tickets = async (opts) => {
            reads.push(opts);
            return env.store.open();
        };
        await finish(env.rec, answer('hi'), env.ports, true);
        expect(reads).toEqual([{ inFlight: true }, undefined]);
    });

    it("are handed the tickets read without the finished turn's own", async () => {
        const env = await withWaiter({}, { carries: () => true });
        started(env.rec, env.waiter);
        await finish(env.rec, answer('hi'), env.ports, true);
        expect(env.sched.pending[0].job.open?.map((o) => o.id)).toEqual([env.waiter.id]);
    });

    it('are woken before the call returns, even when the finish fails', async () => {
        const env = await withWaiter({}, { carries: () => true });
        started(env.rec, env.waiter);
        // The tickets read answers a turn of the event loop later, after the finish has failed.
        env.ports.store.tickets = async () => {
            await new Promise((resolve) => setImmediate(resolve));
            return env.store.open();
        };
        env.ports.server = async () => Promise.reject(new Error('settings unreadable'));
        await expect(finish(env.rec, answer('hi'), env.ports, true)).rejects.toThrow('settings unreadable');
        expect(env.wakes).toEqual([[env.waiter.id, 0]]);
    });

    it('that could not be woken early are logged, and woken at the end', async () => {
        const env = await withWaiter({}, { carries: () => true });
        started(env.rec, env.waiter);
        env.ports.store.tickets = async (opts) => (opts?.inFlight ? Promise.reject(new Error('tickets unreadable')) : env.store.open());
        await finish(env.rec, answer('hi'), env.ports, true);
        expect(env.logs).toContain(`Waking the turns waiting for the slot of message ${env.rec.id} in room R1 failed: tickets unreadable`);
        expect(env.wakes).toEqual([[env.waiter.id, 1]]);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['@alice hi']);
    });
});

describe('at the end', () => {
    it("the session's next turn is woken once, even while it waits for a slot too, and the other waiters beside it", async () => {
        const env = await withWaiter({ slot: undefined });
        const next = queuedTurn(uid('S'), { seq: 3, sessionKey: env.rec.sessionKey, slot: WAITING, waiting: 'slot' });
        await env.store.save(next);
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.wakes).toEqual([
            [next.id, 1],
            [env.waiter.id, 1],
        ]);
    });

    it('a tickets read that still shows the finished turn does not count its slot', async () => {
        const env = await withWaiter({ slot: undefined }, { config: { ...TEST_CONFIG, maxParallelTurns: 1 } });
        const stale = { ...env.rec, slot: HELD };
        env.ports.store.tickets = async () => [stale, ...(await env.store.open())];
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.wakes).toEqual([[env.waiter.id, 1]]);
        expect(env.sched.pending[0].job.open?.map((o) => o.id)).toEqual([env.waiter.id]);
    });
});
