// What `npm run bench`, `npm run load` and `npm run soak` share: package the app (and the floor
// app), bundle one bench/*.ts script with esbuild like the playground, and run it against the real
// engine rig and the fake Hermes with the zips as arguments.
import { bundleForNode } from './bundle-node.mjs';
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageApp } from './package.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs bench/<name>.ts; exits with its status. */
export async function runBench(name, { floor = false } = {}) {
    const zips = [await packageApp({ quiet: true })];
    if (floor) {
        zips.push(await packageApp({ quiet: true, appDir: join(root, 'bench', 'floor-app') }));
    }
    const out = join(root, 'build', `${name}.cjs`);
    await bundleForNode(join(root, 'bench', `${name}.ts`), out);
    const run = spawnSync(process.execPath, [out, ...zips], { stdio: 'inherit', cwd: root });
    process.exit(run.status ?? 1);
}
