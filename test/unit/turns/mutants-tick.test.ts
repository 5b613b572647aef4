import { LiveTurn } from '../../../src/hermes/liveTurn';
import { t } from '../../../src/i18n/messages';
import { showProgress, STATUS_EDIT_MS, stopTyping } from '../../../src/turns/progress';
import { tick } from '../../../src/turns/tick';
import { BUSY_RETRY_MS, HEARTBEAT_MS, LIVE_TICK_MS, POLL_TICK_MS } from '../../../src/turns/tickTimes';
import { TickJob } from '../../../src/turns/tickPorts';
import { HermesConfig } from '../../../src/settings/config';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, ScriptedRuns, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

/**
 * One tick of a turn and what people see while it runs (found by mutation testing, `npm run
 * mutate`): the chain's next tick, wake-ups, ticks that overlap, the heartbeat, waiting
 * behind another turn, and the typing indicator and status message.
 */

let n = 0;
const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;
const settle = async () => {
    for (let i = 0; i < 5; i++) {
        await new Promise((r) => setImmediate(r));
    }
};

function setup(over: Partial<Parameters<typeof memoryTickPorts>[0]> = {}) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched, ...over });
    const cancelled: string[] = [];
    env.ports.cancel = async (id) => {
        cancelled.push(id);
        sched.cancel(id);
    };
    return { sched, cancelled, ...env, transport: env.transport as ScriptedRuns };
}

const chainJobs = (sched: VirtualScheduler, turnId: string) =>
    sched.pending.filter((p) => p.job.turnId === turnId && !p.job.wake).map((p) => p.at - sched.time);

describe('a tick of a queued turn', () => {
    it("schedules the chain's next tick, clears a stale waiting mark and starts the submission", async () => {
        const env = setup();
        const rec = queuedTurn(uid('Q'), { createdAt: env.sched.time, waiting: true });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect(chainJobs(env.sched, rec.id)).toEqual([LIVE_TICK_MS]);
        expect((await env.store.get(rec.id))?.waiting).toBeUndefined();
        await settle();
        expect(env.transport.count('POST', /^\/v1\/runs$/)).toBe(1);
    });

    it('as a wake-up, schedules nothing', async () => {
        const env = setup();
        const rec = queuedTurn(uid('Q'), { createdAt: env.sched.time });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: rec.chain, wake: true }, env.ports);
        expect(chainJobs(env.sched, rec.id)).toEqual([]);
    });

    it('waits for its retry time: the chain comes back then, a wake-up does nothing', async () => {
        const env = setup();
        const rec = queuedTurn(uid('Q'), { createdAt: env.sched.time, retryAt: env.sched.time + 3000 });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect(chainJobs(env.sched, rec.id)).toEqual([3000]);
        env.sched.pending.length = 0;
        await tick({ turnId: rec.id, chain: rec.chain, wake: true }, env.ports);
        expect(chainJobs(env.sched, rec.id)).toEqual([]);
        await settle();
        expect(env.transport.count('POST', /^\/v1\/runs$/)).toBe(0);
    });

    it('goes ahead at its retry time exactly', async () => {
        const env = setup();
        const rec = queuedTurn(uid('Q'), { createdAt: env.sched.time, retryAt: env.sched.time });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        await settle();
        expect(env.transport.count('POST', /^\/v1\/runs$/)).toBe(1);
    });

    it('hands an error to the retry policy', async () => {
        const env = setup({ capabilities: async () => Promise.reject(new Error('capabilities down')) });
        const rec = queuedTurn(uid('Q'), { createdAt: env.sched.time });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual([`@alice ${t('notice_server-error')}`]);
        expect(await env.store.get(rec.id)).toBeUndefined();
    });
});

describe('a turn behind another of its session', () => {
    async function behind() {
        const env = setup();
        const ahead = queuedTurn(uid('A'), { seq: 1, phase: 'running', createdAt: env.sched.time, startedAt: env.sched.time, tickAt: env.sched.time });
        const rec = queuedTurn(uid('B'), { seq: 2, createdAt: env.sched.time });
        await env.store.save(ahead);
        await env.store.save(rec);
        return { ...env, rec };
    }

    it('is marked waiting once, and ticks no more', async () => {
        const env = await behind();
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(await env.store.get(env.rec.id)).toMatchObject({ waiting: true, tickAt: env.sched.time });
        expect(chainJobs(env.sched, env.rec.id)).toEqual([]);
        expect(env.logs).toEqual([`Turn message ${env.rec.id} in room R1 waits for the turn ahead in its session.`]);
        const saves = env.store.saves;
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.store.saves).toBe(saves);
        expect(env.logs).toHaveLength(1);
    });

    it('ends stopped when someone stopped it while it waited', async () => {
        const env = await behind();
        await env.store.requestStop(env.rec.id, 'bob');
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual([`@alice ${t('notice_stopped', { by: 'bob' })}`]);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });
});

describe('which ticks act', () => {
    it('not one of another chain, nor one for a turn gone or done', async () => {
        const env = setup();
        const rec = queuedTurn(uid('C'), { createdAt: env.sched.time, chain: 'current' });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: 'replaced' }, env.ports);
        await tick({ turnId: uid('gone'), chain: 'x' }, env.ports);
        const done = queuedTurn(uid('D'), { phase: 'done' });
        await env.store.save(done);
        const saves = env.store.saves;
        let typing = 0;
        env.chat.typing = async () => {
            typing++;
            return async () => undefined;
        };
        await tick({ turnId: done.id, chain: done.chain }, env.ports);
        await settle();
        expect(env.sched.pending).toEqual([]);
        expect(env.transport.requests).toEqual([]);
        expect(env.store.saves).toBe(saves);
        expect(typing).toBe(0);
        expect(env.cancelled).toEqual([]);
    });

    it('any tick of a turn stored before chains existed', async () => {
        const env = setup();
        const rec = queuedTurn(uid('C'), { createdAt: env.sched.time, chain: '' });
        await env.store.save(rec);
        await tick({ turnId: rec.id, chain: 'whatever' }, env.ports);
        expect(chainJobs(env.sched, rec.id)).toEqual([LIVE_TICK_MS]);
    });
});

describe('ticks that overlap in one process', () => {
    /** Holds the first read of the turn until the test releases it. */
    function gated(env: ReturnType<typeof setup>) {
        const get = env.store.get.bind(env.store);
        let release: () => void = () => undefined;
        const gate = new Promise<void>((r) => (release = r));
        let first = true;
        env.store.get = async (id) => {
            if (first) {
                first = false;
                await gate;
            }
            return get(id);
        };
        return () => release();
    }

    /** A turn that waits behind a running one: its ticks schedule nothing of their own. */
    async function waitingTurn() {
        const env = setup();
        await env.store.save(queuedTurn(uid('A'), { seq: 1, phase: 'running', createdAt: env.sched.time }));
        const rec = queuedTurn(uid('O'), { seq: 2, createdAt: env.sched.time });
        await env.store.save(rec);
        return { ...env, rec };
    }

    it('a chain tick comes back a little later; a wake-up is passed on when the running tick ends', async () => {
        const env = await waitingTurn();
        const { rec } = env;
        const release = gated(env);
        const first = tick({ turnId: rec.id, chain: rec.chain, wake: true }, env.ports);
        await tick({ turnId: rec.id, chain: rec.chain }, env.ports);
        expect(chainJobs(env.sched, rec.id)).toEqual([BUSY_RETRY_MS]);
        await tick({ turnId: rec.id, chain: rec.chain, wake: true }, env.ports);
        expect(env.sched.pending.filter((p) => p.job.wake)).toEqual([]);
        release();
        await first;
        expect(env.sched.pending.filter((p) => p.job.wake).map((p) => [p.job.turnId, p.job.chain, p.at - env.sched.time])).toEqual([[rec.id, rec.chain, 0]]);
        expect(await env.store.get(rec.id)).toMatchObject({ waiting: true });
    });

    it('pass nothing on when no wake-up came meanwhile', async () => {
        const env = await waitingTurn();
        await tick({ turnId: env.rec.id, chain: env.rec.chain, wake: true }, env.ports);
        await tick({ turnId: env.rec.id, chain: env.rec.chain, wake: true }, env.ports);
        expect(env.sched.pending).toEqual([]);
    });
});

describe('a tick of a running turn', () => {
    async function runningTurn(over: Partial<TurnRecord> = {}, ports: Partial<Parameters<typeof memoryTickPorts>[0]> = {}) {
        const env = setup(ports);
        const rec = queuedTurn(uid('R'), {
            phase: 'running',
            transport: 'runs',
            runId: 'run_1',
            createdAt: env.sched.time,
            startedAt: env.sched.time,
            tickAt: env.sched.time,
            ...over,
        });
        await env.store.save(rec);
        return { ...env, rec };
    }

    it('comes back sooner when it must poll than when its stream is here', async () => {
        const polling = await runningTurn();
        await tick({ turnId: polling.rec.id, chain: polling.rec.chain }, polling.ports);
        expect(chainJobs(polling.sched, polling.rec.id)).toEqual([POLL_TICK_MS]);
        const streaming = await runningTurn();
        streaming.ports.live.followRun(streaming.rec.id, streaming.ports.hermes, 'run_1');
        await tick({ turnId: streaming.rec.id, chain: streaming.rec.chain }, streaming.ports);
        expect(chainJobs(streaming.sched, streaming.rec.id)).toEqual([LIVE_TICK_MS]);
        streaming.ports.live.end(streaming.rec.id);
    });

    it('as a wake-up, lets the stream wake it again and schedules nothing', async () => {
        const env = await runningTurn();
        const woke: string[] = [];
        env.ports.live.woke = (id) => void woke.push(id);
        await tick({ turnId: env.rec.id, chain: env.rec.chain, wake: true }, env.ports);
        expect(woke).toEqual([env.rec.id]);
        expect(chainJobs(env.sched, env.rec.id)).toEqual([]);
    });

    it('lets the stream wake the turn again once any tick of it ran here: one wake-up pending at a time, and none lost to another instance', async () => {
        const env = await runningTurn();
        let wakes = 0;
        env.ports.live.onWake(env.rec.id, () => void wakes++);
        env.ports.live.submit(env.rec.id, async () => undefined);
        await settle();
        expect(wakes).toBe(1);
        // No tick here since: the pending wake-up stands, a second event wakes nothing.
        env.ports.live.submit(env.rec.id, async () => undefined);
        await settle();
        expect(wakes).toBe(1);
        // The wake-up job ran on another instance; this process's next chain tick re-arms it.
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        env.ports.live.submit(env.rec.id, async () => undefined);
        await settle();
        expect(wakes).toBe(2);
        await tick({ turnId: env.rec.id, chain: env.rec.chain, wake: true }, env.ports);
        env.ports.live.submit(env.rec.id, async () => undefined);
        await settle();
        expect(wakes).toBe(3);
    });

    it('writes a heartbeat after 10 s without a write, not before', async () => {
        const env = await runningTurn({ tickAt: Number.NaN });
        env.rec.tickAt = env.sched.time - HEARTBEAT_MS + 1;
        await env.store.save(env.rec);
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect((await env.store.get(env.rec.id))?.tickAt).toBe(env.sched.time - HEARTBEAT_MS + 1);
        env.sched.time += 1;
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect((await env.store.get(env.rec.id))?.tickAt).toBe(env.sched.time);
    });

    it('saves what changed on screen at once', async () => {
        const env = await runningTurn({ startedAt: 0 });
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        const saved = await env.store.get(env.rec.id);
        expect(saved?.statusMessageId).toBe('m1');
        expect(saved?.tickAt).toBe(env.sched.time);
    });

    it("finishes a run that ended, and cancels the chain's next tick", async () => {
        const env = await runningTurn();
        env.transport.statuses.set('run_1', { status: 'completed', output: 'the answer' });
        await tick({ turnId: env.rec.id, chain: env.rec.chain }, env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['@alice the answer']);
        expect(chainJobs(env.sched, env.rec.id)).toEqual([]);
        expect(env.cancelled).toHaveLength(1);
    });

    it('does not cancel a successor that already ran', async () => {
        const env = await runningTurn();
        env.sched.schedule({ turnId: env.rec.id, chain: env.rec.chain }, 0);
        await env.sched.runUntil(env.sched.time + 3 * POLL_TICK_MS, (job: TickJob) => tick(job, env.ports));
        expect(env.sched.ran.length).toBeGreaterThanOrEqual(3);
        expect(env.cancelled).toEqual([]);
    });
});

describe('what people see while a turn runs', () => {
    function seen(tools: Array<{ tool: string; label?: string }>): { live: LiveTurn } {
        return { live: { kind: 'run-events', tools, toolsDropped: 0, text: '', truncated: false, done: false, abort: new AbortController() } };
    }

    async function shown(over: Partial<TurnRecord> = {}, config: HermesConfig = { ...TEST_CONFIG, progress: 'tools' }) {
        const env = setup({ config });
        let typings = 0;
        let stops = 0;
        env.chat.typing = async () => {
            typings++;
            return async () => void stops++;
        };
        const rec = queuedTurn(uid('P'), {
            phase: 'running',
            transport: 'runs',
            runId: 'run_1',
            createdAt: env.sched.time,
            startedAt: env.sched.time,
            ...over,
        });
        await env.store.save(rec);
        return { ...env, rec, typings: () => typings, stops: () => stops };
    }

    it('repeats the typing indicator every 10 s, and ends it with the turn', async () => {
        const env = await shown();
        await showProgress(env.rec, {}, env.ports);
        env.sched.time += 9_999;
        await showProgress(env.rec, {}, env.ports);
        expect(env.typings()).toBe(1);
        env.sched.time += 1;
        await showProgress(env.rec, {}, env.ports);
        expect(env.typings()).toBe(2);
        await stopTyping(env.rec.id);
        expect(env.stops()).toBe(1);
        await stopTyping(env.rec.id);
        expect(env.stops()).toBe(1);
    });

    it('tries the typing indicator again on the next look when it failed', async () => {
        const env = await shown();
        let calls = 0;
        env.chat.typing = async () => {
            calls++;
            throw new Error('no');
        };
        await showProgress(env.rec, {}, env.ports);
        await showProgress(env.rec, {}, env.ports);
        expect(calls).toBe(2);
    });

    it('keeps the newest 50 tool lines in the record', async () => {
        const env = await shown();
        const tools = Array.from({ length: 60 }, (_, i) => ({ tool: 'terminal', label: `step ${i}` }));
        await showProgress(env.rec, seen(tools), env.ports);
        expect(env.rec.progress).toHaveLength(50);
        expect(env.rec.progress[0]).toBe('💻 terminal: step 10');
        expect(env.rec.progress[49]).toBe('💻 terminal: step 59');
    });

    it('posts the status message only after status_delay_seconds, saved as posting first, marked with the turn', async () => {
        const env = await shown();
        env.sched.time += env.ports.config.statusDelaySeconds * 1000 - 1;
        expect(await showProgress(env.rec, seen([{ tool: 'terminal', label: 'ls' }]), env.ports)).toBe(false);
        expect(env.chat.visible().filter((m) => m.kind === 'status')).toEqual([]);
        env.sched.time += 1;
        let postingSaved: boolean | undefined;
        env.chat.afterNextPost = () => {
            postingSaved = env.store.records.get(env.rec.id)?.statusPosting;
        };
        expect(await showProgress(env.rec, seen([{ tool: 'terminal', label: 'ls' }]), env.ports)).toBe(true);
        expect(postingSaved).toBe(true);
        const status = env.chat.visible().filter((m) => m.kind === 'status');
        expect(status.map((m) => [m.text, m.mark])).toEqual([[`${t('progress_working')}\n💻 terminal: ls`, { kind: 'status', turnId: env.rec.id }]]);
        expect(env.rec).toMatchObject({ statusMessageId: status[0].id, statusText: status[0].text, statusEditedAt: env.sched.time, statusPosting: true });
    });

    it('counts from the start of the look when the turn has no start time', async () => {
        const env = await shown({ startedAt: undefined });
        await showProgress(env.rec, {}, env.ports);
        expect(env.chat.visible()).toEqual([]);
    });

    it('shows nothing but typing with progress off', async () => {
        const env = await shown({ startedAt: 0 }, { ...TEST_CONFIG, progress: 'off' });
        expect(await showProgress(env.rec, seen([{ tool: 'terminal' }]), env.ports)).toBe(false);
        expect(env.chat.visible()).toEqual([]);
        expect(env.typings()).toBe(1);
    });

    it('finds a status message whose id a crash lost, by its mark, instead of posting another', async () => {
        // Its text is what it would show: finding it is the only change.
        const env = await shown({ statusPosting: true, startedAt: 0, statusText: t('progress_working') });
        await env.chat.post({ roomId: 'R1' }, 'other turn', 'status', { turnId: 'another' });
        const mine = await env.chat.post({ roomId: 'R1' }, 'Working', 'status', { turnId: env.rec.id });
        expect(await showProgress(env.rec, {}, env.ports)).toBe(true);
        expect(env.rec.statusMessageId).toBe(mine);
        expect(env.chat.visible()).toHaveLength(2);
        expect(env.chat.edits).toBe(0);
    });

    it('posts the status message when the lost one is not there', async () => {
        const env = await shown({ statusPosting: true });
        await env.chat.post({ roomId: 'R1' }, 'other turn', 'status', { turnId: 'another' });
        await env.chat.post({ roomId: 'R1' }, 'note', 'notice', { turnId: env.rec.id });
        expect(await showProgress(env.rec, {}, env.ports)).toBe(false);
        expect(env.rec.statusMessageId).toBeUndefined();
    });

    it('edits the status message when its text changed, at most every 2 s', async () => {
        const env = await shown({ startedAt: 0 });
        await showProgress(env.rec, seen([{ tool: 'terminal', label: 'a' }]), env.ports);
        const id = env.rec.statusMessageId as string;
        env.sched.time += STATUS_EDIT_MS - 1;
        expect(await showProgress(env.rec, seen([{ tool: 'terminal', label: 'a' }, { tool: 'memory' }]), env.ports)).toBe(false);
        expect(env.chat.edits).toBe(0);
        env.sched.time += 1;
        expect(await showProgress(env.rec, seen([{ tool: 'terminal', label: 'a' }, { tool: 'memory' }]), env.ports)).toBe(true);
        expect(env.chat.visible().find((m) => m.id === id)?.text).toBe(`${t('progress_working')}\n💻 terminal: a\n🧠 memory`);
        expect(env.rec.statusEditedAt).toBe(env.sched.time);
        env.sched.time += 60_000;
        expect(await showProgress(env.rec, seen([{ tool: 'terminal', label: 'a' }, { tool: 'memory' }]), env.ports)).toBe(false);
        expect(env.chat.edits).toBe(1);
    });
});
