import { existsSync } from 'fs';
import { delimiter, dirname, join } from 'path';
// Whichever engine package the rig's imports resolve to (jest.config.js maps them for 1.58).
import { version as loadedEngine } from '@rocket.chat/apps-engine/package.json';

/** The project folder, found from this file whether it runs from test/ (jest) or a bundle in build/. */
const PROJECT_ROOT = ((): string => {
    let dir = __dirname;
    while (!existsSync(join(dir, 'app.json')) && dirname(dir) !== dir) {
        dir = dirname(dir);
    }
    return dir;
})();

/**
 * The engine the rig runs: `HERMES_ENGINE=1.58` for Apps-Engine 1.58.0 (Rocket.Chat 7.13, the
 * oldest app.json declares; jest.config.js maps the engine's imports to that package), else
 * 1.62.0. Anything else is refused rather than silently running the default.
 */
function engineVersion(): '1.58' | '1.62' {
    const wanted = process.env.HERMES_ENGINE || '1.62';
    if (wanted !== '1.58' && wanted !== '1.62') {
        throw new Error(`HERMES_ENGINE=${wanted}: the rig runs engine 1.62 (default) or 1.58`);
    }
    return wanted;
}

/**
 * Whether the app log keeps every line the app writes. Not on 1.58: its Deno runtime keeps one
 * logger for all calls (deno-runtime/main.ts requestRouter sets a new one in AppObjectRegistry
 * for each request, and lib/messenger.ts sends the registry's current one with a response), so a
 * line written by a call while another call of the app has begun is never sent. 1.60 and later
 * keep one logger per call.
 */
export function engineKeepsEveryLogLine(): boolean {
    return engineVersion() !== '1.58';
}

/**
 * Whether the engine lets apps react to messages: engines 1.58.x and 1.59.0 declare the message
 * updater but never create it (server/accessors/ModifyUpdater.js), so every addReaction fails.
 */
export function engineReacts(): boolean {
    return engineVersion() !== '1.58';
}

/**
 * What the engine's Deno child needs: `deno` on PATH and the cache that `npm ci` filled through
 * scripts/prepare-engine.mjs (the child runs with --cached-only). The same folders as that
 * script's ENGINES: for 1.62 the npm `deno` 2.9.6 in node_modules/.bin; for 1.58 the generated
 * shim that runs Deno 1.46.3, first on PATH, ahead of node_modules/.bin (which `npm run` puts first).
 */
export function engineEnvironment(): { PATH: string; DENO_DIR: string } {
    const wanted = engineVersion();
    if (!loadedEngine.startsWith(`${wanted}.`)) {
        throw new Error(`HERMES_ENGINE=${wanted} but the rig loaded Apps-Engine ${loadedEngine} (run it through jest.config.js)`);
    }
    const v158 = wanted === '1.58';
    const bin = v158 ? join(PROJECT_ROOT, '.cache', 'engine-1.58', 'bin') : join(PROJECT_ROOT, 'node_modules', '.bin');
    if (v158 && !existsSync(join(bin, 'deno'))) {
        throw new Error(`engine 1.58 is not prepared: no ${join(bin, 'deno')} (npm ci on Linux x64 runs scripts/prepare-engine.mjs)`);
    }
    const path = process.env.PATH ?? '';
    const parts = path.split(delimiter);
    const present = v158 ? parts[0] === bin : parts.includes(bin);
    return {
        PATH: present ? path : `${bin}${delimiter}${path}`,
        // Always the project's cache: a DENO_DIR from the shell would point the child at an empty one.
        DENO_DIR: join(PROJECT_ROOT, '.cache', v158 ? 'deno-1.58' : 'deno'),
    };
}
