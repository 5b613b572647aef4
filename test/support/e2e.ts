import { Rig } from '../../rig';
import { RigCluster } from '../../rig/cluster';
import { engineKeepsEveryLogLine } from '../../rig/environment';
import { FakeHermesOptions, startFakeHermes } from '../../fake-hermes';

export const API_KEY = 'hermes-test-key-0123456789abcdef';

export type FakeHermes = Awaited<ReturnType<typeof startFakeHermes>>;

/**
 * One fake Hermes and one real engine with the packaged app for a whole test file (the engine
 * allows one AppManager per process, and starting it once keeps the suite fast).
 */
/** Secrets every e2e file's app log is scanned for when the file ends (tests may add their own). */
export const SECRETS_IN_TESTS = new Set<string>([API_KEY, 'Bearer ']);

/** `zipPath`: the package to install instead of HERMES_APP_ZIP (read when the rig starts, after earlier `beforeAll`s). */
export function useRigAndHermes(
    settings: Record<string, unknown> = {},
    opts: { zipPath?: () => string; hermes?: Omit<FakeHermesOptions, 'apiKey'> } = {},
): { hermes: () => FakeHermes; rig: () => Rig } {
    let hermes: FakeHermes;
    let rig: Rig;
    beforeAll(async () => {
        hermes = await startFakeHermes({ ...opts.hermes, apiKey: API_KEY });
        rig = await Rig.start({
            zipPath: opts.zipPath?.() ?? (process.env.HERMES_APP_ZIP as string),
            settings: { hermes_url: hermes.url, hermes_api_key: API_KEY, hermes_timeout_seconds: 10, ...settings },
        });
        await startSweepNow(rig);
    }, 60_000);
    afterAll(async () => {
        // Every line the app wrote in this file, scanned for every secret the tests used.
        const log = rig?.logText({ appLinesOnly: true }) ?? '';
        for (const value of [
            ...SECRETS_IN_TESTS,
            ...Object.entries(settings)
                .filter(([k]) => /key|secret/.test(k))
                .map(([, v]) => String(v)),
        ]) {
            if (value && log.includes(value)) {
                throw new Error(`the app log contains a secret (${value.slice(0, 4)}…)`);
            }
        }
        await rig?.stop();
        await hermes?.close();
    });
    return { hermes: () => hermes, rig: () => rig };
}

/** One fake Hermes and two instances on one store (rig/cluster.ts) for a whole test file, as {@link useRigAndHermes}. */
export function useClusterAndHermes(settings: Record<string, unknown> = {}): { hermes: () => FakeHermes; cluster: () => RigCluster } {
    let hermes: FakeHermes;
    let cluster: RigCluster;
    beforeAll(async () => {
        hermes = await startFakeHermes({ apiKey: API_KEY });
        cluster = await RigCluster.start({
            zipPath: process.env.HERMES_APP_ZIP as string,
            settings: { hermes_url: hermes.url, hermes_api_key: API_KEY, hermes_timeout_seconds: 10, ...settings },
        });
        for (const rig of cluster.instances) {
            await startSweepNow(rig);
        }
    }, 90_000);
    afterAll(async () => {
        await cluster?.stop();
        await hermes?.close();
    });
    return { hermes: () => hermes, cluster: () => cluster };
}

/**
 * A fresh rig's start sweep (TurnJobs.ts `sweepAfterStart`, due GONE_MS + 1 s after the process
 * starts) runs now, before any test: it looks for turns of a process that died before this one,
 * and a fresh rig has none. Without this the first test of every file waited the 11 s for it in
 * its first `settle()`. A process started later in a test (a kill, a restart) keeps its own.
 */
async function startSweepNow(rig: Rig): Promise<void> {
    rig.server.bridges.scheduler.dueNow('hermes-sweep-start');
    await rig.settle();
}

/**
 * `expect` for what the app log shows (a line the app wrote, a count of them). Checked on every
 * engine that keeps every line; on Apps-Engine 1.58 (Rocket.Chat 7.13 and 8.0) lines written
 * while another call of the app runs are lost by the engine (rig/environment.ts
 * engineKeepsEveryLogLine), so there the check is skipped and the rest of the test still runs.
 * Only for lines that must be there: a line that must not be there is checked with `expect`.
 */
export function expectLogged<T>(value: T): jest.JestMatchers<T> {
    if (engineKeepsEveryLogLine()) {
        return expect(value);
    }
    const skipped: jest.JestMatchers<T> = new Proxy({} as jest.JestMatchers<T>, { get: () => () => undefined });
    return skipped;
}

/** The app's stored head of turn `id`, as the engine's persistence holds it (a cluster's instances share it). */
export function storedTurnHead(rig: Rig, id: string): Record<string, unknown> | undefined {
    return [...rig.server.bridges.persistence.records.values()].map((r) => r.data as Record<string, unknown>).find((d) => d.id === id && 'phase' in d);
}

/** Resolves with what `look` finds, looking every 10 ms (state the rig holds, with no event to wait on); throws after `timeoutMs`. */
export async function pollUntil<T>(what: string, look: () => T | undefined, timeoutMs = 5_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const found = look();
        if (found !== undefined) {
            return found;
        }
        if (Date.now() > deadline) {
            throw new Error(`no ${what} within ${timeoutMs} ms`);
        }
        await new Promise((r) => setTimeout(r, 10));
    }
}

/**
 * The asker token the newest turn carried (chat transport): the `[Rocket.Chat asker: …]` line of
 * its user message, what Hermes would hand a tool. Throws when the turn carried none.
 */
export function lastAskerToken(hermes: FakeHermes): string {
    const chats = hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions');
    const messages = (chats.at(-1)?.json as { messages: Array<{ role: string; content: string }> } | undefined)?.messages ?? [];
    const m = /^\[Rocket\.Chat asker: (v1\.[A-Za-z0-9]+\.[A-Za-z0-9]+\.\d+\.[A-Za-z0-9_-]{22})\]$/m.exec(
        messages.filter((x) => x.role === 'user').at(-1)?.content ?? '',
    );
    if (!m) {
        throw new Error('the turn carried no asker token');
    }
    return m[1];
}
