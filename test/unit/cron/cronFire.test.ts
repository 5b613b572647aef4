import { fireDue, runEnded, startRun, FirePorts } from '../../../src/cron/fire';
import { CronJob, CronStore } from '../../../src/cron/job';
import { MemoryTurnStore, TEST_CONFIG } from '../../support/turnPorts';

/** The firing rules over in-memory ports: one run per time, overlap skipped, late runs once, claims across instances. */
class MemoryCron implements CronStore {
    public readonly jobs = new Map<string, CronJob>();
    public async all() {
        return [...this.jobs.values()].map((j) => ({ ...j }));
    }
    public async get(id: string) {
        const j = this.jobs.get(id);
        return j && { ...j };
    }
    public async save(job: CronJob) {
        this.jobs.set(job.id, { ...job });
    }
    public async remove(id: string) {
        this.jobs.delete(id);
    }
}

const T = Date.parse('2026-12-01T09:00:00Z');

function setup(now = T) {
    const store = new MemoryCron();
    const turns = new MemoryTurnStore();
    /** Claimed ids and when (the receipts' `at`). */
    const claimed = new Map<string, number>();
    const scheduled: string[] = [];
    const logs: string[] = [];
    const clock = { now };
    const ports: FirePorts = {
        store,
        turns,
        claim: async (id) => (claimed.has(id) ? false : (claimed.set(id, clock.now), true)),
        claimedAt: async (id) => claimed.get(id),
        schedule: async (job) => scheduled.push(job.turnId),
        // The owner may schedule prompts and still stands where the job delivers (cronRecheck.test.ts takes that away).
        config: { ...TEST_CONFIG, timezone: 'UTC', cronUserIds: ['U1'] },
        standing: async () => undefined,
        usage: undefined,
        log: { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m), error: (m: string) => logs.push(m), debug: () => undefined } as never,
        now: () => clock.now,
    };
    const job: CronJob = {
        id: 'j1',
        name: 'hourly',
        ownerId: 'U1',
        ownerUsername: 'alice',
        roomId: 'R1',
        roomType: 'c',
        kind: 'room',
        schedule: { kind: 'every', everyMs: 3600_000 },
        prompt: 'check',
        createdAt: T - 3600_000,
        nextAt: T,
    };
    return { store, turns, claimed, scheduled, logs, clock, ports, job };
}

describe('firing scheduled prompts', () => {
    it('a due job starts one run as a turn of its own session and moves to its next time', async () => {
        const env = setup();
        await env.store.save(env.job);
        await fireDue(env.ports);
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([`cron.j1.${T}`]);
        const rec = await env.turns.get(`cron.j1.${T}`);
        expect(rec).toMatchObject({
            sessionKey: 'agent:main:rocketchat:cron:j1',
            roomId: 'R1',
            askerId: 'U1',
            user: 'check',
            cron: { jobId: 'j1', name: 'hourly' },
        });
        expect(await env.store.get('j1')).toMatchObject({ running: `cron.j1.${T}`, nextAt: T + 3600_000 });
    });

    it('another instance that fired the same time first: nothing starts here', async () => {
        const env = setup();
        env.claimed.set(`cron.j1.${T}`, T);
        await env.store.save(env.job);
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([]);
    });

    it('a time claimed by a process that died before saving the run: started once, a minute later, by one sweep (issue 32 §3)', async () => {
        const env = setup();
        await env.store.save(env.job);
        // The claim was written, then the process died: no turn, the job still due at T.
        env.claimed.set(`cron.j1.${T}`, T);
        env.clock.now = T + 30_000;
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([]);
        env.clock.now = T + 60_000;
        await fireDue(env.ports);
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([`cron.j1.${T}`]);
        expect(await env.store.get('j1')).toMatchObject({ running: `cron.j1.${T}`, nextAt: T + 3600_000 });
        expect(env.logs).toContain(`Scheduled prompt j1 (hourly): run cron.j1.${T} was claimed but never started (its process died); starting it now.`);
    });

    it('a run whose turn was saved but not its job: it is not started again, and its end moves the job on', async () => {
        const env = setup();
        await env.store.save(env.job);
        await fireDue(env.ports);
        // As if the job's save had been lost: due at T again, the turn going.
        await env.store.save(env.job);
        env.clock.now = T + 120_000;
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([`cron.j1.${T}`]);
        await env.turns.remove(`cron.j1.${T}`);
        await runEnded(env.store, 'j1', `cron.j1.${T}`, { at: env.clock.now, status: 'delivered' }, 'UTC');
        expect(await env.store.get('j1')).toMatchObject({ nextAt: T + 3600_000, last: { status: 'delivered' } });
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([`cron.j1.${T}`]);
        // A run that ends after its job moved on leaves the next time alone.
        await runEnded(env.store, 'j1', `cron.j1.${T}`, { at: env.clock.now, status: 'delivered' }, 'UTC');
        expect((await env.store.get('j1'))?.nextAt).toBe(T + 3600_000);
    });

    it('a job that fails to start is logged by id and skipped: the jobs after it in the same sweep still run', async () => {
        const env = setup();
        await env.store.save({ ...env.job, id: 'broken', createdAt: T - 7200_000 });
        await env.store.save(env.job);
        const save = env.turns.save.bind(env.turns);
        env.turns.save = async (rec) => (rec.id.startsWith('cron.broken.') ? Promise.reject(new Error('persistence is down')) : save(rec));
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([`cron.j1.${T}`]);
        expect(env.logs).toContain('Scheduled prompt broken could not start its run: persistence is down');
        // Left due: a minute later, a sweep starts it after all (its claim was written, its turn was not).
        expect((await env.store.get('broken'))?.nextAt).toBe(T);
        env.turns.save = save;
        env.clock.now = T + 60_000;
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([`cron.j1.${T}`, `cron.broken.${T}`]);
    });

    it('a run still going when the next time comes: that time is skipped with a log line; after it ends, the next runs', async () => {
        const env = setup();
        await env.store.save(env.job);
        await fireDue(env.ports);
        env.clock.now = T + 3600_000;
        await fireDue(env.ports);
        expect(env.scheduled).toHaveLength(1);
        expect(env.logs.some((l) => l.includes('skipped its run') && l.includes('the previous run is still going'))).toBe(true);
        expect(await env.store.get('j1')).toMatchObject({ last: { status: 'skipped' }, nextAt: T + 2 * 3600_000 });
        await env.turns.remove(`cron.j1.${T}`);
        await runEnded(env.store, 'j1', `cron.j1.${T}`, { at: env.clock.now, status: 'delivered' }, 'UTC');
        env.clock.now = T + 2 * 3600_000;
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([`cron.j1.${T}`, `cron.j1.${T + 2 * 3600_000}`]);
    });

    it('a time missed while the app was down runs once, late, then keeps the schedule', async () => {
        const env = setup(T + 5 * 3600_000 + 60_000);
        await env.store.save(env.job);
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([`cron.j1.${T}`]);
        expect(env.logs.some((l) => l.includes('runs 18060 s late'))).toBe(true);
        expect((await env.store.get('j1'))?.nextAt).toBe(T + 6 * 3600_000);
    });

    it('paused and finished jobs never fire; a one-shot has no next time after its run', async () => {
        const env = setup();
        await env.store.save({ ...env.job, paused: true });
        await env.store.save({ ...env.job, id: 'done', nextAt: undefined });
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([]);
        const once = { ...env.job, id: 'once', schedule: { kind: 'at' as const, at: T }, nextAt: T };
        await env.store.save(once);
        await fireDue(env.ports);
        expect((await env.store.get('once'))?.nextAt).toBeUndefined();
        // A manual run leaves the schedule alone.
        await env.store.save({ ...env.job, id: 'manual', nextAt: T + 999_000 });
        expect(await startRun((await env.store.get('manual')) as CronJob, 'cron.manual.run.1', env.ports)).toBe('started');
        expect((await env.store.get('manual'))?.nextAt).toBe(T + 999_000);
    });

    it("a run's system text says who set it up and where it is posted; a DM says private", async () => {
        const env = setup();
        await env.store.save({ ...env.job, roomName: 'ops', threadId: 'T1', name: 'daily [digest]' });
        await startRun((await env.store.get('j1')) as CronJob, 'cron.j1.a', env.ports);
        expect((await env.turns.get('cron.j1.a'))?.system).toBe(
            [
                'You are Hermes, an AI agent who is a member of a Rocket.Chat workspace. This is a scheduled prompt ("daily digest") that @alice set up; your answer is posted in the Rocket.Chat room #ops (room id R1), in a thread.',
                'Rocket.Chat renders Markdown: use it where it helps. Keep the delivery concise.',
                'If there is nothing worth posting this time, answer exactly [SILENT] and nothing will be posted.',
            ].join('\n'),
        );
        await env.store.save({ ...env.job, id: 'j2', roomName: undefined });
        await startRun((await env.store.get('j2')) as CronJob, 'cron.j2.a', env.ports);
        expect((await env.turns.get('cron.j2.a'))?.system?.split('\n')[0]).toContain('your answer is posted in the Rocket.Chat room (room id R1).');
        await env.store.save({ ...env.job, id: 'j3', kind: 'dm', roomType: 'd' });
        await startRun((await env.store.get('j3')) as CronJob, 'cron.j3.a', env.ports);
        expect((await env.turns.get('cron.j3.a'))?.system?.split('\n')[0]).toContain('your answer is posted in a private direct message.');
    });

    it('a run that ends frees its job for the next time, records how it went, and leaves another run alone', async () => {
        const env = setup();
        await env.store.save({ ...env.job, running: 'cron.j1.other', nextAt: T + 3600_000 });
        const outcome = { at: T + 5, status: 'delivered' as const };
        await runEnded(env.store, 'j1', 'cron.j1.mine', outcome, 'UTC');
        expect(await env.store.get('j1')).toMatchObject({ running: 'cron.j1.other', last: outcome, nextAt: T + 3600_000 });
        await runEnded(env.store, 'j1', 'cron.j1.other', outcome, 'UTC');
        expect((await env.store.get('j1'))?.running).toBeUndefined();
        // A job removed meanwhile: nothing to record.
        await runEnded(env.store, 'gone', 'cron.gone.1', outcome, 'UTC');
        expect(await env.store.get('gone')).toBeUndefined();
    });
});
