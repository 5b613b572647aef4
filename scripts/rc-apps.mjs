// `npm run rc-apps -- package` / `npm run rc-apps -- deploy --url … --username … --password …`
//
// Runs the official Apps CLI (`rc-apps`, @rocket.chat/apps-cli) on the app alone: the files
// `.rcappsconfig` does not ignore (app.json, icon.png, HermesApp.ts, src/, i18n/), copied into
// build/rc-app/ with package.json and a link to node_modules.
//
// Why not in this folder: apps-cli 1.9.0 (apps-compiler 0.1.7, the newest on npm here) compiles
// every .ts file under the folder (only node_modules/, .git and top-level dot folders are
// skipped; `.rcappsconfig` is read by `rc-apps watch` only) and zips the output. Here that is
// the test suite, the bench and the tools; the tests import Node modules its resolver refuses
// (`http`, `os`), folder indexes and JSON, so `rc-apps package` stops with "There must be an
// exported class \"HermesApp\"". Newer compilers honour `.rcappsconfig` `ignoredFiles`.
//
// The app itself packages with rc-apps unchanged: npm dependencies come from src/generated/
// (scripts/generate.mjs) and the i18n catalog is a module. test/e2e/rcAppsPackage.test.ts runs
// this and installs the zip rc-apps writes in the real engine.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A `**`/`*` glob (the forms `.rcappsconfig` uses) as a RegExp over `/`-separated relative paths. */
function globToRegExp(glob) {
    let re = '';
    for (let i = 0; i < glob.length; i++) {
        const c = glob[i];
        if (c === '*' && glob[i + 1] === '*') {
            const slash = glob[i + 2] === '/';
            re += slash ? '(?:.*/)?' : '.*';
            i += slash ? 2 : 1;
        } else if (c === '*') {
            re += '[^/]*';
        } else if (c === '?') {
            re += '[^/]';
        } else {
            re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
        }
    }
    return new RegExp(`^${re}$`);
}

/** The files of `root` that are the app: not under a dot or node_modules folder and not ignored by `.rcappsconfig`. */
export function appFiles(root = ROOT) {
    const { ignoredFiles = [] } = JSON.parse(readFileSync(join(root, '.rcappsconfig'), 'utf8'));
    const ignored = ignoredFiles.map(globToRegExp);
    const out = [];
    const walk = (rel) => {
        for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
            const path = rel ? `${rel}/${entry.name}` : entry.name;
            if (entry.name.startsWith('.') || entry.name === 'node_modules') {
                continue;
            }
            if (entry.isDirectory()) {
                // A folder is skipped when everything in it would be (`**/test/**`).
                if (!ignored.some((re) => re.test(`${path}/x`) && re.test(`${path}/x/y`))) {
                    walk(path);
                }
            } else if (entry.isFile() && !ignored.some((re) => re.test(path))) {
                out.push(path);
            }
        }
    };
    walk('');
    return out.sort();
}

/** Lays the app out in `dest` (emptied first) the way rc-apps wants it; returns `dest`. */
export function stageApp(dest = join(ROOT, 'build', 'rc-app'), root = ROOT) {
    rmSync(dest, { recursive: true, force: true });
    for (const rel of [...appFiles(root), 'package.json', '.rcappsconfig']) {
        mkdirSync(dirname(join(dest, rel)), { recursive: true });
        copyFileSync(join(root, rel), join(dest, rel));
    }
    // rc-apps loads TypeScript and the engine's definitions from the app folder's node_modules.
    symlinkSync(join(root, 'node_modules'), join(dest, 'node_modules'), 'dir');
    return dest;
}

/** Runs the project's own `rc-apps` in `cwd`. */
function runRcApps(args, cwd) {
    const bin = join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'rc-apps.cmd' : 'rc-apps');
    return spawnSync(bin, args, { cwd, stdio: 'inherit' });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    const args = process.argv.slice(2);
    // `--stage=<dir>`: lay the app out there instead of build/rc-app (the tests use a temporary folder).
    const stageArg = args[0]?.startsWith('--stage=') ? args.shift().slice('--stage='.length) : undefined;
    if (!['package', 'p', 'pack', 'deploy'].includes(args[0] ?? '')) {
        console.error('usage: npm run rc-apps -- package | deploy --url <server> (--username <u> --password <p> | --userid <id> --token <t>) [--update]');
        process.exit(2);
    }
    const stage = stageApp(stageArg ? resolve(stageArg) : undefined);
    console.log(`[rc-apps] the app's files are in ${stage}; running rc-apps ${args[0]} there`);
    const run = runRcApps(args, stage);
    const built = join(stage, 'dist');
    if (run.status === 0 && !stageArg && existsSync(built)) {
        mkdirSync(join(ROOT, 'dist', 'rc-apps'), { recursive: true });
        for (const name of readdirSync(built).filter((n) => n.endsWith('.zip'))) {
            copyFileSync(join(built, name), join(ROOT, 'dist', 'rc-apps', name));
            console.log(`[rc-apps] package: ${join(ROOT, 'dist', 'rc-apps', name)}`);
        }
    }
    process.exit(run.status ?? 1);
}
