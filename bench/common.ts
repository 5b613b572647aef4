/** What the bench, load and soak scripts share: the rig with both apps, statistics, call kinds, process memory. */
import { readFileSync } from 'fs';
import { Rig, StoredRoom, StoredUser } from '../rig';
import { startFakeHermes } from '../fake-hermes';

export const API_KEY = 'bench-hermes-key-0123456789abcdef';
export type FakeHermes = Awaited<ReturnType<typeof startFakeHermes>>;

export interface Stats {
    n: number;
    p50: number;
    p95: number;
    min: number;
    max: number;
}

export function stats(xs: number[]): Stats {
    const s = [...xs].sort((a, b) => a - b);
    const q = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? NaN;
    return { n: s.length, p50: q(0.5), p95: q(0.95), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}

export const fmt = (x: number, digits = 1) => x.toFixed(digits);
export const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** Prints one figure with its median and spread. */
export function line(label: string, xs: number[], unit = 'ms'): Stats {
    const st = stats(xs);
    console.log(`  ${label}: median ${fmt(st.p50)} ${unit}, p95 ${fmt(st.p95)} ${unit} (min ${fmt(st.min)}, max ${fmt(st.max)}, n=${st.n})`);
    return st;
}

/** A number from the environment, or the default. */
export function envNumber(name: string, fallback: number): number {
    const raw = process.env[name];
    const n = raw === undefined || raw === '' ? NaN : Number(raw);
    return Number.isFinite(n) ? n : fallback;
}

/** Resident memory of a process in MB (/proc/<pid>/status VmRSS). */
export function rssMb(pid: number): number {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return kb / 1024;
}

/** The pid of an app's Deno process (each app runs in its own). */
export function appPid(rig: Rig, appId: string): number {
    const runtime = rig.server.manager.getOneById(appId).getRuntimeController() as unknown as { deno: { pid: number } };
    return runtime.deno.pid;
}

/** The kinds the figures use: persistence, reads, message writes, reactions, scheduler writes, everything else. */
export interface CallKinds {
    persistence: number;
    reads: number;
    messages: number;
    /** The bot's reactions on the question (`reactions`: 👀 → ✅). */
    reactions: number;
    scheduler: number;
    other: number;
    total: number;
}

export function callKinds(snapshot: Record<string, number>): CallKinds {
    const out: CallKinds = { persistence: 0, reads: 0, messages: 0, reactions: 0, scheduler: 0, other: 0, total: 0 };
    for (const [key, n] of Object.entries(snapshot)) {
        const [kind, name] = key.split(':');
        const bucket: keyof CallKinds =
            kind === 'persistence'
                ? 'persistence'
                : kind === 'read'
                  ? 'reads'
                  : /^message\.(add|remove)Reaction$/.test(name)
                    ? 'reactions'
                    : name.startsWith('message.')
                      ? 'messages'
                      : name.startsWith('scheduler.')
                        ? 'scheduler'
                        : 'other';
        out[bucket] += n;
        out.total += n;
    }
    return out;
}

export const kindsText = (k: CallKinds) =>
    `${k.total} (persistence ${k.persistence}, reads ${k.reads}, messages ${k.messages}, reactions ${k.reactions}, scheduler ${k.scheduler}, other ${k.other})`;

export interface BenchRig {
    rig: Rig;
    hermes: FakeHermes;
    floorId?: string;
    floorBot?: StoredUser;
}

/**
 * The packaged app in the real engine on the in-memory server, against a fake Hermes, and the
 * floor app beside it when given (answering through the same Hermes).
 */
export async function startBenchRig(opts: {
    hermesZip: string;
    floorZip?: string;
    maxConcurrentRuns: number;
    storeLatencyMs?: number;
    settings?: Record<string, unknown>;
}): Promise<BenchRig> {
    const hermes = await startFakeHermes({ apiKey: API_KEY, maxConcurrentRuns: opts.maxConcurrentRuns });
    hermes.setReply(() => 'ok');
    const rig = await Rig.start({
        zipPath: opts.hermesZip,
        storeLatencyMs: opts.storeLatencyMs,
        settings: {
            hermes_url: hermes.url,
            hermes_api_key: API_KEY,
            hermes_timeout_seconds: 30,
            progress_in_channel: 'off',
            shared_memory_warning: false,
            // The figures count one answer per question (the turn path's cost): no follow-up merged.
            busy_input_mode: 'queue',
            ...opts.settings,
        },
    });
    if (!opts.floorZip) {
        return { rig, hermes };
    }
    const floor = await rig.install(opts.floorZip, { url: hermes.url, key: API_KEY });
    const floorId = floor.getID();
    const floorBot = [...rig.server.store.users.values()].find((u) => u.type === 'app' && u.appId === floorId);
    return { rig, hermes, floorId, floorBot };
}

/** Lays `count` messages of history into a room, without events. */
export function fill(rig: Rig, room: StoredRoom, count: number, people: StoredUser[]): void {
    const base = Date.now() - count * 10 - 60_000;
    for (let i = 0; i < count; i++) {
        rig.server.store.insertMessage({
            rid: room.id,
            senderId: people[i % people.length].id,
            text: `history line ${i} about the release`,
            createdAt: new Date(base + i * 10),
        });
    }
}

/**
 * Every bridge call of the app and every Hermes request between two moments (epoch ms), by
 * offset from `from`, in order: where a turn's time goes. `detail`: with what each call touched
 * (a persistence record's associations), shortened.
 */
export function traceOf(rig: Rig, hermes: FakeHermes, from: number, to: number, detail = false): Array<{ at: number; key: string }> {
    const origin = performance.timeOrigin;
    const calls = rig.server.calls.timeline
        .filter((e) => e.app === rig.appId && origin + e.at >= from && origin + e.at <= to)
        .map((e) => ({ at: origin + e.at - from, key: detail ? `${e.key} ${e.detail ?? ''}`.replace(/misc:hermes-/g, '').slice(0, 110) : e.key }));
    const requests = hermes.requests
        .filter((q) => q.at >= from && q.at <= to)
        .map((q) => ({ at: q.at - from, key: `hermes:${q.method} ${q.path.replace(/rc_[0-9a-f]+_g\d+/, '<session>').replace(/run_[0-9a-f]+/, '<run>')}` }));
    return [...calls, ...requests].sort((a, b) => a.at - b.at);
}
