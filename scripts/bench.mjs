// `npm run bench`: package the app and the floor app, then run bench/bench.ts (bundled with
// esbuild like the playground) against the real engine rig and the fake Hermes.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageApp } from './package.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const hermesZip = await packageApp({ quiet: true });
const floorZip = await packageApp({ quiet: true, appDir: join(root, 'bench', 'floor-app') });
const out = join(root, 'build', 'bench.cjs');
await build({
    entryPoints: [join(root, 'bench', 'bench.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
});
const run = spawnSync(process.execPath, [out, hermesZip, floorZip], { stdio: 'inherit', cwd: root });
process.exit(run.status ?? 1);
