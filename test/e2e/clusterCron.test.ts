import { RigCluster } from '../../rig/cluster';
import { FakeHermes, useClusterAndHermes } from '../support/e2e';

/**
 * Issue 32 §4, a scheduled prompt's "once per time" across instances. Apps-Engine persistence
 * has no conditional write, so a run's claim is a read and a write; on a real server each is a
 * round trip to MongoDB, and two instances sweeping at the same moment interleave them. The
 * rig's store latency (RigServerOptions.storeLatencyMs) makes each bridge call wait as a round
 * trip does, so both instances' sweeps read before either writes. Each time the job comes due,
 * both instances sweep at once: one starts the run (the other finds the time claimed, though it read
 * before the claim was written: engine/adapters/receipts.ts claim), Hermes gets one run and the
 * room one delivery.
 */
const env = useClusterAndHermes();
let hermes: FakeHermes;
let cluster: RigCluster;

beforeAll(() => {
    hermes = env.hermes();
    cluster = env.cluster();
});

type Worker = { instance: unknown; processor: { processor: (job: unknown) => Promise<void> } };
type StoredJob = { name: string; nextAt?: number; running?: string };

it('two instances sweeping the same due time at once start one run, five times over', async () => {
    const [a, b] = cluster.instances;
    const admin = a.user('cronadmin');
    await cluster.setting('admin_user_ids', admin.id);
    const room = a.room('twice', [admin, a.bot]);
    hermes.setReply(() => 'status report');
    const added = await a.commandAnswer(admin, room, '/hermes cron add every 1h Status of both --name both');
    const jobId = (/\(`(\w+)`\) added/.exec(added) as RegExpExecArray)[1];
    const job = () =>
        [...a.server.bridges.persistence.records.values()]
            .filter((r) => r.associations.some((x) => x.getID() === 'hermes-cron-jobs'))
            .map((r) => r.data as StoredJob)
            .find((j) => j.name === 'both') as StoredJob;
    const workers = (a.server.bridges.scheduler as unknown as { home: { workers: Map<string, Worker[]> } }).home.workers;
    const name = [...workers.keys()].find((k) => k.startsWith('hermes-sweep-run')) as string;
    const sweepOn = (rig: typeof a) => (workers.get(name) as Worker[]).find((w) => w.instance === rig.server.bridges.scheduler) as Worker;
    // A run started is a turn with a chain of jobs: the distinct chains scheduled for the job's runs.
    const started = () =>
        new Set(
            a.server.bridges.scheduler.runs
                .filter((r) => typeof r.data.turnId === 'string' && r.data.turnId.startsWith(`cron.${jobId}.`))
                .map((r) => r.data.chain),
        ).size;
    const cronRuns = () => hermes.requests.filter((r) => r.path === '/v1/runs' && r.body.includes('Status of both'));
    for (const rig of [a, b]) {
        rig.server.storeLatencyMs = 20;
    }
    try {
        for (let round = 1; round <= 5; round++) {
            // Due a little earlier each round: each is a new scheduled time, so a new claim.
            job().nextAt = Date.now() - 1000 * round;
            await Promise.all([sweepOn(a).processor.processor({}), sweepOn(b).processor.processor({})]);
            await a.waitForMessage(() => a.botMessages(room).length >= round, 20_000, `delivery ${round}`);
            await cluster.settle();
            expect(cronRuns()).toHaveLength(round);
            expect(a.botMessages(room)).toHaveLength(round);
            // Started by one instance only: the other found the time claimed, though it read before the claim was written.
            expect(started()).toBe(round);
        }
    } finally {
        for (const rig of [a, b]) {
            rig.server.storeLatencyMs = 0;
        }
    }
}, 120_000);
