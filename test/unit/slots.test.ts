import { mayStart, SlotEntry, SlotPort } from '../../src/turns/slots';
import { sweepTurns } from '../../src/turns/sweep';
import { tick } from '../../src/turns/tick';
import { TickJob } from '../../src/turns/tickPorts';
import { memoryTickPorts, queuedTurn, ScriptedRuns, TEST_CONFIG, VirtualScheduler } from '../support/turnPorts';

/** Issue 16 §4: max_parallel_turns bounds turns in flight server-wide; queued turns start in arrival order across rooms. */
class MemorySlots implements SlotPort {
    public readonly entries = new Map<string, SlotEntry>();
    public calls = 0;
    public async list(): Promise<SlotEntry[]> {
        this.calls++;
        return [...this.entries.values()].map((e) => ({ ...e }));
    }
    public async put(entry: SlotEntry): Promise<void> {
        this.calls++;
        this.entries.set(entry.id, { ...entry });
    }
    public async drop(id: string): Promise<void> {
        this.calls++;
        this.entries.delete(id);
    }
}

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
        const slots = new MemorySlots();
        const env = memoryTickPorts({ sched, config: { ...TEST_CONFIG, maxParallelTurns: max } });
        env.ports.slots = slots;
        return { sched, slots, ...env, transport: env.transport as ScriptedRuns, run: (job: TickJob) => tick(job, env.ports) };
    }

    it('never has more than max_parallel_turns runs open at Hermes, starts the rest in arrival order, and answers each once', async () => {
        const { sched, slots, store, transport, chat, run, ports } = setup(2);
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
            await sweepTurns({ store, schedule: ports.schedule, log: { info: () => undefined }, now: ports.now, slots, config: ports.config });
        }
        await sched.runUntil(sched.time + 10_000, run);
        expect(maxOpen).toBe(2);
        expect(started).toEqual(ids);
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(6);
        expect(chat.messages.filter((m) => m.text.includes('done run_')).length).toBe(6);
        expect(await store.open()).toEqual([]);
        expect(slots.entries.size).toBe(0);
    });

    it('a stop reaches a turn waiting for a slot, and its place goes to the next in line', async () => {
        const { sched, slots, store, transport, run } = setup(1);
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
        expect([...slots.entries.keys()]).toEqual(['c']);
    });

    it('the sweep drops the entry of a turn that is gone and wakes the waiter it blocked', async () => {
        const { sched, slots, store, run, ports } = setup(1);
        await slots.put({ id: 'ghost', seq: 0, state: 'running', until: sched.time + 3_600_000 });
        const rec = queuedTurn('w', { seq: 5 });
        await store.save(rec);
        sched.schedule({ turnId: 'w', chain: rec.chain }, 0);
        await sched.runUntil(sched.time + 500, run);
        expect((await store.get('w'))?.waiting).toBe('slot');
        await sweepTurns({ store, schedule: ports.schedule, log: { info: () => undefined }, now: ports.now, slots, config: ports.config });
        await sched.runUntil(sched.time + 500, run);
        expect((await store.get('w'))?.runId).toBeDefined();
        expect([...slots.entries.keys()]).toEqual(['w']);
    });
});
