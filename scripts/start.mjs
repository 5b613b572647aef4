// `npm start`: build the app package, then run the playground — the real engine with the
// packaged app, an in-memory Rocket.Chat and Hermes (the built-in demo Hermes, or the one at
// HERMES_URL with HERMES_API_KEY) — and play a short scripted conversation.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageApp } from './package.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const zip = await packageApp();
const out = join(root, 'build', 'playground.cjs');
await build({
    entryPoints: [join(root, 'scripts', 'playground.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
});
const run = spawnSync(process.execPath, [out, zip], { stdio: 'inherit', cwd: root });
process.exit(run.status ?? 1);
