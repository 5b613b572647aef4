// `npm run soak`: N turns in a row, the app process's memory and its persistence records
// (bench/soak.ts; SOAK_TURNS, SOAK_WARMUP, STORE_LATENCY_MS).
import { runBench } from './run-bench.mjs';

await runBench('soak', { floor: true });
