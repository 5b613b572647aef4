#!/usr/bin/env node
// Makes the real Apps-Engine Deno runtimes startable offline, for end-to-end tests: 1.62.0 (the
// newest engine published with its runtime; what every test runs on by default) and 1.58.0 (the
// oldest engine app.json declares, Rocket.Chat 7.13; `HERMES_ENGINE=1.58`, npm run test:engine-1.58).
//
// Why this exists: the engine spawns `deno run ... <engine>/deno-runtime/main.ts --subprocess <id>
// --spawnId <n>` with only PATH and DENO_DIR in the child's environment, so every remote module
// must already be in DENO_DIR. The stock deno.jsonc imports jsr:@std/* (jsr.io is unreachable
// here) and its `@rocket.chat/apps-engine/` -> `../src/` mapping points at sources the npm
// package lacks. We keep the original as deno.jsonc.orig, always regenerate deno.jsonc from it
// (so re-runs never double-patch), map the unreachable/missing modules to scripts/engine-stubs/,
// and fill DENO_DIR from the npm registry with `deno cache`.
//
// The two engines spawn Deno differently (server/runtime/deno/AppsEngineDenoRuntime.js):
// - 1.62.0: `deno run --cached-only --config=<engine>/deno-runtime/deno.jsonc ... <tempFilePath>/deno-runtime/main.ts`
//   (a symlink, since Deno 2 refuses to run TypeScript inside node_modules), with `deno` 2.9.6.
// - 1.58.0: `deno run --allow-read=... --allow-env=... <engine>/deno-runtime/main.ts`: no --config,
//   no --cached-only, straight from node_modules, leaving it to Deno's own config discovery to
//   find deno-runtime/deno.jsonc (its import map). It was built for the Deno 1.x that Rocket.Chat
//   7.13 to 8.x ship (1.43.5, their release notes). Here it gets Deno 1.46.3, the only 1.x line on
//   npm, through a `deno` shim on its PATH that adds `--cached-only --config=<that deno.jsonc>` to
//   `run`: Deno 1.46 does not discover a config inside node_modules (without the shim: `Relative
//   import path "jsonrpc-lite" not prefixed`), and the cache must be the only source offline.
//   1.58's runtime also imports `https://deno.land/std@0.216.0/io/write_all.ts` by URL
//   (lib/messenger.ts, lib/metricsCollector.ts): unreachable here, mapped to the writeAll stand-in.
//   Deno 1.46.3 comes as `deno-1.46`, an optional dependency on its Linux x64 binary package
//   (@deno/linux-x64-glibc): the `deno` 1.46.3 wrapper package cannot be locked, since the
//   registry here has no 1.46.3 binaries for the other platforms (`npm ci` then fails with
//   "Missing: @deno/darwin-arm64@ from lock file"). Elsewhere 1.58 is skipped, with a message.
//
// Runs from npm `postinstall` (so a clean `npm ci` rebuilds both) and as `npm run prepare:engine`.
// The rig (rig/environment.ts) puts each engine's PATH and DENO_DIR (below) in place before it
// creates the AppManager.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NODE_MODULES = path.join(ROOT, 'node_modules');
const STUBS_DIR = path.join(ROOT, 'scripts', 'engine-stubs');

/**
 * Each engine the end-to-end tests can run on (`HERMES_ENGINE`, default 1.62). rig/environment.ts
 * mirrors `binDir` and `denoDir`. DENO_DIR is outside node_modules so the npm cache (~17 MB)
 * survives `rm -rf node_modules`; one per engine, since they use different Deno versions.
 */
export const ENGINES = {
    1.62: {
        dir: path.join(NODE_MODULES, '@rocket.chat', 'apps-engine'),
        denoPkg: path.join(NODE_MODULES, 'deno'),
        denoDir: path.join(ROOT, '.cache', 'deno'),
        /** Holds the `deno` executable the engine looks up on PATH. */
        binDir: path.join(NODE_MODULES, '.bin'),
        shim: false,
    },
    1.58: {
        dir: path.join(NODE_MODULES, '@rocket.chat', 'apps-engine-1.58'),
        /** The Linux x64 binary package of Deno 1.46.3 (optional: absent on other platforms). */
        denoPkg: path.join(NODE_MODULES, 'deno-1.46'),
        denoDir: path.join(ROOT, '.cache', 'deno-1.58'),
        /** Holds the generated `deno` shim (see above), outside node_modules. */
        binDir: path.join(ROOT, '.cache', 'engine-1.58', 'bin'),
        shim: true,
    },
};

// Import-map entries replaced by local stand-ins (the same for both engines: an entry a runtime
// does not import is never loaded). The `@rocket.chat/apps-engine/` -> `../src/` prefix itself
// must stay: lib/require.ts resolves it and strips `src/` to load the compiled definition/*.js at
// run time. Only ES value imports need a real file (Deno skips `import type`); in 1.62.0 that is
// just AppsEngineException.ts, in 1.58.0 there is none.
const STUB_IMPORTS = {
    '@std/cli': 'std-cli.ts',
    '@std/cli/parse-args': 'std-cli.ts',
    '@std/io': 'std-io.ts',
    '@std/streams': 'std-streams.ts',
    'https://deno.land/std@0.216.0/io/write_all.ts': 'std-io.ts',
    '@rocket.chat/apps-engine/definition/exceptions/AppsEngineException.ts': 'apps-engine/definition/exceptions/AppsEngineException.ts',
};

/** The env the test rig must have before creating the AppManager (the engine passes only these two on). */
export function denoEnv(engine = ENGINES['1.62'], basePath = process.env.PATH ?? '') {
    return { DENO_DIR: engine.denoDir, PATH: [engine.binDir, basePath].filter(Boolean).join(path.delimiter) };
}

const log = (msg) => console.log(`[prepare-engine] ${msg}`);

function readJsonc(file) {
    // The shipped file is plain JSON; tolerate whole-line comments and trailing commas anyway.
    const text = fs
        .readFileSync(file, 'utf8')
        .replace(/^\s*\/\/.*$/gm, '')
        .replace(/,(\s*[}\]])/g, '$1');
    return JSON.parse(text);
}

const configOf = (engine) => path.join(engine.dir, 'deno-runtime', 'deno.jsonc');

function patchConfig(engine) {
    const config = configOf(engine);
    const origConfig = `${config}.orig`;
    if (!fs.existsSync(origConfig)) {
        if (fs.readFileSync(config, 'utf8').includes('engine-stubs')) {
            throw new Error(`${config} is already patched but ${origConfig} is gone; reinstall the engine package`);
        }
        fs.copyFileSync(config, origConfig);
    }
    const orig = readJsonc(origConfig);
    const imports = { ...orig.imports };
    for (const [specifier, file] of Object.entries(STUB_IMPORTS)) {
        // Absolute URLs: import-map paths are relative to the config, which may be reached through symlinks.
        imports[specifier] = pathToFileURL(path.join(STUBS_DIR, file)).href;
    }
    const unreachable = Object.keys(imports).filter((k) => String(imports[k]).startsWith('jsr:'));
    if (unreachable.length) {
        throw new Error(`no offline stand-in for ${unreachable.join(', ')} (new engine version?) - add one to scripts/engine-stubs`);
    }
    // lock: false - the shipped deno.lock pins jsr packages we replace, and Deno must not write into node_modules.
    const text = `${JSON.stringify({ ...orig, imports, lock: false }, null, '\t')}\n`;
    if (fs.readFileSync(config, 'utf8') !== text) fs.writeFileSync(config, text);
}

/**
 * The native `deno` executable of the engine's Deno package. npm may skip dependency install
 * scripts (npm 11 allowScripts); then 2.9.6's .bin/deno is the Node wrapper bin.cjs: run the
 * package's own installer so PATH finds the native binary (the engine SIGKILLs the child, which
 * would orphan the real deno behind a wrapper). 1.46.3 is the binary package itself.
 */
function nativeDeno(engine) {
    if (engine.shim) {
        const bin = path.join(engine.denoPkg, 'deno');
        // Packed without its execute bit (the `deno` wrapper package's installer sets it, as here).
        if (fs.existsSync(bin)) fs.chmodSync(bin, fs.statSync(bin).mode | 0o111);
        return bin;
    }
    const bin = path.join(engine.binDir, 'deno');
    if (fs.realpathSync(bin).endsWith('.cjs')) {
        log('deno postinstall was skipped; linking the native binary');
        const r = spawnSync(process.execPath, [path.join(engine.denoPkg, 'install.cjs')], { stdio: 'inherit' });
        if (r.status !== 0 || fs.realpathSync(bin).endsWith('.cjs')) throw new Error('could not install the native deno binary');
    }
    return bin;
}

/** 1.58's `deno` on PATH: Deno 1.46.3, told the config and cache-only that 1.58's spawn leaves to Deno (see the header). */
function writeShim(engine, deno) {
    const shim = path.join(engine.binDir, 'deno');
    const q = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
    const text = [
        '#!/bin/sh',
        '# Generated by scripts/prepare-engine.mjs: the Deno that Apps-Engine 1.58.0 spawns in the end-to-end tests.',
        'if [ "$1" = run ]; then',
        '    shift',
        `    exec ${q(deno)} run --cached-only ${q(`--config=${configOf(engine)}`)} "$@"`,
        'fi',
        `exec ${q(deno)} "$@"`,
        '',
    ].join('\n');
    fs.mkdirSync(engine.binDir, { recursive: true });
    if (!fs.existsSync(shim) || fs.readFileSync(shim, 'utf8') !== text) fs.writeFileSync(shim, text);
    fs.chmodSync(shim, 0o755);
}

/** Starts the runtime exactly like that engine's AppsEngineDenoRuntime.spawnProcess (offline, minimal env). */
function runtimeStarts(engine) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apps-engine-check-'));
    const runtimeDir = path.join(engine.dir, 'deno-runtime');
    const nodeModules = path.dirname(path.dirname(engine.dir));
    try {
        let args;
        if (engine.shim) {
            args = ['run', `--allow-read=${engine.dir},${nodeModules}`, '--allow-env=NODE_EXTRA_CA_CERTS', path.join(runtimeDir, 'main.ts')];
        } else {
            fs.symlinkSync(runtimeDir, path.join(tmp, 'deno-runtime'), 'dir');
            args = [
                'run',
                '--cached-only',
                `--config=${configOf(engine)}`,
                `--allow-read=${[engine.dir, nodeModules, tmp].join(',')}`,
                '--allow-env=NODE_EXTRA_CA_CERTS',
                path.join(tmp, 'deno-runtime', 'main.ts'),
            ];
        }
        // The engine spawns `deno` through PATH: so does the check (the shim for 1.58).
        const r = spawnSync('deno', [...args, '--subprocess', 'prepare-engine-check', '--spawnId', '0'], {
            // stdin at EOF: the runtime announces "ready" on stdout, then exits 0 when its input closes.
            env: denoEnv(engine),
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout: 30_000,
        });
        const ok = r.status === 0 && String(r.stdout).includes('ready');
        return { ok, detail: `${r.error ?? ''}${r.stderr ?? ''}`.trim() || `exit ${r.status}` };
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

// Deno has its own npm client: hand it npm's registry, CA file and proxy (npm exports non-default
// ones as npm_config_* to lifecycle scripts; ask npm for the rest).
function npmNetworkEnv() {
    const keys = { registry: 'NPM_CONFIG_REGISTRY', cafile: 'DENO_CERT', 'https-proxy': 'HTTPS_PROXY', proxy: 'HTTP_PROXY', noproxy: 'NO_PROXY' };
    const conf = {};
    const fromEnv = (k) => process.env[`npm_config_${k.replace(/-/g, '_')}`];
    if (Object.keys(keys).some((k) => fromEnv(k) === undefined)) {
        const r = spawnSync('npm', ['config', 'get', ...Object.keys(keys)], { cwd: ROOT, encoding: 'utf8' });
        for (const line of String(r.stdout ?? '').split('\n')) {
            const m = line.match(/^([\w-]+)=(.*)$/);
            if (m) conf[m[1]] = m[2];
        }
    }
    const env = {};
    for (const [k, envName] of Object.entries(keys)) {
        const v = fromEnv(k) ?? conf[k];
        if (!v || v === 'null' || v === 'undefined' || process.env[envName]) continue;
        if (k === 'cafile' && !fs.existsSync(v)) continue;
        env[envName] = v;
    }
    return env;
}

function prepareOne(name, engine) {
    const started = Date.now();
    const runtimeDir = path.join(engine.dir, 'deno-runtime');
    if (!fs.existsSync(path.join(runtimeDir, 'main.ts'))) {
        throw new Error(`${runtimeDir}/main.ts not found: engine ${name} is not installed with its Deno runtime (npm ci)`);
    }
    const deno = nativeDeno(engine);
    if (!fs.existsSync(deno)) {
        // Only the optional Deno 1.46.3 can be missing (not linux x64); the 1.58 tests then refuse to start.
        log(`engine ${name}: skipped: ${deno} is not installed (Deno 1.46.3 is on npm for Linux x64 only)`);
        return;
    }
    patchConfig(engine);
    if (engine.shim) writeShim(engine, deno);
    fs.mkdirSync(engine.denoDir, { recursive: true });

    if (runtimeStarts(engine).ok) {
        log(`engine ${name}: Deno runtime ready offline (already cached, ${Date.now() - started} ms). DENO_DIR=${engine.denoDir}`);
        return;
    }

    log(`engine ${name}: caching the Deno runtime's npm modules into ${engine.denoDir} ...`);
    const r = spawnSync(deno, ['cache', `--config=${configOf(engine)}`, path.join(runtimeDir, 'main.ts')], {
        cwd: ROOT,
        env: { ...process.env, ...npmNetworkEnv(), ...denoEnv(engine), NO_COLOR: '1' },
        encoding: 'utf8',
    });
    if (r.status !== 0) {
        throw new Error(`engine ${name}: deno cache failed (exit ${r.status}):\n${r.error ?? ''}${r.stdout}${r.stderr}`);
    }
    const check = runtimeStarts(engine);
    if (!check.ok) {
        throw new Error(`engine ${name}: the runtime still does not start offline after caching:\n${check.detail}`);
    }
    log(`engine ${name}: Deno runtime cached and verified offline in ${Date.now() - started} ms. DENO_DIR=${engine.denoDir}`);
}

export function prepareEngine() {
    if (!fs.existsSync(ENGINES['1.62'].denoPkg)) {
        log('skipped: the `deno` dev dependency is not installed (production install?)');
        return false;
    }
    for (const [name, engine] of Object.entries(ENGINES)) {
        prepareOne(name, engine);
    }
    return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    try {
        prepareEngine();
    } catch (err) {
        console.error(`[prepare-engine] FAILED: ${err.message}`);
        process.exit(1);
    }
}
