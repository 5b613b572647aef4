import { RunStatus } from '../../../src/hermes/runs';
import { PROCESS_ID } from '../../../src/turns/processId';
import { tick } from '../../../src/turns/tick';
import { memoryTickPorts, queuedTurn, VirtualScheduler } from '../../support/turnPorts';

/**
 * A quick turn carried in one instance's message event is ended by that call without a lease
 * (turns/carryOn.ts). Its record, written with its run at 0.5 s, says so (a carrying claim); a
 * tick of another instance (a stray job that came for it) must leave it alone until then, or
 * both post its answer.
 */
let n = 0;

async function setup(carried: { process: string; until: number } | undefined) {
    const sched = new VirtualScheduler();
    const polls: string[] = [];
    const status: RunStatus = { status: 'completed', output: 'the answer' };
    const hermes = {
        runStatus: async (runId: string) => {
            polls.push(runId);
            return status;
        },
    };
    const env = memoryTickPorts({ sched, hermes: hermes as never });
    const rec = queuedTurn(`C${++n}`, {
        phase: 'running',
        transport: 'runs',
        runId: 'run_1',
        startedAt: sched.time,
        deadlineAt: sched.time + 30 * 60_000,
        // The call's claim while it carries the turn; once handed over, its process's claim on the stream.
        owner: carried
            ? { as: 'carrying', process: carried.process, until: sched.time + carried.until, at: sched.time }
            : { as: 'streaming', process: 'the-carrying-process', until: sched.time + 30_000, at: sched.time },
    });
    await env.store.save(rec);
    const look = () => tick({ turnId: rec.id, chain: rec.chain }, env.ports);
    return { ...env, sched, rec, polls, look };
}

describe('a turn carried in another instance’s event', () => {
    it('is left to that call by a tick here: no poll, no answer, its record untouched', async () => {
        const env = await setup({ process: 'the-carrying-process', until: 3_000 });
        await env.look();
        expect(env.polls).toEqual([]);
        expect(env.chat.answers()).toHaveLength(0);
        expect((await env.store.get(env.rec.id))?.phase).toBe('running');
    });

    it('is ended here once the mark has lapsed (the carrying process died): polled, answered once', async () => {
        const env = await setup({ process: 'the-carrying-process', until: 3_000 });
        env.sched.time += 3_001;
        await env.look();
        expect(env.polls).toEqual(['run_1']);
        expect(env.chat.answers().map((m) => m.text)).toEqual([expect.stringContaining('the answer')]);
    });

    it('is ended by a tick of the process that carries it, and by any tick once handed over (no mark)', async () => {
        const own = await setup({ process: PROCESS_ID, until: 3_000 });
        await own.look();
        expect(own.polls).toEqual(['run_1']);
        const handedOver = await setup(undefined);
        await handedOver.look();
        expect(handedOver.polls).toEqual(['run_1']);
        expect(handedOver.chat.answers()).toHaveLength(1);
    });
});
