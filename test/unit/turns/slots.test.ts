import { claimSlot, entriesOf, mayStart, releaseSlot, SlotEntry } from '../../../src/turns/slots';
import { sweepTurns } from '../../../src/turns/sweep';
import { tick } from '../../../src/turns/tick';
import { TickJob } from '../../../src/turns/tickPorts';
import { memoryTickPorts, queuedTurn, ScriptedRuns, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

/** Issue 16 §4: max_parallel_turns bounds turns in flight server-wide; queued turns start in arrival order across rooms. */
const entry = (id: string, seq: number, state: SlotEntry['state'], until = 10_000): SlotEntry => ({ id, seq, state, until });

describe('mayStart', () => {
    it('counts running turns and the waiters that arrived earlier, not itself and not leftovers past their time', () => {
        const entries = [entry('a', 1, 'running'), entry('b', 2, 'waiting'), entry('c', 3, 'waiting'), entry('old', 0, 'running', 5)];
        expect(mayStart({ id: 'b', seq: 2 }, entries, 2, 100)).toBe(true);
        expect(mayStart({ id: 'c', seq: 3 }, entries, 2, 100)).toBe(false);
        expect(mayStart({ id: 'd', seq: 4 }, entries, 3, 100)).toBe(false);
        expect(mayStart({ id: 'd', seq: 4 }, entries, 4, 100)).toBe(true);
        expect(mayStart({ id: 'a', seq: 1 }, entries, 1, 100)).toBe(true);
    });
});

describe('turns in flight across rooms', () => {
    function setup(max: number) {
        const sched = new VirtualScheduler();
        const env = memoryTickPorts({ sched, config: { ...TEST_CONFIG, maxParallelTurns: max } });
        const claims = async () => entriesOf(await env.store.open(), env.ports.now()).map((e) => `${e.id}:${e.state}`);
        return { sched, claims, ...env, transport: env.transport as ScriptedRuns, run: (job: TickJob) => tick(job, env.ports) };
    }

    it('never has more than max_parallel_turns runs open at Hermes, starts the rest in arrival order, and answers each once', async () => {
        const { sched, store, transport, chat, run, ports } = setup(2);
        // Six turns in six rooms (six sessions): nothing orders them but max_parallel_turns.
        const ids = ['t1', 't2', 't3', 't4', 't5', 't6'];
        for (const [i, id] of ids.entries()) {
            const rec = queuedTurn(id, { seq: i + 1, roomId: `R${i}`, sessionKey: `agent:main:rocketchat:channel:R${i}` });
            await store.save(rec);
            sched.schedule({ turnId: id, chain: rec.chain }, 0);
        }
        const started: string[] = [];
        let maxOpen = 0;
        const open = () => [...transport.statuses.values()].filter((s) => s.status === 'running').length;
        for (let round = 0; round < 40; round++) {
            await sched.runUntil(sched.time + 1_000, async (job) => {
                await run(job);
                maxOpen = Math.max(maxOpen, open());
            });
            for (const id of ids) {
                const rec = await store.get(id);
                if (rec?.runId && !started.includes(id)) {
                    started.push(id);
                }
            }
            // Hermes ends the oldest open run each second.
            const running = [...transport.statuses.entries()].find(([, s]) => s.status === 'running');
            if (running) {
                transport.statuses.set(running[0], { status: 'completed', output: `done ${running[0]}` });
            }
            await sweepTurns({ store, schedule: ports.schedule, log: { info: () => undefined }, now: ports.now, config: ports.config });
        }
        await sched.runUntil(sched.time + 10_000, run);
        expect(maxOpen).toBe(2);
        expect(started).toEqual(ids);
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(6);
        expect(chat.messages.filter((m) => m.text.includes('done run_')).length).toBe(6);
        expect(await store.open()).toEqual([]);
    });

    it('a stop reaches a turn waiting for a slot, and its place goes to the next in line', async () => {
        const { sched, claims, store, transport, run } = setup(1);
        for (const [i, id] of ['a', 'b', 'c'].entries()) {
            const rec = queuedTurn(id, { seq: i + 1, roomId: `R${i}`, sessionKey: `agent:main:rocketchat:channel:R${i}` });
            await store.save(rec);
            sched.schedule({ turnId: id, chain: rec.chain }, 0);
        }
        await sched.runUntil(sched.time + 500, run);
        expect((await store.get('b'))?.waiting).toBe('slot');
        await store.requestStop('b', 'alice');
        sched.schedule({ turnId: 'b', chain: 'chain-b', wake: true }, 0);
        await sched.runUntil(sched.time + 500, run);
        expect(await store.get('b')).toBeUndefined();
        transport.statuses.set('run_1', { status: 'completed', output: 'done a' });
        // A silent stream: the run's end is seen by the next poll (at most 5 s).
        await sched.runUntil(sched.time + 12_000, run);
        expect((await store.get('c'))?.runId).toBe('run_2');
        expect(await claims()).toEqual(['c:running']);
    });

    it('the sweep wakes a waiter whose wake-up was lost (the turn ahead ended in a process that died before waking it)', async () => {
        const { sched, claims, store, run, ports } = setup(1);
        const ghost = queuedTurn('ghost', { seq: 0, roomId: 'RG', sessionKey: 'agent:main:rocketchat:channel:RG' });
        await store.save({ ...ghost, phase: 'running', runId: 'run_ghost', slot: { state: 'running', until: sched.time + 3_600_000 }, tickAt: sched.time });
        const rec = queuedTurn('w', { seq: 5 });
        await store.save(rec);
        sched.schedule({ turnId: 'w', chain: rec.chain }, 0);
        await sched.runUntil(sched.time + 500, run);
        expect((await store.get('w'))?.waiting).toBe('slot');
        expect(await claims()).toEqual(['ghost:running', 'w:waiting']);
        // The process finishing 'ghost' removed its record and died before it woke anyone.
        await store.remove('ghost');
        await sweepTurns({ store, schedule: ports.schedule, log: { info: () => undefined }, now: ports.now, config: ports.config });
        await sched.runUntil(sched.time + 500, run);
        expect((await store.get('w'))?.runId).toBeDefined();
        expect(await claims()).toEqual(['w:running']);
    });
});

describe('claims in one process', () => {
    it('are decided against the read plus the claims this process made since: two turns reading the same free slot do not both start', () => {
        const ports = { config: { maxParallelTurns: 1, turnTimeoutMinutes: 10 }, schedule: async () => undefined, log: {}, now: () => 9e12 };
        const a = queuedTurn('claim-a', { seq: 1 });
        const b = queuedTurn('claim-b', { seq: 2 });
        const staleRead = [a, b].map((r) => ({ ...r }));
        expect(claimSlot(a, staleRead, ports)).toBe(true);
        expect(a.slot?.state).toBe('running');
        expect(claimSlot(b, staleRead, ports)).toBe(false);
        expect(b.slot?.state).toBe('waiting');
        releaseSlot('claim-a', ports.now());
        expect(claimSlot(b, staleRead, ports)).toBe(true);
        releaseSlot('claim-b', ports.now());
    });

    it('count a turn freed early (its run ended, its record not removed yet) free in this process only, and for a while', () => {
        const now = 9e12;
        const ended = { ...queuedTurn('ended', { seq: 1 }), phase: 'running' as const, slot: { state: 'running' as const, until: now + 600_000 } };
        const read = [ended];
        expect(mayStart({ id: 'next', seq: 2 }, entriesOf(read, now), 1, now)).toBe(false);
        releaseSlot('ended', now, true);
        expect(mayStart({ id: 'next', seq: 2 }, entriesOf(read, now), 1, now)).toBe(true);
        // A process that never reaches its removal (another instance finished it) counts its record again.
        expect(mayStart({ id: 'next', seq: 2 }, entriesOf(read, now + 61_000), 1, now + 61_000)).toBe(false);
        releaseSlot('ended', now, true);
        // Its removal: gone from the read, forgotten here.
        releaseSlot('ended', now);
        expect(mayStart({ id: 'next', seq: 2 }, entriesOf(read, now), 1, now)).toBe(false);
    });
});
