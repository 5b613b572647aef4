/**
 * Part 4e of the bench: one slot hand-over, round trip by round trip. With max_parallel_turns 1
 * and every bridge call waiting `latency` ms (as each waits for MongoDB on a real server), a
 * turn of another room comes while the first runs and waits for its slot. From the end of the
 * first run (its event stream closes) to the waiter's run request and event stream, each bridge
 * call and Hermes request is listed by its offset: a serial store round trip shows as a step of
 * the latency, so (run end -> run request) / latency is about the hand-over's store round trips.
 */
import { Rig } from '../rig';
import { FakeHermes, fmt, stats, Stats, traceOf } from './common';

export interface HandOverFigures {
    latency: number;
    /** From the first run's end to the waiter's run request at Hermes, ms. */
    toRun: Stats;
    /** To the waiter's event-stream request, ms. */
    toEvents: Stats;
}

/** The first run holds its slot this long: its event stream answers after it. */
const RUN_MS = 300;

export async function handOverCase(rig: Rig, hermes: FakeHermes, latency = 20, rounds = 5): Promise<HandOverFigures> {
    const alice = rig.user('handover-alice');
    const bob = rig.user('handover-bob');
    await rig.setting('max_parallel_turns', 1);
    hermes.reset();
    hermes.setReply(() => 'ok');
    hermes.script({ method: 'GET', path: /^\/v1\/runs\/[^/]+\/events$/, delayMs: RUN_MS, always: true });
    const toRun: number[] = [];
    const toEvents: number[] = [];
    let trace: string[] = [];
    // Round 0 warms the path up and is not counted.
    for (let round = 0; round <= rounds; round++) {
        const first = rig.room(`handover-a${round}`, [alice, rig.bot]);
        const second = rig.room(`handover-b${round}`, [bob, rig.bot]);
        rig.server.storeLatencyMs = 0;
        const since = Date.now();
        const firstEvents = hermes.waitForRequest((q) => q.at >= since && /\/events$/.test(q.path), 20_000);
        await rig.post(alice, first, `@${rig.bot.username} first ${round}`);
        const opened = await firstEvents;
        const ended = opened.at + RUN_MS;
        rig.server.storeLatencyMs = latency;
        const mark = Date.now();
        rig.server.calls.reset();
        const run = hermes.waitForRequest((q) => q.at >= mark && q.method === 'POST' && q.path === '/v1/runs', 20_000);
        const events = hermes.waitForRequest((q) => q.at >= mark && /\/events$/.test(q.path) && q.path !== opened.path, 20_000);
        await rig.post(bob, second, `@${rig.bot.username} second ${round}`);
        const [runAt, eventsAt] = (await Promise.all([run, events])).map((q) => q.at);
        await rig.waitForBotReply(second, { timeoutMs: 20_000 });
        await rig.settle();
        if (round === 0) {
            continue;
        }
        toRun.push(runAt - ended);
        toEvents.push(eventsAt - ended);
        if (round === 1) {
            trace = traceOf(rig, hermes, ended, eventsAt, true).map((c) => `${fmt(c.at).padStart(6)}  ${c.key}`);
        }
    }
    rig.server.storeLatencyMs = 0;
    hermes.reset();
    hermes.setReply(() => 'ok');
    await rig.setting('max_parallel_turns', 8);
    const figures = { latency, toRun: stats(toRun), toEvents: stats(toEvents) };
    console.log(
        `\n4e. One slot hand-over (max_parallel_turns 1, store latency ${latency} ms): another room's turn came while the first ran (${RUN_MS} ms); from that run's end, ms (round 1, app calls shown when served):`,
    );
    console.log(`    ${trace.join('\n    ')}`);
    console.log(
        `  run end -> the waiter's run request: median ${fmt(figures.toRun.p50)} ms (min ${fmt(figures.toRun.min)}, max ${fmt(figures.toRun.max)}, n=${toRun.length}), ${fmt(figures.toRun.p50 / latency)} x the store latency; -> its event stream ${fmt(figures.toEvents.p50)} ms`,
    );
    return figures;
}
