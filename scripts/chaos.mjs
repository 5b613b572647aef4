// `npm run chaos`: the crash test at length (bench/chaos.ts; CHAOS_SEED, CHAOS_TURNS, CHAOS_KILLS).
import { runBench } from './run-bench.mjs';

await runBench('chaos');
