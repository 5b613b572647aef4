/**
 * The app's cost per turn against the engine's own floor, in one run of the real engine.
 * Prints each figure with its median and spread, then one JSON object on the last line.
 */
import { readFileSync } from 'fs';
import { Rig, StoredRoom, StoredUser } from '../rig';
import { startFakeHermes } from '../fake-hermes';
import { kindOfStored, turnOfStored } from '../rig/marks';

const API_KEY = 'bench-hermes-key-0123456789abcdef';
type FakeHermes = Awaited<ReturnType<typeof startFakeHermes>>;

function stats(xs: number[]) {
    const s = [...xs].sort((a, b) => a - b);
    const q = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
    return { n: s.length, p50: q(0.5), p95: q(0.95), min: s[0], max: s[s.length - 1] };
}
const fmt = (x: number) => x.toFixed(1);
const line = (label: string, xs: number[], unit = 'ms') => {
    const st = stats(xs);
    console.log(`  ${label}: median ${fmt(st.p50)} ${unit}, p95 ${fmt(st.p95)} ${unit} (min ${fmt(st.min)}, max ${fmt(st.max)}, n=${st.n})`);
    return st;
};

/** Milliseconds from posting `text` to the first request Hermes sees after it that `match`es. */
async function timeToRequest(rig: Rig, hermes: FakeHermes, who: StoredUser, room: StoredRoom, text: string, match: (path: string) => boolean): Promise<number> {
    const since = Date.now();
    const started = performance.now();
    const seen = hermes.waitForRequest((r) => match(r.path) && r.at >= since, 20_000);
    await rig.post(who, room, text);
    await seen;
    return performance.now() - started;
}

function rssMb(pid: number): number {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return kb / 1024;
}

async function main(): Promise<void> {
    const [hermesZip, floorZip] = process.argv.slice(2);
    const started = Date.now();
    const hermes = await startFakeHermes({ apiKey: API_KEY, maxConcurrentRuns: 1000 });
    hermes.setReply(() => 'ok');
    const rig = await Rig.start({
        zipPath: hermesZip,
        settings: { hermes_url: hermes.url, hermes_api_key: API_KEY, hermes_timeout_seconds: 30, progress_in_channel: 'off', shared_memory_warning: false },
    });
    await rig.install(floorZip, { url: hermes.url });
    console.log(`Benchmark: real Apps-Engine 1.62.0 + Deno, fake Hermes answering instantly, ${require('os').cpus().length} cores.`);

    const alice = rig.user('alice');
    const bob = rig.user('bob');
    const fill = (room: StoredRoom, count: number) => {
        const base = Date.now() - count * 10 - 60_000;
        for (let i = 0; i < count; i++) {
            rig.server.store.insertMessage({
                rid: room.id,
                senderId: i % 2 ? bob.id : alice.id,
                text: `history line ${i} about the release`,
                createdAt: new Date(base + i * 10),
            });
        }
    };
    const turnRequest = (path: string) => path === '/v1/runs';

    // 1. Overhead ratio: floor app vs Hermes (100-message window), alternating.
    console.log('\n1. Overhead: message posted -> outgoing HTTP request reaches Hermes');
    const floorRoom = rig.room('floor-bench', [alice]);
    const hermesRoom = rig.room('hermes-bench', [alice, bob, rig.bot]);
    fill(hermesRoom, 100);
    await rig.setting('history_max_messages', 100);
    const floor: number[] = [];
    const app: number[] = [];
    for (let i = 0; i < 60; i++) {
        floor.push(await timeToRequest(rig, hermes, alice, floorRoom, `floor ${i}`, (p) => p === '/floor'));
        const who = i % 2 ? alice : bob;
        app.push(await timeToRequest(rig, hermes, who, hermesRoom, `@${rig.bot.username} question ${i}`, turnRequest));
        await rig.settle();
        hermes.reset();
        hermes.setReply(() => 'ok');
    }
    const floorSt = line('floor app', floor.slice(10));
    const appSt = line('hermes app', app.slice(10));
    const overheadRatio = appSt.p50 / floorSt.p50;
    console.log(`  ratio hermes/floor (medians): ${overheadRatio.toFixed(2)} (target <= 1.2)`);
    // Where the time goes: one traced room mention, every bridge call and Hermes request by offset.
    rig.server.calls.reset();
    const traceStart = performance.now();
    const traceSince = Date.now();
    const traced = hermes.waitForRequest((r) => turnRequest(r.path) && r.at >= traceSince, 20_000);
    await rig.post(bob, hermesRoom, `@${rig.bot.username} traced question`);
    await traced;
    const traceEnd = performance.now();
    const hermesCalls = hermes.requests
        .filter((r) => r.at >= traceSince)
        .map((r) => ({ at: r.at - traceSince, key: `hermes:${r.method} ${r.path.replace(/rc_[0-9a-f]+_g\d+/, '<session>')}` }));
    const steps = [...rig.server.calls.timeline.filter((e) => e.at <= traceEnd).map((e) => ({ at: e.at - traceStart, key: e.key })), ...hermesCalls].sort(
        (a, b) => a.at - b.at,
    );
    console.log(`  one traced mention, ${(traceEnd - traceStart).toFixed(1)} ms to the run request:`);
    console.log(`    ${steps.map((e) => `${e.at.toFixed(1)} ${e.key}`).join('\n    ')}`);
    await rig.settle();
    hermes.reset();
    hermes.setReply(() => 'ok');

    // 2. Reads per turn, by kind.
    console.log('\n2. Bridge calls per turn (after warm-up)');
    const kinds = (snapshot: Record<string, number>) => {
        const out: Record<string, number> = { read: 0, write: 0, persistence: 0, http: 0 };
        for (const [k, v] of Object.entries(snapshot)) {
            out[k.split(':')[0]] = (out[k.split(':')[0]] ?? 0) + v;
        }
        return out;
    };
    // A whole turn: from the message to its answer posted and the app idle (the answer, the session and frontier writes included).
    const measureCalls = async (post: () => Promise<{ rid: string; id: string; tmid?: string }>) => {
        rig.server.calls.reset();
        hermes.reset();
        hermes.setReply(() => 'ok');
        const question = await post();
        const room = rig.server.store.rooms.get(question.rid) as Parameters<typeof rig.waitForBotReply>[0];
        await rig.waitForBotReply(room, { after: question as never, tmid: question.tmid, timeoutMs: 15_000 });
        await rig.settle();
        const k = kinds(rig.server.calls.snapshot());
        k.http = hermes.requests.length;
        return { kinds: k, detail: rig.server.calls.snapshot() };
    };
    const callRoom = rig.room('calls', [alice, rig.bot]);
    fill(callRoom, 50);
    await measureCalls(() => rig.post(alice, callRoom, `@${rig.bot.username} warm up`));
    const roomCalls = await measureCalls(() => rig.post(alice, callRoom, `@${rig.bot.username} room mention`));
    const root = rig.server.store.insertMessage({ rid: callRoom.id, senderId: bob.id, text: 'thread root' });
    const threadCalls = await measureCalls(() => rig.post(alice, callRoom, `@${rig.bot.username} thread mention`, { tmid: root.id }));
    // The thread frontier's cost: a quiet thread (nothing since the last turn) and one where the bot posted a notice since.
    const quietCalls = await measureCalls(() => rig.post(alice, callRoom, `@${rig.bot.username} quiet thread`, { tmid: root.id }));
    await rig.post(rig.bot, callRoom, 'a notice no turn carried', {
        tmid: root.id,
        silent: true,
        blocks: [{ type: 'section', blockId: 'hermes.notice.-', text: { type: 'mrkdwn', text: 'n' } }],
    });
    const busyCalls = await measureCalls(() => rig.post(alice, callRoom, `@${rig.bot.username} after a notice`, { tmid: root.id }));
    const dm = rig.direct([alice, rig.bot]);
    await measureCalls(() => rig.post(alice, dm, 'warm up'));
    const dmCalls = await measureCalls(() => rig.post(alice, dm, 'dm turn'));
    for (const [name, c] of [
        ['room mention', roomCalls],
        ['thread mention (first turn of the thread)', threadCalls],
        ['thread mention (quiet thread)', quietCalls],
        ['thread mention (bot notice since)', busyCalls],
        ['DM turn', dmCalls],
    ] as const) {
        console.log(`  ${name}: reads ${c.kinds.read}, writes ${c.kinds.write}, persistence ${c.kinds.persistence}, http to Hermes ${c.kinds.http}`);
        console.log(
            `    ${Object.entries(c.detail)
                .map(([k, v]) => `${k}=${v}`)
                .join(', ')}`,
        );
    }
    console.log('  (a whole turn, message to answer; target: <= 3 reads for a room mention)');

    // 3. History does not matter.
    console.log('\n3. Overhead with more history behind the window');
    await rig.setting('history_max_messages', 50);
    const perSize: Record<number, number> = {};
    for (const size of [10, 1_000, 100_000]) {
        const room = rig.room(`history-${size}`, [alice, bob, rig.bot]);
        fill(room, size);
        const xs: number[] = [];
        for (let i = 0; i < 25; i++) {
            xs.push(await timeToRequest(rig, hermes, i % 2 ? alice : bob, room, `@${rig.bot.username} h${i}`, turnRequest));
            await rig.settle();
            hermes.reset();
            hermes.setReply(() => 'ok');
        }
        perSize[size] = line(`${size} messages`, xs.slice(5)).p50;
    }
    const historyRatio = perSize[100_000] / perSize[10];
    console.log(`  ratio 100,000/10 (medians): ${historyRatio.toFixed(2)} (target <= 1.1)`);

    // 4. Parallel rooms.
    console.log('\n4. 100 mentions over 20 rooms at once, Hermes taking 200 ms per turn');
    hermes.script({ method: 'POST', path: '/v1/runs', delayMs: 200, always: true });
    const rooms = Array.from({ length: 20 }, (_, i) => rig.room(`parallel-${i}`, [rig.bot]));
    const people = Array.from({ length: 100 }, (_, i) => rig.user(`p${i}`));
    people.forEach((p, i) => rooms[i % 20].members.add(p.id));
    const t0 = performance.now();
    const posted = await Promise.all(people.map((p, i) => rig.post(p, rooms[i % 20], `@${rig.bot.username} parallel ${i}`)));
    await Promise.all(
        posted.map((m, i) =>
            rig.waitForMessage((x) => x.senderId === rig.bot.id && kindOfStored(x) === 'answer' && turnOfStored(x) === m.id, 60_000, `answer ${i}`),
        ),
    );
    const parallelWall = (performance.now() - t0) / 1000;
    await rig.settle();
    const answers = rooms.flatMap((r) => rig.botMessages(r)).filter((m) => kindOfStored(m) === 'answer');
    const once = new Set(answers.map((m) => turnOfStored(m))).size === answers.length && answers.length === 100;
    console.log(`  wall time ${parallelWall.toFixed(2)} s for 100 answers, each exactly once: ${once} (target < 2 s + one turn)`);
    hermes.reset();
    hermes.setReply(() => 'ok');

    // 5. Message to visible answer.
    console.log('\n5. Message posted -> answer visible in the room (Hermes instant)');
    const visible: number[] = [];
    const vroom = rig.room('visible', [alice, bob, rig.bot]);
    for (let i = 0; i < 60; i++) {
        const t = performance.now();
        const q = await rig.post(i % 2 ? alice : bob, vroom, `@${rig.bot.username} v${i}`);
        await rig.waitForBotReply(vroom, { after: q });
        visible.push(performance.now() - t);
        await rig.settle();
    }
    const visibleSt = line('visible answer', visible.slice(10));

    // 6. Memory of the Deno app process over 1,000 turns.
    console.log('\n6. Resident memory of the app process over 1,000 turns');
    const runtime = rig.server.manager.getOneById(rig.appId).getRuntimeController() as unknown as { deno: { pid: number } };
    const pid = runtime.deno.pid;
    const thousandTurns = async (tag: string) => {
        const marks: string[] = [];
        for (let batch = 0; batch < 50; batch++) {
            const room = rig.room(`memory-${tag}-${batch}`, [alice, bob, rig.bot]);
            await Promise.all(Array.from({ length: 20 }, (_, i) => rig.post(i % 2 ? alice : bob, room, `@${rig.bot.username} m${batch}-${i}`)));
            await rig.settle();
            if ((batch + 1) % 10 === 0) {
                marks.push(`${(batch + 1) * 20}: ${rssMb(pid).toFixed(1)}`);
            }
        }
        return marks;
    };
    const rssCold = rssMb(pid);
    const warmMarks = await thousandTurns('warm');
    const rssBefore = rssMb(pid);
    const marks = await thousandTurns('measured');
    const rssAfter = rssMb(pid);
    console.log(`  first 1,000 turns (heap sizing up): ${rssCold.toFixed(1)} -> ${rssBefore.toFixed(1)} MB; by turns: ${warmMarks.join(', ')}`);
    console.log(
        `  next 1,000 turns: before ${rssBefore.toFixed(1)} MB, after ${rssAfter.toFixed(1)} MB, growth ${(rssAfter - rssBefore).toFixed(1)} MB (target < 10 MB); by turns: ${marks.join(', ')}`,
    );

    await rig.stop();
    await hermes.close();
    console.log(`\nDone in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
    console.log(
        JSON.stringify({
            overhead_ratio: Number(overheadRatio.toFixed(3)),
            floor_p50_ms: Number(floorSt.p50.toFixed(2)),
            hermes_p50_ms: Number(appSt.p50.toFixed(2)),
            floor_p95_ms: Number(floorSt.p95.toFixed(2)),
            hermes_p95_ms: Number(appSt.p95.toFixed(2)),
            room_mention_reads: roomCalls.kinds.read,
            thread_mention_reads: threadCalls.kinds.read,
            thread_quiet_reads: quietCalls.kinds.read,
            thread_notice_reads: busyCalls.kinds.read,
            room_mention_calls: roomCalls.kinds.read + roomCalls.kinds.write + roomCalls.kinds.persistence,
            dm_reads: dmCalls.kinds.read,
            history_ratio: Number(historyRatio.toFixed(3)),
            parallel_wall_s: Number(parallelWall.toFixed(3)),
            visible_p50_ms: Number(visibleSt.p50.toFixed(2)),
            visible_p95_ms: Number(visibleSt.p95.toFixed(2)),
            rss_growth_mb: Number((rssAfter - rssBefore).toFixed(2)),
        }),
    );
}

main().catch((error) => {
    console.error(error);
    process.exit(1);
});
