// `npm run mutate:scores`: the mutation score per folder from the last `npm run mutate`
// (reports/mutation/mutation.json), as in the README's table: killed or timed out, of the
// mutants that compile (killed + timeout + survived + no coverage). `--survivors` lists the
// mutants left per folder (file:line, mutator, replacement); `--min=85` exits 1 when a folder
// scores below it.
import { readFileSync } from 'node:fs';

const REPORT = 'reports/mutation/mutation.json';

/** The README's rows, in its order: a file goes to the first whose test matches its path. */
const GROUPS = [
    ['src/admission/', (f) => f.startsWith('src/admission/')],
    ['src/context/', (f) => f.startsWith('src/context/')],
    ['src/security/', (f) => f.startsWith('src/security/')],
    ['src/delivery/', (f) => f.startsWith('src/delivery/')],
    ['src/intake/', (f) => f.startsWith('src/intake/')],
    ['src/approvals/', (f) => f.startsWith('src/approvals/')],
    ['src/follow/, src/endpoints/', (f) => f.startsWith('src/follow/') || f.startsWith('src/endpoints/')],
    ['src/feedback/', (f) => f.startsWith('src/feedback/')],
    ['src/turns/ (turn core)', (f) => f.startsWith('src/turns/') && !/\/(slots|lease)\.ts$/.test(f)],
    ['src/turns/{slots,lease}.ts', (f) => /^src\/turns\/(slots|lease)\.ts$/.test(f)],
    ['src/usage/', (f) => f.startsWith('src/usage/')],
    ['src/cron/', (f) => f.startsWith('src/cron/')],
    ['src/time/', (f) => f.startsWith('src/time/')],
    ['src/sessions/', (f) => f.startsWith('src/sessions/')],
    ['src/policy/', (f) => f.startsWith('src/policy/')],
    ['src/files/', (f) => f.startsWith('src/files/')],
    ['src/engine/entry/gate.ts', (f) => f === 'src/engine/entry/gate.ts'],
    ['src/engine/entry/missedFirst.ts', (f) => f === 'src/engine/entry/missedFirst.ts'],
];

const args = process.argv.slice(2);
const showSurvivors = args.includes('--survivors');
const minArg = args.find((a) => a.startsWith('--min='));
const min = minArg ? Number(minArg.slice('--min='.length)) : undefined;

let report;
try {
    report = JSON.parse(readFileSync(REPORT, 'utf8'));
} catch (e) {
    console.error(`No ${REPORT} (${e.code ?? e.message}): run \`npm run mutate\` first.`);
    process.exit(1);
}

const rows = new Map();
const rowOf = (file) => {
    const name = GROUPS.find(([, test]) => test(file))?.[0] ?? `${file.slice(0, file.lastIndexOf('/') + 1)}`;
    if (!rows.has(name)) {
        rows.set(name, { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, CompileError: 0, left: [] });
    }
    return rows.get(name);
};

for (const [file, { mutants }] of Object.entries(report.files)) {
    const rel = file.replace(/^.*?(?=src\/)/, '');
    const row = rowOf(rel);
    for (const m of mutants) {
        if (m.status in row) {
            row[m.status] += 1;
        }
        if (m.status === 'Survived' || m.status === 'NoCoverage') {
            row.left.push(
                `${rel}:${m.location.start.line} ${m.status} ${m.mutatorName}${m.replacement ? `: ${m.replacement.replace(/\s+/g, ' ').slice(0, 80)}` : ''}`,
            );
        }
    }
}

const order = [...GROUPS.map(([name]) => name).filter((n) => rows.has(n)), ...[...rows.keys()].filter((n) => !GROUPS.some(([g]) => g === n))];
const total = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, CompileError: 0 };
let below = false;
console.log('| Folder | Score | Mutants | Killed | Timeout | Survived | No coverage | Compile errors |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const name of order) {
    const r = rows.get(name);
    for (const k of Object.keys(total)) {
        total[k] += r[k];
    }
    const valid = r.Killed + r.Timeout + r.Survived + r.NoCoverage;
    const score = valid ? ((r.Killed + r.Timeout) / valid) * 100 : 100;
    below ||= min !== undefined && score < min;
    console.log(`| \`${name}\` | ${score.toFixed(1)} % | ${valid} | ${r.Killed} | ${r.Timeout} | ${r.Survived} | ${r.NoCoverage} | ${r.CompileError} |`);
}
const valid = total.Killed + total.Timeout + total.Survived + total.NoCoverage;
console.log(
    `| all | ${(((total.Killed + total.Timeout) / valid) * 100).toFixed(1)} % | ${valid} | ${total.Killed} | ${total.Timeout} | ${total.Survived} | ${total.NoCoverage} | ${total.CompileError} |`,
);

if (showSurvivors) {
    for (const name of order) {
        const { left } = rows.get(name);
        if (left.length) {
            console.log(`\n${name} (${left.length} left)`);
            left.forEach((line) => console.log(`  ${line}`));
        }
    }
}
if (below) {
    console.error(`\nA folder scores below ${min} %.`);
    process.exit(1);
}
