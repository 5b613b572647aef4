// One way to run a TypeScript entry of this repository under Node: bundled by esbuild into
// one CommonJS file, npm packages left external (they are installed). Used by `npm start`,
// the bench, load and soak scripts.
import { build } from 'esbuild';

export async function bundleForNode(entry, outfile) {
    await build({
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        packages: 'external',
        logLevel: 'warning',
    });
    return outfile;
}
