/**
 * `npm run load`: LOAD_MENTIONS mentions (default 1,000) over LOAD_ROOMS rooms (100) from
 * LOAD_USERS users (200), posted at once (or spread over LOAD_SPREAD_S seconds), Hermes taking
 * LOAD_HERMES_MS (1,000 ms) per run and allowing LOAD_HERMES_CONCURRENCY runs at once (10,
 * Hermes's default); store latency STORE_LATENCY_MS (0). Waits up to LOAD_DEADLINE_S (480 s) and
 * reports what it got: answered once, answered twice, ended in a notice, unanswered, and the wait
 * from posting to the answer. One JSON line at the end.
 */
import { cpus } from 'os';
import { StoredMessage } from '../rig';
import { kindOfStored, turnOfStored } from '../rig/marks';
import { appPid, envNumber, fmt, line, round, rssMb, startBenchRig, stats } from './common';

async function main(): Promise<void> {
    const [hermesZip] = process.argv.slice(2);
    const mentions = envNumber('LOAD_MENTIONS', 1000);
    const roomCount = envNumber('LOAD_ROOMS', 100);
    const userCount = envNumber('LOAD_USERS', 200);
    const hermesMs = envNumber('LOAD_HERMES_MS', 1000);
    const concurrency = envNumber('LOAD_HERMES_CONCURRENCY', 10);
    const spreadS = envNumber('LOAD_SPREAD_S', 0);
    const deadlineS = envNumber('LOAD_DEADLINE_S', 480);
    const latency = envNumber('STORE_LATENCY_MS', 0);
    const started = Date.now();
    const { rig, hermes } = await startBenchRig({ hermesZip, maxConcurrentRuns: concurrency, storeLatencyMs: latency });
    // Each run holds one of Hermes's slots for hermesMs: its event stream answers after that long.
    hermes.script({ method: 'GET', path: /^\/v1\/runs\/[^/]+\/events$/, delayMs: hermesMs, always: true });
    const pid = appPid(rig, rig.appId);
    const rssStart = rssMb(pid);
    console.log(
        `Load: ${mentions} mentions over ${roomCount} rooms from ${userCount} users, ${spreadS ? `spread over ${spreadS} s` : 'posted at once'}; ` +
            `Hermes ${hermesMs} ms per run, ${concurrency} runs at once; store latency ${latency} ms; ${cpus().length} cores; deadline ${deadlineS} s.`,
    );

    const users = Array.from({ length: userCount }, (_, i) => rig.user(`load-user-${i}`));
    const rooms = Array.from({ length: roomCount }, (_, i) => rig.room(`load-${i}`, [rig.bot]));
    users.forEach((u, i) => {
        rooms[i % roomCount].members.add(u.id);
        rooms[(i + 1) % roomCount].members.add(u.id);
    });
    const postedAt = new Map<string, number>();
    const answers = new Map<string, number[]>();
    const notices = new Map<string, number>();
    const noticeTexts = new Map<string, number>();
    const onMessage = (m: StoredMessage) => {
        if (m.senderId !== rig.bot.id) {
            return;
        }
        const kind = kindOfStored(m);
        const turn = turnOfStored(m);
        if (!turn || !postedAt.has(turn)) {
            return;
        }
        if (kind === 'answer') {
            answers.set(turn, [...(answers.get(turn) ?? []), Date.now()]);
        } else if (kind === 'notice' && !notices.has(turn)) {
            notices.set(turn, Date.now());
            noticeTexts.set(m.text.slice(0, 120), (noticeTexts.get(m.text.slice(0, 120)) ?? 0) + 1);
        }
    };
    rig.server.events.on('message', onMessage);

    const t0 = Date.now();
    const posts: Array<Promise<StoredMessage>> = [];
    for (let i = 0; i < mentions; i++) {
        if (spreadS > 0) {
            const due = t0 + (i * spreadS * 1000) / mentions;
            if (due > Date.now()) {
                await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
            }
        }
        // Rooms in turn, and each room's members in turn (user i posts in rooms i and i+1).
        const room = rooms[i % roomCount];
        const round_ = Math.floor(i / roomCount);
        const members = users.filter((_, u) => u % roomCount === i % roomCount || (u + 1) % roomCount === i % roomCount);
        const who = members[round_ % members.length];
        const before = Date.now();
        posts.push(
            rig.post(who, room, `@${rig.bot.username} load ${i}`).then((m) => {
                postedAt.set(m.id, before);
                return m;
            }),
        );
    }
    const posted = await Promise.all(posts);
    const postedS = (Date.now() - t0) / 1000;
    const deadline = t0 + deadlineS * 1000;
    let lastReport = Date.now();
    const done = () => posted.every((m) => answers.has(m.id) || notices.has(m.id));
    while (!done() && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (Date.now() - lastReport >= 30_000) {
            lastReport = Date.now();
            console.log(`  ${((Date.now() - t0) / 1000).toFixed(0)} s: ${answers.size} answered, ${notices.size} notices, RSS ${fmt(rssMb(pid))} MB`);
        }
    }
    const wall = (Date.now() - t0) / 1000;
    // Late duplicates: give the app a moment to post anything still on its way.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    rig.server.events.off('message', onMessage);
    const rssEnd = rssMb(pid);

    const answeredOnce = posted.filter((m) => answers.get(m.id)?.length === 1).length;
    const answeredTwice = posted.filter((m) => (answers.get(m.id)?.length ?? 0) > 1).length;
    const noticeOnly = posted.filter((m) => !answers.has(m.id) && notices.has(m.id)).length;
    const unanswered = posted.filter((m) => !answers.has(m.id) && !notices.has(m.id)).length;
    const waits = posted.filter((m) => answers.has(m.id)).map((m) => ((answers.get(m.id) as number[])[0] - (postedAt.get(m.id) as number)) / 1000);
    const runPosts = hermes.requests.filter((q) => q.method === 'POST' && q.path === '/v1/runs').length;
    const runs = hermes.runIds().length;
    const ideal = Math.max(1, mentions / concurrency) * (hermesMs / 1000);

    for (const [text, count] of noticeTexts) {
        console.log(`  notice x${count}: ${text}`);
    }
    // Why each failed turn failed, as the app logged it.
    for (const line of rig
        .logText()
        .split('\n')
        .filter((l) => l.includes('Hermes turn failed'))
        .slice(0, 5)) {
        console.log(`  log: ${line.slice(0, 300)}`);
    }
    console.log(
        `\n  posted in ${postedS.toFixed(1)} s; all ended (or deadline) after ${wall.toFixed(1)} s; ideal ${ideal.toFixed(1)} s (${mentions} runs / ${concurrency} at once x ${hermesMs} ms)`,
    );
    console.log(
        `  answered once ${answeredOnce}, answered twice or more ${answeredTwice}, ended in a notice ${noticeOnly}, unanswered ${unanswered} (of ${mentions})`,
    );
    const st = waits.length ? line('posted -> answer visible', waits, 's') : stats([]);
    console.log(`  POST /v1/runs ${runPosts} for ${runs} runs (${runPosts - runs} refused with 429)`);
    console.log(`  app process RSS ${fmt(rssStart)} -> ${fmt(rssEnd)} MB; persistence records ${rig.server.bridges.persistence.records.size}`);

    await rig.stop();
    await hermes.close();
    console.log(`\nDone in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
    console.log(
        JSON.stringify({
            mentions,
            rooms: roomCount,
            users: userCount,
            hermes_ms: hermesMs,
            hermes_concurrency: concurrency,
            store_latency_ms: latency,
            answered_once: answeredOnce,
            answered_twice: answeredTwice,
            notices: noticeOnly,
            unanswered,
            lost: noticeOnly + unanswered,
            wait_p50_s: waits.length ? round(st.p50) : null,
            wait_p95_s: waits.length ? round(st.p95) : null,
            wait_max_s: waits.length ? round(st.max) : null,
            wall_s: round(wall, 1),
            ideal_s: round(ideal, 1),
            refused_429: runPosts - runs,
            rss_start_mb: round(rssStart, 1),
            rss_end_mb: round(rssEnd, 1),
        }),
    );
    process.exit(0);
}

main().catch((error) => {
    console.error(error);
    process.exit(1);
});
