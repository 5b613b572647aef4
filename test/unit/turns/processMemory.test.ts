import { processMemory } from '../../../src/turns/processMemory';
import { tick } from '../../../src/turns/tick';
import { memoryTickPorts, queuedTurn, ScriptedRuns, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

/**
 * The app process keeps what it knows of its turns in one object (src/turns/processMemory.ts).
 * Turns that end leave nothing behind in it: a process that answers for weeks does not grow
 * with the turns it answered. Only what is kept for a while on purpose may stay: the slots this
 * process released or claimed in the last seconds (slots.ts), and what it last wrote of a turn
 * is dropped with the turn.
 */

/** Kept for seconds after a turn on purpose (slots.ts: what the next read of the tickets cannot show yet). */
const FOR_A_WHILE = new Set(['slots.releasedHere', 'slots.claimedHere']);

describe('process memory', () => {
    it('holds every collection the turn path keeps, by name', () => {
        expect(Object.keys(processMemory.sizes()).sort()).toEqual(
            expect.arrayContaining([
                'chain.successors',
                'finish.failingFinishes',
                'freshClaim.freshHere',
                'observe.polledAt',
                'progress.typing',
                'quick.waiting',
                'retryPolicy.failingSince',
                'sessionSnapshot.snapshots',
                'slots.claimedHere',
                'submit.pendingImages',
                'ticks.busy',
                'waiters.started',
            ]),
        );
    });

    it('is empty of per-turn entries once every turn has ended: five turns, two sessions, one slot', async () => {
        const sched = new VirtualScheduler();
        const env = memoryTickPorts({ sched, config: { ...TEST_CONFIG, maxParallelTurns: 1 } });
        const transport = env.transport as ScriptedRuns;
        transport.initialStatus = { status: 'completed', output: 'done' };
        const s1 = 'agent:main:rocketchat:channel:R1';
        const s2 = 'agent:main:rocketchat:channel:R2';
        const turns = [
            queuedTurn('P1', { seq: 1, sessionKey: s1 }),
            queuedTurn('P2', { seq: 2, sessionKey: s1 }),
            queuedTurn('P3', { seq: 3, sessionKey: s2 }),
            queuedTurn('P4', { seq: 4, sessionKey: s1 }),
            queuedTurn('P5', { seq: 5, sessionKey: s2 }),
        ];
        for (const rec of turns) {
            await env.store.save(rec);
            sched.schedule({ turnId: rec.id, chain: rec.chain }, 0);
        }
        await sched.runUntil(sched.time + 120_000, (job) => tick(job, env.ports));
        expect(env.chat.answers()).toHaveLength(5);
        expect(env.store.records.size).toBe(0);
        const left = Object.entries(processMemory.sizes()).filter(([name, size]) => size > 0 && !FOR_A_WHILE.has(name));
        expect(left).toEqual([]);
    });
});
