import { RigCluster } from '../../rig/cluster';
import { kindOfStored } from '../../rig/marks';
import { FakeHermes, pollUntil, storedTurnHead, useClusterAndHermes } from '../support/e2e';

/**
 * Issue 32 §1 across instances: the instance whose message event carries a quick turn dies in
 * the turn's first second (before the status message). The other instance takes the turn over
 * as soon as the dead process is known to be gone (src/turns/beats.ts), follows its run, and
 * answers once within 30 s: the sending claim (hermes_timeout_seconds) is not waited out.
 */
const env = useClusterAndHermes({ hermes_timeout_seconds: 120 });
let hermes: FakeHermes;
let cluster: RigCluster;

beforeAll(() => {
    hermes = env.hermes();
    cluster = env.cluster();
});

it('an instance dying in a turn’s first second: the other answers within 30 s, once, from the same run', async () => {
    const [a, b] = cluster.instances;
    const alice = a.user('alice');
    const dm = a.direct([alice, a.bot]);
    // 30 words 100 ms apart: Hermes answers 3 s after the run starts.
    hermes.configure({ slowIntervalMs: 100 });
    const question = await b.post(alice, dm, 'SLOW through an instance death');
    const runId = await pollUntil('the run written', () => storedTurnHead(a, question.id)?.runId as string | undefined);
    expect(a.botMessagesOfKind(dm, 'status')).toHaveLength(0);
    cluster.kill(1);
    const diedAt = Date.now();
    const reply = await a.waitForBotReply(dm, { after: question, timeoutMs: 60_000 });
    const afterMs = Date.now() - diedAt;
    await cluster.settle();
    expect(reply.text).toBe(`SLOW:${' tick'.repeat(30)}`);
    expect(afterMs).toBeLessThan(30_000);
    expect(a.botMessages(dm).filter((m) => kindOfStored(m) === 'answer')).toHaveLength(1);
    expect(hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs')).toHaveLength(1);
    expect(hermes.requests.filter((r) => r.method === 'GET' && r.path === `/v1/runs/${runId}`).length).toBeGreaterThan(0);
}, 90_000);
