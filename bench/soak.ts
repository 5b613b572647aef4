/**
 * `npm run soak`: SOAK_TURNS room mentions in batches of SOAK_BATCH (20, one mention in each of
 * 20 rooms at once; the next batch once all are answered), over SOAK_ROOMS rooms (100) in turn,
 * Hermes instant, store latency STORE_LATENCY_MS (0). Reports the app process's RSS after
 * SOAK_WARMUP turns (1,000) and at the end (its growth after warm-up), under load and after
 * SOAK_IDLE_S (30) idle seconds each, the floor app's RSS beside it (idle), and the app's
 * persistence records at the end (the rig's store). One JSON line at the end. The default is
 * 5,000 turns; 10,000 (SOAK_TURNS=10000) take about two minutes and a half on 2 cores.
 */
import { cpus } from 'os';
import { StoredMessage } from '../rig';
import { kindOfStored, turnOfStored } from '../rig/marks';
import { appPid, envNumber, fmt, round, rssMb, startBenchRig } from './common';

async function main(): Promise<void> {
    const [hermesZip, floorZip] = process.argv.slice(2);
    const turns = envNumber('SOAK_TURNS', 5000);
    const warmUp = Math.min(turns, envNumber('SOAK_WARMUP', 1000));
    const batch = envNumber('SOAK_BATCH', 20);
    const roomCount = envNumber('SOAK_ROOMS', 100);
    const latency = envNumber('STORE_LATENCY_MS', 0);
    const idleS = envNumber('SOAK_IDLE_S', 30);
    const started = Date.now();
    const { rig, hermes, floorId } = await startBenchRig({ hermesZip, floorZip, maxConcurrentRuns: 1000, storeLatencyMs: latency });
    const pid = appPid(rig, rig.appId);
    const floorPid = floorId ? appPid(rig, floorId) : undefined;
    const records = () => [...rig.server.bridges.persistence.records.values()].filter((r) => r.appId === rig.appId).length;
    /** The app's records by what they are: the first association's name up to its first `:` (e.g. `hermes-receipt`). */
    const recordKinds = () => {
        const kinds: Record<string, number> = {};
        for (const r of rig.server.bridges.persistence.records.values()) {
            if (r.appId === rig.appId) {
                const kind = (r.associations[0]?.getID() ?? '?').split(':')[0];
                kinds[kind] = (kinds[kind] ?? 0) + 1;
            }
        }
        return kinds;
    };
    const rss = () => ({ app: rssMb(pid), floor: floorPid ? rssMb(floorPid) : NaN });
    /**
     * The app's RSS once the process has been idle SOAK_IDLE_S seconds: V8 collects lazily while
     * turns come, and sizes its heap by how fast they come (a soak twice as fast grows twice as
     * much under load, over the same turns), then collects and gives pages back when the process
     * goes quiet (its memory reducer, 9 to 21 s after the last turn here). Retained memory (a
     * leak) stays; what the pace left lying about does not. The lowest of one sample a second.
     */
    const settledRss = async () => {
        await rig.settle();
        let low = rssMb(pid);
        for (let s = 0; s < idleS; s++) {
            await new Promise((resolve) => setTimeout(resolve, 1000));
            low = Math.min(low, rssMb(pid));
        }
        return low;
    };
    const rssStart = rss();
    console.log(
        `Soak: ${turns} room mentions, ${batch} at once over ${roomCount} rooms, Hermes instant, store latency ${latency} ms, ${cpus().length} cores; ` +
            `RSS at start: app ${fmt(rssStart.app)} MB, floor app ${fmt(rssStart.floor)} MB (idle).`,
    );

    const people = Array.from({ length: 10 }, (_, i) => rig.user(`soak-${i}`));
    const rooms = Array.from({ length: roomCount }, (_, i) => rig.room(`soak-${i}`, [...people, rig.bot]));
    let answers = 0;
    let notices = 0;
    const ended = new Set<string>();
    const onMessage = (m: StoredMessage) => {
        if (m.senderId === rig.bot.id) {
            const kind = kindOfStored(m);
            answers += kind === 'answer' ? 1 : 0;
            notices += kind === 'notice' ? 1 : 0;
            const turn = kind === 'answer' || kind === 'notice' ? turnOfStored(m) : undefined;
            if (turn) {
                ended.add(turn);
            }
        }
    };
    rig.server.events.on('message', onMessage);
    let rssWarm = rssStart;
    let settledWarm = NaN;
    let recordsWarm = 0;
    let warmAt = Date.now();
    let peak = rssStart.app;
    const marks: string[] = [];
    let done = 0;
    const t0 = Date.now();
    while (done < turns) {
        const n = Math.min(batch, turns - done);
        const posted = await Promise.all(
            Array.from({ length: n }, (_, i) => {
                const k = done + i;
                return rig.post(people[k % people.length], rooms[k % roomCount], `@${rig.bot.username} soak ${k}`);
            }),
        );
        // The next batch goes as soon as this one is answered: the turns' last jobs run on meanwhile, as on a server.
        const deadline = Date.now() + 60_000;
        while (posted.some((m) => !ended.has(m.id)) && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 2));
        }
        posted.forEach((m) => ended.delete(m.id));
        const before = done;
        done += n;
        const now = rss();
        peak = Math.max(peak, now.app);
        if (before < warmUp && done >= warmUp) {
            rssWarm = now;
            recordsWarm = records();
            settledWarm = await settledRss();
            console.log(`  after ${done} warm-up turns: app RSS ${fmt(now.app)} MB, ${fmt(settledWarm)} MB after ${idleS} s idle`);
            warmAt = Date.now();
        }
        if (Math.floor(done / 1000) > Math.floor(before / 1000)) {
            marks.push(`${done}: ${fmt(now.app)}`);
            console.log(
                `  ${done} turns, ${((Date.now() - t0) / 1000).toFixed(0)} s: app RSS ${fmt(now.app)} MB, floor ${fmt(now.floor)} MB, records ${records()}, answers ${answers}, notices ${notices}`,
            );
        }
    }
    await rig.settle();
    const seconds = (Date.now() - t0) / 1000;
    rig.server.events.off('message', onMessage);
    const rssEnd = rss();
    const recordsEnd = records();
    const growth = rssEnd.app - rssWarm.app;
    const settledEnd = await settledRss();
    const settledGrowth = settledEnd - settledWarm;
    const measuredTurns = turns - warmUp;
    console.log(`\n  ${turns} turns in ${seconds.toFixed(0)} s (${(turns / seconds).toFixed(0)} per s); ${answers} answers, ${notices} notices`);
    console.log(
        `  app RSS: start ${fmt(rssStart.app)} MB, after ${warmUp} warm-up turns ${fmt(rssWarm.app)} MB, end ${fmt(rssEnd.app)} MB, peak ${fmt(peak)} MB; ` +
            `growth after warm-up ${fmt(growth)} MB over ${measuredTurns} turns (${measuredTurns ? fmt((growth * 1024) / measuredTurns, 2) : '-'} KB per turn)`,
    );
    console.log(
        `  app RSS after ${idleS} s idle: after warm-up ${fmt(settledWarm)} MB, at the end ${fmt(settledEnd)} MB; growth ${fmt(settledGrowth)} MB over ${measuredTurns} turns (target < 10 MB)`,
    );
    console.log(`  floor app RSS (idle): ${fmt(rssStart.floor)} -> ${fmt(rssEnd.floor)} MB`);
    console.log(
        `  the app's persistence records: ${recordsWarm} after warm-up, ${recordsEnd} at the end; ${((Date.now() - warmAt) / 1000).toFixed(0)} s after warm-up`,
    );
    const kinds = recordKinds();
    console.log(
        `  by kind at the end: ${Object.entries(kinds)
            .map(([k, v]) => `${k} ${v}`)
            .join(
                ', ',
            )} (hermes-receipt: one usage row per finished turn, which is also its receipt, kept 35 days and removed by day; command receipts 2 days; the rest ends with its turn or its day)`,
    );

    await rig.stop();
    await hermes.close();
    console.log(`\nDone in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
    console.log(
        JSON.stringify({
            turns,
            warm_up_turns: warmUp,
            store_latency_ms: latency,
            seconds: round(seconds, 1),
            answers,
            notices,
            rss_app_start_mb: round(rssStart.app, 1),
            rss_app_warm_mb: round(rssWarm.app, 1),
            rss_app_end_mb: round(rssEnd.app, 1),
            rss_app_peak_mb: round(peak, 1),
            rss_growth_after_warmup_mb: round(growth),
            rss_app_warm_idle_mb: round(settledWarm, 1),
            rss_app_end_idle_mb: round(settledEnd, 1),
            rss_growth_idle_mb: round(settledGrowth),
            rss_floor_start_mb: round(rssStart.floor, 1),
            rss_floor_end_mb: round(rssEnd.floor, 1),
            persistence_records_after_warmup: recordsWarm,
            persistence_records_end: recordsEnd,
            persistence_records_end_by_kind: kinds,
        }),
    );
    process.exit(0);
}

main().catch((error) => {
    console.error(error);
    process.exit(1);
});
