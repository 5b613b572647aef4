/**
 * `npm run chaos`: the crash test (bench/chaosRun.ts) at length. CHAOS_SEED (1), CHAOS_TURNS
 * (200), CHAOS_KILLS (20), CHAOS_GAP_MS (2000: questions 0 to this apart), CHAOS_KILL_SPACING_MS
 * (10000: kills at least this apart), CHAOS_STATUS_DELAY_SECONDS (3; 0 streams every answer from its
 * first words, so kills fall between a streamed message's post and its saved id). Two instances of the packaged app in the real engine on one store,
 * the fake Hermes (v0.18.2). Prints one JSON line; exits 1 on any violation (a duplicate, a
 * lost question, a session out of order, an answer later than 30 s after its restart).
 */
import { RigCluster } from '../rig/cluster';
import { startFakeHermes } from '../fake-hermes';
import { API_KEY, envNumber } from './common';
import { runChaos } from './chaosRun';

async function main(): Promise<void> {
    const [zipPath] = process.argv.slice(2);
    const seed = envNumber('CHAOS_SEED', 1);
    const turns = envNumber('CHAOS_TURNS', 200);
    const kills = envNumber('CHAOS_KILLS', 20);
    // Paced by default: a kill every 10 s or more (see bench/RESULTS-chaos.md for why the 3 s pace cannot meet the bound).
    const gapMs = envNumber('CHAOS_GAP_MS', 2_000);
    const killSpacingMs = envNumber('CHAOS_KILL_SPACING_MS', 10_000);
    const statusDelay = envNumber('CHAOS_STATUS_DELAY_SECONDS', 3);
    const hermes = await startFakeHermes({ apiKey: API_KEY });
    const cluster = await RigCluster.start({
        zipPath,
        settings: {
            hermes_url: hermes.url,
            hermes_api_key: API_KEY,
            hermes_timeout_seconds: 120,
            max_parallel_turns: 20,
            shared_memory_warning: false,
            status_delay_seconds: statusDelay,
            // One answer per question is what this run counts: a person's questions sent while
            // their turn runs are each their own turn, as before busy_input_mode's merge.
            busy_input_mode: 'queue',
        },
    });
    const started = Date.now();
    try {
        console.log(
            `Chaos: seed ${seed}, ${turns} questions 0–${gapMs} ms apart, ${kills} app process kills at least ${killSpacingMs} ms apart, two instances, status_delay_seconds ${statusDelay}.`,
        );
        const report = await runChaos(cluster, hermes, { seed, turns, kills, gapMs, killSpacingMs, log: (l) => console.log(`  ${l}`) });
        console.log(`Done in ${Math.round((Date.now() - started) / 1000)} s.`);
        console.log(JSON.stringify(report));
        process.exitCode = report.ok ? 0 : 1;
    } finally {
        await cluster.stop();
        await hermes.close();
    }
}

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
});
