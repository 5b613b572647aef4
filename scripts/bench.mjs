// `npm run bench`: package the app and the floor app, then run bench/bench.ts against the real
// engine rig and the fake Hermes (BENCH_STORE_LATENCIES_MS, default "0,1"; BENCH_TURNS, default 50).
import { runBench } from './run-bench.mjs';

await runBench('bench', { floor: true });
