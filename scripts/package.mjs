// Builds the installable app package: dist/hermes_<version>.zip.
//
// Why not `rc-apps package`: the packager on the npm registry (apps-cli 1.9.0 /
// apps-compiler 0.1.7) compiles only the app's own files and leaves `require('zod')` and
// friends external, and the engine's sandbox then refuses them ("Module zod is not allowed").
// So the app is bundled with esbuild into one CommonJS file named after `classFile`, with only
// the engine's own definitions left external (the runtime provides them), and zipped with
// app.json, the icon and i18n/ exactly as the engine's package parser reads a package.
import { build } from 'esbuild';
import AdmZip from 'adm-zip';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Packages the app in `appDir` (default: this project) into `<project>/dist/<slug>_<version>.zip`. */
export async function packageApp({ quiet = false, appDir = root } = {}) {
    const started = Date.now();
    const info = JSON.parse(readFileSync(join(appDir, 'app.json'), 'utf8'));
    const mainJs = info.classFile.replace(/\.ts$/, '.js');
    const bundleDir = join(root, 'build', info.nameSlug);
    mkdirSync(bundleDir, { recursive: true });
    await build({
        entryPoints: [join(appDir, info.classFile)],
        outfile: join(bundleDir, mainJs),
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'es2020',
        external: ['@rocket.chat/apps-engine/*'],
        logLevel: 'warning',
        legalComments: 'none',
    });
    const zip = new AdmZip();
    zip.addFile('app.json', readFileSync(join(appDir, 'app.json')));
    zip.addFile(mainJs, readFileSync(join(bundleDir, mainJs)));
    zip.addFile(info.iconFile, readFileSync(join(appDir, info.iconFile)));
    const i18n = join(appDir, 'i18n');
    for (const name of existsSync(i18n) ? readdirSync(i18n) : []) {
        if (name.endsWith('.json') && statSync(join(i18n, name)).isFile()) {
            zip.addFile(`i18n/${name}`, readFileSync(join(i18n, name)));
        }
    }
    mkdirSync(join(root, 'dist'), { recursive: true });
    const out = join(root, 'dist', `${info.nameSlug}_${info.version}.zip`);
    zip.writeZip(out);
    if (!quiet) {
        console.log(`Packaged ${info.name} ${info.version} -> ${out} (${statSync(out).size} bytes, ${Date.now() - started} ms)`);
    }
    return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
    packageApp().catch((error) => {
        console.error(error);
        process.exit(1);
    });
}
