// `npm run load`: many mentions over many rooms from many users, Hermes answering in 1 s
// (bench/load.ts; LOAD_MENTIONS, LOAD_ROOMS, LOAD_USERS, LOAD_HERMES_MS, STORE_LATENCY_MS).
import { runBench } from './run-bench.mjs';

await runBench('load');
