import { spawnSync } from 'child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

/**
 * src/generated/ (zod and jsonwebtoken pre-bundled, the English catalog as a module) is written
 * by `npm ci` (postinstall), `npm run generate` and `npm run package`, but `rc-apps package`
 * takes whatever is on disk. This fails when it no longer matches the installed packages,
 * i18n/en.json or scripts/generate.mjs.
 */
const ROOT = join(__dirname, '..', '..', '..');
const check = (root: string) => spawnSync(process.execPath, [join(root, 'scripts', 'generate.mjs'), '--check'], { cwd: root, encoding: 'utf8' });

describe('src/generated', () => {
    it('is what scripts/generate.mjs makes from the installed zod and jsonwebtoken and i18n/en.json (else: npm run generate)', () => {
        const run = check(ROOT);
        expect([run.status, `${run.stdout}${run.stderr}`.trim()]).toEqual([0, '[generate] src/generated is up to date']);
    }, 60_000);

    it('is reported out of date after i18n/en.json changes', () => {
        const copy = mkdtempSync(join(tmpdir(), 'hermes-generated-'));
        try {
            for (const path of ['package.json', 'scripts/generate.mjs', 'i18n', 'src/generated']) {
                cpSync(join(ROOT, path), join(copy, path), { recursive: true });
            }
            symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
            expect(check(copy).status).toBe(0);
            const catalog = JSON.parse(readFileSync(join(copy, 'i18n', 'en.json'), 'utf8'));
            writeFileSync(join(copy, 'i18n', 'en.json'), JSON.stringify({ ...catalog, added_after_generate: 'new text' }));
            const run = check(copy);
            expect([run.status, run.stderr.trim()]).toEqual([1, '[generate] out of date: src/generated/enCatalog.ts; run `npm run generate`']);
        } finally {
            rmSync(copy, { recursive: true, force: true });
        }
    }, 60_000);
});
