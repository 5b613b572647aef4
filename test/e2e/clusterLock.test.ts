import { StoredMessage } from '../../rig';
import { AGENDA_LOCK_LIFETIME_MS } from '../../rig/bridges/scheduler';
import { RigCluster } from '../../rig/cluster';
import { startFakeHermes } from '../../fake-hermes';
import { API_KEY, FakeHermes } from '../support/e2e';

/**
 * Issue 35 §5, the scheduler's locks: Agenda locks a running job for its lock lifetime (10 min);
 * an instance that dies mid-run leaves the job locked that long (rig/bridges/scheduler.ts
 * stopInstance). The sweep is one recurring job for the whole cluster, so an instance killed
 * while it sweeps stops every sweep for ten minutes. Turns must not wait for it: the turns the
 * dead instance carried are answered by the other within seconds.
 */
let hermes: FakeHermes;
let cluster: RigCluster;

beforeAll(async () => {
    hermes = await startFakeHermes({ apiKey: API_KEY });
    cluster = await RigCluster.start({
        zipPath: process.env.HERMES_APP_ZIP as string,
        settings: { hermes_url: hermes.url, hermes_api_key: API_KEY, hermes_timeout_seconds: 10, max_parallel_turns: 20 },
    });
}, 90_000);

afterAll(async () => {
    await cluster?.stop();
    await hermes?.close();
});

type Worker = { instance: unknown; processor: { processor: (job: unknown) => Promise<void> } };

it('an instance killed while it runs the sweep: the sweep stays locked, the turns it carried are answered by the other within 30 s', async () => {
    const [a, b] = cluster.instances;
    const scheduler = b.server.bridges.scheduler;
    expect(scheduler.lockLifetimeMs).toBe(AGENDA_LOCK_LIFETIME_MS);
    const alice = a.user('alice');
    const rooms = Array.from({ length: 4 }, (_, i) => a.room(`lock-${i}`, [alice, a.bot]));
    // About 19 s per answer: the next sweep comes while every turn is still at Hermes.
    hermes.configure({ slowIntervalMs: 600 });
    const questions: StoredMessage[] = [];
    for (const room of rooms) {
        questions.push(await b.post(alice, room, `@${a.bot.username} SLOW please`));
    }
    await hermes.waitForRequest(() => hermes.requests.filter((r) => r.path === '/v1/runs').length === rooms.length, 10_000);
    // The instance dies the moment it starts a sweep.
    const workers = (scheduler as unknown as { home: { workers: Map<string, Worker[]> } }).home.workers;
    const sweep = [...workers.keys()].find((k) => k.startsWith('hermes-sweep')) as string;
    const mine = (workers.get(sweep) as Worker[]).find((w) => w.instance === scheduler) as Worker;
    const original = mine.processor.processor;
    const killedAt = await new Promise<number>((resolve) => {
        mine.processor = {
            ...mine.processor,
            processor: (job) => {
                const run = original(job);
                cluster.kill(1);
                resolve(Date.now());
                return run;
            },
        };
    });
    const replies = await Promise.all(rooms.map((room, i) => a.waitForBotReply(room, { after: questions[i], timeoutMs: 45_000 })));
    expect(Math.max(...replies.map((m) => m.createdAt.getTime())) - killedAt).toBeLessThan(30_000);
    // No instance swept since: the dead instance's lock holds the job.
    expect(scheduler.runs.filter((r) => r.id.startsWith('hermes-sweep') && r.at > killedAt)).toEqual([]);
}, 90_000);
