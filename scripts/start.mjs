// `npm start`: build the app package, then run the playground — the real engine with the
// packaged app, an in-memory Rocket.Chat and Hermes (the built-in demo Hermes, or the one at
// HERMES_URL with HERMES_API_KEY) — as a web page on http://127.0.0.1:3000 (`--port N` or PORT).
// `npm start -- --script` plays a short scripted conversation in the terminal instead.
import { bundleForNode } from './bundle-node.mjs';
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageApp } from './package.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const scripted = args.includes('--script');
const zip = await packageApp();
const out = join(root, 'build', scripted ? 'playground.cjs' : 'playground-web.cjs');
await bundleForNode(join(root, scripted ? 'scripts/playground.ts' : 'playground/main.ts'), out);
const child = spawn(process.execPath, [out, zip, ...args.filter((a) => a !== '--script')], { stdio: 'inherit', cwd: root });
// Ctrl-C reaches the child as well (same process group), a `kill` only us: pass either on; the
// child stops the engine and Hermes once, however many signals arrive, and then we exit with it.
for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => child.kill(signal));
}
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
