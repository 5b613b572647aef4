import { RigCluster } from '../../rig/cluster';
import { turnOfStored } from '../../rig/marks';
import { FakeHermes, useClusterAndHermes } from '../support/e2e';

/**
 * Issue 32 §5: two instances on one store, more mentions than `max_parallel_turns`, so turns wait
 * for a slot and finishing turns on both instances wake them. Two instances whose reads of the
 * open turns both came before either's write both woke one waiter and both sent it: one message,
 * two Hermes runs with one Idempotency-Key (v0.18.2 never reads that header on /v1/runs, so its
 * tools ran twice). A send that is not the turn's fresh claim is now claimed first-stored-wins
 * (src/turns/submit.ts `start`, src/engine/adapters/receipts.ts `claimFirst`).
 */
const env = useClusterAndHermes({ max_parallel_turns: 4 });
let hermes: FakeHermes;
let cluster: RigCluster;

beforeAll(() => {
    hermes = env.hermes();
    cluster = env.cluster();
});

it('twenty mentions over both instances, four slots, five rounds: each message sent to Hermes once and answered once', async () => {
    const [a, b] = cluster.instances;
    // Each bridge call waits like a round trip to MongoDB: the two instances' reads and writes interleave.
    a.server.storeLatencyMs = 3;
    b.server.storeLatencyMs = 3;
    // 4 words 50 ms apart: Hermes answers 200 ms after the run starts.
    hermes.configure({ slowIntervalMs: 50, slowWords: 4, maxConcurrentRuns: 40 });
    const alice = a.user('alice');
    try {
        for (let round = 0; round < 5; round++) {
            const rooms = Array.from({ length: 20 }, (_, i) => a.room(`wake${round}-${i}`, [alice, a.bot]));
            const questions = await Promise.all(
                rooms.map((room, i) => (i % 2 === 0 ? a : b).post(alice, room, `@${a.bot.username} SLOW round ${round} room ${i}`)),
            );
            await Promise.all(rooms.map((room, i) => a.waitForBotReply(room, { after: questions[i], timeoutMs: 60_000 })));
            await cluster.settle();
            rooms.forEach((room, i) => {
                const answers = a.botMessagesOfKind(room, 'answer');
                expect(answers.map(turnOfStored)).toEqual([questions[i].id]);
            });
        }
    } finally {
        a.server.storeLatencyMs = 0;
        b.server.storeLatencyMs = 0;
    }
    const sends = new Map<string, number>();
    for (const r of hermes.requests.filter((x) => x.method === 'POST' && x.path === '/v1/runs')) {
        const key = r.headers['idempotency-key'];
        sends.set(key, (sends.get(key) ?? 0) + 1);
    }
    expect(sends.size).toBe(100);
    const twice = [...sends.entries()].filter(([, count]) => count > 1);
    if (twice.length > 0) {
        // Seen once in a loaded CI rehearsal (the test took 145 s, not 11): what both instances logged of those turns.
        const lines = cluster.instances.flatMap((x, i) =>
            x
                .logText({ appLinesOnly: true })
                .split('\n')
                .map((l) => `[${i}] ${l}`),
        );
        console.log(lines.filter((l) => twice.some(([key]) => l.includes(key))).join('\n'));
    }
    expect(twice).toEqual([]);
}, 300_000);
