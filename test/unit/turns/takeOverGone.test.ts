import { PROCESS_ID } from '../../../src/turns/processId';
import { tick } from '../../../src/turns/tick';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, ScriptedRuns, VirtualScheduler } from '../../support/turnPorts';

/**
 * Issue 32 (npm run chaos, seed 4, 500 questions): a process killed while it posted a turn's
 * answer left its finishing lease on the turn, and the turn, with every turn behind it in its
 * conversation, waited 20–40 s for the sweep. A tick of the turn that finds it held only by
 * processes that are gone (owner.ts: silent for over 10 s) takes it over itself (takeOverGone.ts).
 */

let n = 0;
const uid = () => `G${++n}`;

/** A run Hermes has completed, whose turn a process took the finishing lease of at `movedAt`. */
async function setup(o: { beatAgoMs: number | undefined; movedAgoMs: number; holder?: string }) {
    const sched = new VirtualScheduler();
    const transport = new ScriptedRuns();
    const beatReads: number[] = [];
    const holder = o.holder ?? 'killed-process';
    const beats = new Map<string, number>(o.beatAgoMs === undefined ? [] : [[holder, sched.time - o.beatAgoMs]]);
    const env = memoryTickPorts({
        sched,
        transport,
        beats: {
            readBeats: async () => {
                beatReads.push(sched.time);
                return new Map(beats);
            },
        },
    });
    const movedAt = sched.time - o.movedAgoMs;
    const rec: TurnRecord = queuedTurn(uid(), {
        phase: 'running',
        runId: 'run_done',
        transport: 'runs',
        sessionId: 'rc_s_1',
        attempts: 1,
        createdAt: movedAt - 5_000,
        startedAt: movedAt - 1_000,
        tickAt: movedAt,
        deadlineAt: sched.time + 600_000,
        // The lease replaced the claim on its stream (renewed at movedAt): tickAt keeps when it moved.
        owner: { as: 'finishing', token: 'theirs', until: sched.time + 20_000, process: holder },
    });
    transport.statuses.set('run_done', { status: 'completed', output: 'the answer' });
    await env.store.save(rec);
    return { ...env, transport, sched, rec, beatReads };
}

describe('a tick of a turn held only by processes that are gone', () => {
    it('takes it over and ends it: the answer is posted once, the turn is removed, the log says why', async () => {
        const env = await setup({ beatAgoMs: 15_000, movedAgoMs: 12_000 });
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.chat.messages.map((m) => m.text)).toEqual([expect.stringContaining('the answer')]);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
        expect(env.beatReads).toHaveLength(1);
        expect(env.logs).toContain(`Turn message ${env.rec.id} in room R1 its app process is gone (no sign of it for 12 s); taken over by its next tick.`);
    });

    it("goes on in a new chain: its claims released, its next tick on that chain (the old chain's late ticks end themselves)", async () => {
        const env = await setup({ beatAgoMs: 15_000, movedAgoMs: 12_000 });
        env.transport.statuses.set('run_done', { status: 'running' });
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        const now = await env.store.get(env.rec.id);
        expect(now?.chain).not.toBe(env.rec.chain);
        expect(now?.owner).toBeUndefined();
        expect(env.sched.pending.filter((p) => p.job.turnId === env.rec.id).map((p) => p.job.chain)).toEqual([now?.chain]);
    });

    it('a holder that never beat counts by its last write of the turn', async () => {
        const env = await setup({ beatAgoMs: undefined, movedAgoMs: 10_001 });
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.chat.messages).toHaveLength(1);
    });

    it('leaves it to a holder whose beat is recent (alive, its post on its way): nothing posted, its lease stays', async () => {
        const env = await setup({ beatAgoMs: 9_000, movedAgoMs: 12_000 });
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.chat.messages).toHaveLength(0);
        expect((await env.store.get(env.rec.id))?.owner).toEqual({
            as: 'finishing',
            token: 'theirs',
            until: env.sched.time + 20_000,
            process: 'killed-process',
        });
        expect(env.beatReads).toHaveLength(1);
    });

    it('reads no beats while the turn moved within 10 s', async () => {
        const env = await setup({ beatAgoMs: 60_000, movedAgoMs: 10_000 });
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.beatReads).toEqual([]);
        expect(env.chat.messages).toHaveLength(0);
    });

    it('reads no beats for a turn this process holds', async () => {
        const env = await setup({ beatAgoMs: 60_000, movedAgoMs: 60_000, holder: PROCESS_ID });
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.beatReads).toEqual([]);
    });

    it('a turn whose message event was carrying it (its claim lapsed, nothing moved since) in a process that is gone', async () => {
        const env = await setup({ beatAgoMs: 15_000, movedAgoMs: 12_000 });
        const carried: TurnRecord = { ...env.rec, owner: { as: 'carrying', process: 'killed-process', until: env.sched.time - 11_000, at: env.rec.tickAt } };
        await env.store.save(carried);
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.beatReads).toHaveLength(1);
        expect(env.logs).toContain(`Turn message ${env.rec.id} in room R1 its app process is gone (no sign of it for 12 s); taken over by its next tick.`);
    });

    it('reads no beats for a turn nobody holds (a turn that waits, say)', async () => {
        const env = await setup({ beatAgoMs: 60_000, movedAgoMs: 60_000 });
        await env.store.save({ ...env.rec, owner: undefined });
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.beatReads).toEqual([]);
    });
});
