#!/usr/bin/env node
// Makes the real Apps-Engine 1.62.0 Deno runtime startable offline, for end-to-end tests.
//
// Why this exists: the engine spawns
//   deno run --cached-only --config=<engine>/deno-runtime/deno.jsonc ... main.ts --subprocess <id> --spawnId <n>
// with only PATH and DENO_DIR in the child's environment, so every remote module must already
// be in DENO_DIR. The stock deno.jsonc imports jsr:@std/* (jsr.io is unreachable here) and its
// `@rocket.chat/apps-engine/` -> `../src/` mapping points at sources the npm package lacks.
// We keep the original as deno.jsonc.orig, always regenerate deno.jsonc from it (so re-runs
// never double-patch), map the unreachable/missing modules to scripts/engine-stubs/, and fill
// DENO_DIR from the npm registry with `deno cache`.
//
// Runs from npm `postinstall` (so a clean `npm ci` rebuilds it) and as `npm run prepare:engine`.
// Test rig (before creating the AppManager):
//   import { applyDenoEnv } from '../scripts/prepare-engine.mjs'; applyDenoEnv();
// or set the same by hand: DENO_DIR=<project>/.cache/deno, PATH=<project>/node_modules/.bin:$PATH
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ENGINE_DIR = path.join(ROOT, 'node_modules', '@rocket.chat', 'apps-engine');
/** Outside node_modules so the npm cache (~17 MB) survives `rm -rf node_modules`. */
export const DENO_DIR = path.join(ROOT, '.cache', 'deno');
/** Holds the `deno` executable the engine looks up on PATH. */
export const DENO_BIN_DIR = path.join(ROOT, 'node_modules', '.bin');

const RUNTIME_DIR = path.join(ENGINE_DIR, 'deno-runtime');
const CONFIG = path.join(RUNTIME_DIR, 'deno.jsonc');
const ORIG_CONFIG = `${CONFIG}.orig`;
const STUBS_DIR = path.join(ROOT, 'scripts', 'engine-stubs');
const DENO_PKG = path.join(ROOT, 'node_modules', 'deno');

// Import-map entries replaced by local stand-ins. The `@rocket.chat/apps-engine/` -> `../src/`
// prefix itself must stay: lib/require.ts resolves it and strips `src/` to load the compiled
// definition/*.js at run time. Only ES value imports need a real file (Deno skips `import type`);
// in 1.62.0 that is just AppsEngineException.ts.
const STUB_IMPORTS = {
    '@std/cli': 'std-cli.ts',
    '@std/cli/parse-args': 'std-cli.ts',
    '@std/io': 'std-io.ts',
    '@std/streams': 'std-streams.ts',
    '@rocket.chat/apps-engine/definition/exceptions/AppsEngineException.ts': 'apps-engine/definition/exceptions/AppsEngineException.ts',
};

/** The env the test rig must have before creating the AppManager (the engine passes only these two on). */
export function denoEnv(basePath = process.env.PATH ?? '') {
    return { DENO_DIR, PATH: [DENO_BIN_DIR, basePath].filter(Boolean).join(path.delimiter) };
}

export function applyDenoEnv() {
    Object.assign(process.env, denoEnv());
    return process.env;
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

function patchConfig() {
    if (!fs.existsSync(ORIG_CONFIG)) {
        if (fs.readFileSync(CONFIG, 'utf8').includes('engine-stubs')) {
            throw new Error(`${CONFIG} is already patched but ${ORIG_CONFIG} is gone; reinstall @rocket.chat/apps-engine`);
        }
        fs.copyFileSync(CONFIG, ORIG_CONFIG);
    }
    const orig = readJsonc(ORIG_CONFIG);
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
    if (fs.readFileSync(CONFIG, 'utf8') !== text) fs.writeFileSync(CONFIG, text);
}

// npm may skip dependency install scripts (npm 11 allowScripts); then .bin/deno is the Node
// wrapper bin.cjs. Run the deno package's own installer so PATH finds the native binary:
// the engine SIGKILLs the child, which would orphan the real deno behind a wrapper.
function ensureNativeDeno() {
    const bin = path.join(DENO_BIN_DIR, 'deno');
    if (fs.realpathSync(bin).endsWith('.cjs')) {
        log('deno postinstall was skipped; linking the native binary');
        const r = spawnSync(process.execPath, [path.join(DENO_PKG, 'install.cjs')], { stdio: 'inherit' });
        if (r.status !== 0 || fs.realpathSync(bin).endsWith('.cjs')) throw new Error('could not install the native deno binary');
    }
}

/** Starts the runtime exactly like AppsEngineDenoRuntime.spawnProcess (offline, symlinked entry, minimal env). */
function runtimeStarts() {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apps-engine-check-'));
    try {
        fs.symlinkSync(RUNTIME_DIR, path.join(tmp, 'deno-runtime'), 'dir');
        const r = spawnSync(
            'deno',
            [
                'run',
                '--cached-only',
                `--config=${CONFIG}`,
                `--allow-read=${[ENGINE_DIR, path.dirname(path.dirname(ENGINE_DIR)), tmp].join(',')}`,
                '--allow-env=NODE_EXTRA_CA_CERTS',
                path.join(tmp, 'deno-runtime', 'main.ts'),
                '--subprocess',
                'prepare-engine-check',
                '--spawnId',
                '0',
            ],
            // stdin at EOF: the runtime announces "ready" on stdout, then exits 0 when its input closes.
            { env: denoEnv(), stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
        );
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

export function prepareEngine() {
    const started = Date.now();
    if (!fs.existsSync(DENO_PKG)) {
        log('skipped: the `deno` dev dependency is not installed (production install?)');
        return false;
    }
    if (!fs.existsSync(path.join(RUNTIME_DIR, 'main.ts'))) {
        throw new Error(`${RUNTIME_DIR}/main.ts not found: this engine version does not ship the Deno runtime (use 1.62.0)`);
    }
    ensureNativeDeno();
    patchConfig();
    fs.mkdirSync(DENO_DIR, { recursive: true });

    if (runtimeStarts().ok) {
        log(`Deno runtime ready offline (already cached, ${Date.now() - started} ms). DENO_DIR=${DENO_DIR}`);
        return true;
    }

    log(`caching the Deno runtime's npm modules into ${DENO_DIR} ...`);
    const r = spawnSync('deno', ['cache', `--config=${CONFIG}`, path.join(RUNTIME_DIR, 'main.ts')], {
        cwd: ROOT,
        env: { ...process.env, ...npmNetworkEnv(), ...denoEnv(), NO_COLOR: '1' },
        encoding: 'utf8',
    });
    if (r.status !== 0) {
        throw new Error(`deno cache failed (exit ${r.status}):\n${r.error ?? ''}${r.stdout}${r.stderr}`);
    }
    const check = runtimeStarts();
    if (!check.ok) {
        throw new Error(`the runtime still does not start offline after caching:\n${check.detail}`);
    }
    log(`Deno runtime cached and verified offline in ${Date.now() - started} ms. DENO_DIR=${DENO_DIR}`);
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
