// `npm run deploy -- --url https://chat.example.com --username admin --password '…' [--update]`
//
// Uploads the bundled package (dist/hermes_<version>.zip, built first) through Rocket.Chat's
// REST API, the same call `rc-apps deploy` makes. The official CLI works too, on the app's files
// laid out apart: `npm run rc-apps -- deploy …` (scripts/rc-apps.mjs). Not from this folder:
// apps-cli 1.9.0 compiles every .ts file here, the test suite included, and fails.
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageApp } from './package.mjs';

const { values: flags } = parseArgs({
    options: {
        url: { type: 'string', short: 'U' },
        username: { type: 'string', short: 'u' },
        password: { type: 'string', short: 'p' },
        userid: { type: 'string', short: 'i' },
        token: { type: 'string', short: 't' },
        code: { type: 'string', short: 'c' },
        update: { type: 'boolean', default: false },
    },
});

function fail(message) {
    console.error(`deploy: ${message}`);
    process.exit(1);
}

if (!flags.url) fail('--url is required (the Rocket.Chat server, e.g. https://chat.example.com)');
if (!(flags.username && flags.password) && !(flags.userid && flags.token)) fail('give --username and --password, or --userid and --token');

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const base = flags.url.replace(/\/+$/, '');
const info = JSON.parse(readFileSync(join(root, 'app.json'), 'utf8'));
const zipPath = await packageApp();

let auth = { userId: flags.userid, token: flags.token };
if (!auth.token) {
    const login = await fetch(`${base}/api/v1/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ user: flags.username, password: flags.password, ...(flags.code ? { code: flags.code } : {}) }),
    });
    const body = await login.json().catch(() => ({}));
    if (!login.ok || body.status !== 'success') fail(`login failed (HTTP ${login.status}${body.error ? `: ${body.error}` : ''})`);
    auth = { userId: body.data.userId, token: body.data.authToken };
}

const form = new FormData();
form.append('app', new Blob([readFileSync(zipPath)], { type: 'application/zip' }), basename(zipPath));
form.append('permissions', JSON.stringify(info.permissions));
const target = flags.update ? `${base}/api/apps/${info.id}` : `${base}/api/apps`;
const upload = await fetch(target, { method: 'POST', headers: { 'X-User-Id': auth.userId, 'X-Auth-Token': auth.token }, body: form });
const result = await upload.json().catch(() => ({}));
if (!upload.ok || result.success === false) {
    fail(
        `upload failed (HTTP ${upload.status}${result.error ? `: ${result.error}` : ''})${!flags.update && upload.status === 400 ? '; already installed? add --update' : ''}`,
    );
}
console.log(
    `${flags.update ? 'Updated' : 'Installed'} ${info.name} ${info.version} on ${base}. Configure it in Administration → Apps → ${info.name} → Settings.`,
);
