// Builds the installable app package: dist/hermes_<version>.zip.
//
// The app is bundled with esbuild into one CommonJS file named after `classFile`, with only the
// engine's own definitions left external (the runtime provides them), and zipped with app.json,
// the icon and i18n/ exactly as the engine's package parser reads a package. One file is what the
// engine's Deno runtime runs anyway (it bundles multi-file packages itself when they arrive).
// `npm run package` writes src/generated/ first (scripts/generate.mjs); this bundles what is there.
//
// The official CLI builds an equivalent package from the same sources: `npm run rc-apps --
// package` (scripts/rc-apps.mjs; test/e2e/rcAppsPackage.test.ts installs and runs it). This
// script needs nothing but esbuild and works offline.
import { build } from 'esbuild';
import AdmZip from 'adm-zip';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_DIR } from './generate.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The engine holds an app's source as one string for as long as the app runs, and V8 stores a
 * string two bytes a character once it holds one non-ASCII character (1.5 MB instead of 0.77 MB
 * for this app). esbuild escapes strings (its default charset is ASCII) but leaves a few comments
 * and regular expressions: their characters become `\uXXXX` escapes here, which mean the same in
 * strings, regular expressions and identifiers, and nothing in comments.
 */
function asciiOnly(file) {
    const code = readFileSync(file, 'utf8');
    const escaped = code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    if (escaped !== code) {
        writeFileSync(file, escaped);
    }
}

/** Packages the app in `appDir` (default: this project) into `<project>/dist/<slug>_<version>.zip`. */
export async function packageApp({ quiet = false, appDir = root } = {}) {
    const started = Date.now();
    if (!existsSync(GENERATED_DIR)) {
        throw new Error(`${GENERATED_DIR} is missing (an install with --ignore-scripts?): run \`npm run generate\` first`);
    }
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
    asciiOnly(join(bundleDir, mainJs));
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
