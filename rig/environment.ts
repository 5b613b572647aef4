import { existsSync } from 'fs';
import { delimiter, dirname, join } from 'path';

/** The project folder, found from this file whether it runs from test/ (jest) or a bundle in build/. */
const PROJECT_ROOT = ((): string => {
    let dir = __dirname;
    while (!existsSync(join(dir, 'app.json')) && dirname(dir) !== dir) {
        dir = dirname(dir);
    }
    return dir;
})();

/**
 * What the engine's Deno child needs: `deno` on PATH (from the npm package) and the cache
 * that `npm ci` filled through scripts/prepare-engine.mjs (the child runs with --cached-only).
 */
export function engineEnvironment(): { PATH: string; DENO_DIR: string } {
    const bin = join(PROJECT_ROOT, 'node_modules', '.bin');
    const path = process.env.PATH ?? '';
    return {
        PATH: path.split(delimiter).includes(bin) ? path : `${bin}${delimiter}${path}`,
        // Always the project's cache: a DENO_DIR from the shell would point the child at an empty one.
        DENO_DIR: join(PROJECT_ROOT, '.cache', 'deno'),
    };
}
