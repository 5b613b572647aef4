import { decideApproval, pendingApproval } from '../../../src/approvals/decide';
import { HermesClient } from '../../../src/hermes/client';
import { LiveTurns } from '../../../src/hermes/liveTurns';
import { sweepTurns, STALE_MS } from '../../../src/turns/sweep';
import { tick } from '../../../src/turns/tick';
import { TickJob } from '../../../src/turns/tickPorts';
import { memoryTickPorts, queuedTurn, ScriptedRuns, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

/**
 * A turn's life over in-memory ports with Agenda's one-job-at-a-time rule on a virtual
 * clock: issue 17 defects 2, 7, 8, 9 (crash between steps), 10, and the turn deadline.
 */
/** Kills the app process (every port fails), then restarts it: memory (streams, busy turns) is gone, persistence stays. */
async function crashing(env: ReturnType<typeof setup>, job: TickJob, kill: () => void): Promise<void> {
    kill();
    await tick(job, env.ports).catch(() => undefined);
}

function revive(env: ReturnType<typeof setup>): void {
    env.store.dead = false;
    env.chat.dead = false;
    env.ports.live = new LiveTurns();
}

/**
 * Kills the app process at its `failAt`-th write (1-based; 0: never): a store write of one of
 * `writes`, or a post (which lands, then the process dies before hearing back).
 */
function dieAtWrite(env: ReturnType<typeof setup>, failAt: number, writes: ReadonlyArray<'save' | 'remove'>): void {
    const { store, chat } = env;
    let count = 0;
    const die = () => {
        if (++count === failAt) {
            store.dead = true;
            chat.dead = true;
        }
    };
    for (const name of writes) {
        const original = store[name].bind(store) as (...a: unknown[]) => Promise<void>;
        (store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
            die();
            return original(...args);
        };
    }
    const post = chat.post.bind(chat);
    chat.post = async (...args) => {
        const id = await post(...args);
        die();
        if (chat.dead) {
            throw new Error('died after posting');
        }
        return id;
    };
}

function setup(over: Parameters<typeof memoryTickPorts>[0] extends infer O ? Partial<O> : never = {}) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched, ...over });
    const run = (job: TickJob) => tick(job, env.ports);
    return { sched, run, ...env, transport: env.transport as ScriptedRuns };
}

/**
 * A turn asked two minutes ago (its retry window long over) whose run is refused six times with
 * 429 while Hermes is busy with the app's own work: it keeps waiting and is sent, no notice.
 */
async function expectSentPast429s(id: string, env: Pick<ReturnType<typeof setup>, 'sched' | 'run' | 'store' | 'chat' | 'transport'>): Promise<void> {
    await env.store.save(queuedTurn(id, { createdAt: env.sched.time - 120_000 }));
    for (let i = 0; i < 6; i++) {
        env.transport.createFailures.push({ status: 429, headers: { 'retry-after': '2' }, code: 'rate_limit_exceeded' });
    }
    env.sched.schedule({ turnId: id, chain: `chain-${id}` }, 0);
    await env.sched.runUntil(env.sched.time + 30_000, env.run);
    expect(env.transport.count('POST', /^\/v1\/runs$/)).toBe(7);
    expect((await env.store.get(id))?.phase).toBe('running');
    expect(env.chat.visible().filter((m) => m.kind === 'notice')).toHaveLength(0);
}

describe('defect 2: one chain per turn, and a waiting turn costs nothing', () => {
    it('over a 10-minute wait behind a running turn, the waiting turn runs no job and the running one keeps exactly one chain', async () => {
        const { sched, run, store, transport, ports } = setup();
        const a = queuedTurn('A', { seq: 1 });
        const b = queuedTurn('B', { seq: 2 });
        await store.save(a);
        await store.save(b);
        sched.schedule({ turnId: 'A', chain: a.chain }, 0);
        sched.schedule({ turnId: 'B', chain: b.chain }, 0);
        const sweep = { store, schedule: ports.schedule, log: { info: () => undefined }, now: ports.now };
        const end = sched.time + 10 * 60_000;
        let maxPendingA = 0;
        while (sched.time < end) {
            await sched.runUntil(Math.min(end, sched.time + 30_000), async (job) => {
                await run(job);
                maxPendingA = Math.max(maxPendingA, sched.pendingFor('A'));
            });
            await sweepTurns(sweep);
        }
        const jobsOf = (id: string) => sched.ran.filter((j) => j.turnId === id).length;
        expect(jobsOf('B')).toBe(1);
        expect(sched.pendingFor('B')).toBe(0);
        expect((await store.get('B'))?.waiting).toBe(true);
        expect(maxPendingA).toBe(1);
        // One status poll a tick, a tick a second: linear in time, not growing.
        expect(jobsOf('A')).toBeLessThanOrEqual(10 * 60 + 5);
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(1);

        // A ends: B is woken at once and reaches Hermes.
        transport.statuses.set('run_1', { status: 'completed', output: 'done A' });
        // A silent stream here: the run's end is seen by the next poll (at most 5 s).
        await sched.runUntil(sched.time + 12_000, run);
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(2);
    });

    it('a chain the sweep replaced ends at its next tick', async () => {
        const { sched, run, store, ports } = setup();
        await store.save(queuedTurn('A'));
        sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
        await sched.runUntil(sched.time + 100, run);
        // The chain's job is lost (an app update cancels every job): the record goes stale.
        sched.pending.splice(0);
        sched.time += STALE_MS + 11_000;
        await sweepTurns({ store, schedule: ports.schedule, log: { info: () => undefined }, now: ports.now });
        const newChain = (await store.get('A'))?.chain;
        expect(newChain).not.toBe('chain-A');
        // A late job of the old chain turns up: it schedules nothing.
        sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
        await sched.runUntil(sched.time + 10, run);
        expect(sched.pending.every((p) => p.job.chain === newChain)).toBe(true);
        expect(sched.pendingFor('A')).toBe(1);
    });
});

describe("defect 8: order by the app's sequence", () => {
    it('a running turn blocks an earlier-stamped queued turn of its session: never two runs in one session', async () => {
        const { sched, run, store, transport } = setup();
        await store.save(queuedTurn('LATE', { createdAt: sched.time + 1_000, seq: 1 }));
        sched.schedule({ turnId: 'LATE', chain: 'chain-LATE' }, 0);
        await sched.runUntil(sched.time + 10, run);
        expect((await store.get('LATE'))?.phase).toBe('running');
        // A message stamped earlier arrives later (clock skew, a slow instance).
        await store.save(queuedTurn('EARLY', { createdAt: sched.time - 60_000, seq: 2 }));
        sched.schedule({ turnId: 'EARLY', chain: 'chain-EARLY' }, 0);
        await sched.runUntil(sched.time + 5_000, run);
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(1);
        expect((await store.get('EARLY'))?.phase).toBe('queued');
    });
});

describe('exactly once across a crash between two persisted steps (defect 9, issue 9)', () => {
    it('a process dying right after posting the answer, before recording it: after the restart the turn ends without posting again', async () => {
        const env = setup();
        const { sched, run, store, chat, transport } = env;
        await store.save(queuedTurn('A'));
        sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
        await sched.runUntil(sched.time + 10, run);
        revive(env);
        transport.statuses.set('run_1', { status: 'completed', output: 'the answer' });
        chat.afterNextPost = () => {
            store.dead = true;
            chat.dead = true;
        };
        await sched.runUntil(sched.time + 2_500, (job) => crashing(env, job, () => undefined));
        revive(env);
        expect(chat.answers()).toHaveLength(1);
        expect(await store.get('A')).toBeDefined();
        // The chain goes on (its successor was scheduled before the step): it recognises the part and ends the turn.
        await sched.runUntil(sched.time + 3_000, run);
        expect(chat.answers()).toHaveLength(1);
        expect(chat.answers()[0].text).toContain('the answer');
        expect(await store.get('A')).toBeUndefined();
        expect(chat.visible().filter((m) => m.kind === 'status')).toHaveLength(0);
    });

    it('a process dying at any save or post of a turn still ends with exactly one answer and no status message', async () => {
        for (let failAt = 1; failAt <= 8; failAt++) {
            const env = setup();
            const { sched, store, chat, transport, ports } = env;
            await store.save(queuedTurn('A'));
            sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
            // A crash between creating the run and saving its id submits again (Hermes de-duplicates by Idempotency-Key).
            transport.initialStatus = { status: 'completed', output: 'the answer' };
            dieAtWrite(env, failAt, ['save']);
            for (let i = 0; i < 30 && (await store.get('A').catch(() => true)); i++) {
                await sched.runUntil(sched.time + 2_000, (job) => tick(job, ports).catch(() => undefined));
                if (store.dead) {
                    revive(env);
                }
                await sweepTurns({ store, schedule: ports.schedule, log: { info: () => undefined }, now: ports.now });
                sched.time += 10_000;
            }
            const left = {
                failAt,
                answers: chat.answers().length,
                statuses: chat.visible().filter((m) => m.kind === 'status').length,
                open: Boolean(await store.get('A')),
            };
            expect(left).toEqual({ failAt, answers: 1, statuses: 0, open: false });
        }
    });
});

describe('exactly once for a quick turn, carried in its message event (issue 16)', () => {
    it('a process dying at any write of a quick turn still ends with exactly one answer; an uninterrupted one costs no scheduler job', async () => {
        for (let failAt = 0; failAt <= 4; failAt++) {
            const env = setup();
            const { sched, store, chat, transport, ports } = env;
            const rec = queuedTurn('Q');
            await store.save(rec);
            transport.initialStatus = { status: 'completed', output: 'the answer' };
            // Hermes answers at once: the run's event stream ends it as soon as it is open.
            const open = transport.stream.bind(transport);
            transport.stream = (request, onText, signal) => {
                const streaming = open(request, onText, signal);
                setImmediate(() => onText(`data: ${JSON.stringify({ event: 'run.completed', output: 'the answer' })}\n\n`));
                return streaming;
            };
            dieAtWrite(env, failAt, ['save', 'remove']);
            await tick({ turnId: 'Q', chain: rec.chain, quick: true, record: structuredClone(rec) }, ports).catch(() => undefined);
            if (failAt === 0) {
                expect(sched.pending).toHaveLength(0);
            }
            for (let i = 0; i < 30 && (await store.get('Q').catch(() => true)); i++) {
                if (store.dead) {
                    revive(env);
                }
                await sweepTurns({ store, schedule: ports.schedule, log: { info: () => undefined }, now: ports.now });
                await sched.runUntil(sched.time + 2_000, (job) => tick(job, ports).catch(() => undefined));
                sched.time += 10_000;
            }
            const left = { failAt, answers: chat.answers().length, open: Boolean(await store.get('Q')) };
            expect(left).toEqual({ failAt, answers: 1, open: false });
        }
    });
});

describe('defect 7: a chat turn after a restart', () => {
    it('is not run again: the asker is told the answer was lost', async () => {
        const { sched, run, store, chat, transport } = setup({ config: { ...TEST_CONFIG, hermesTransport: 'chat' } });
        await store.save(
            queuedTurn('A', {
                phase: 'running',
                transport: 'chat',
                sessionId: 's',
                startedAt: sched.time - 60_000,
                tickAt: sched.time - 60_000,
                owner: { as: 'streaming', process: 'a-process-that-died', until: sched.time - 30_000, at: sched.time - 60_000 },
            }),
        );
        sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
        await sched.runUntil(sched.time + 10, run);
        expect(transport.count('POST', /chat\/completions/)).toBe(0);
        expect(chat.visible().map((m) => m.kind)).toEqual(['notice']);
        expect(chat.visible()[0].text).toContain('lost track');
        expect(await store.get('A')).toBeUndefined();
    });
});

describe('turn deadline (defect 3)', () => {
    it('a run stuck in running is stopped at turn_timeout_minutes, the asker told, the session freed', async () => {
        const { sched, run, store, chat, transport } = setup({ config: { ...TEST_CONFIG, turnTimeoutMinutes: 2 } });
        await store.save(queuedTurn('A', { seq: 1 }));
        await store.save(queuedTurn('B', { seq: 2 }));
        sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
        sched.schedule({ turnId: 'B', chain: 'chain-B' }, 0);
        await sched.runUntil(sched.time + 2 * 60_000 + 2_000, run);
        expect(transport.count('POST', /\/stop$/)).toBe(1);
        expect(chat.visible().find((m) => m.kind === 'notice')?.text).toContain('did not finish within');
        expect(await store.get('A')).toBeUndefined();
        expect((await store.get('B'))?.phase).toBe('running');
    });
});

describe('defect 10 and 5: approvals', () => {
    async function waitingTurn() {
        const env = setup();
        await env.store.save(queuedTurn('A'));
        env.sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
        await env.sched.runUntil(env.sched.time + 10, env.run);
        // The app process restarted: the stream that carried the approval's command is gone.
        env.ports.live.end('A');
        env.transport.statuses.set('run_1', { status: 'waiting_for_approval' });
        await env.sched.runUntil(env.sched.time + 2_500, env.run);
        return env;
    }

    it('after a restart the command cannot be read: the approval offers Deny only, never a blind Approve', async () => {
        const { chat } = await waitingTurn();
        const approval = chat.visible().find((m) => m.kind === 'approval');
        expect(approval?.buttons?.buttons.map((b) => b.value)).toEqual(['A|deny']);
        expect(approval?.text).toContain('could not be read');
    });

    it('a click writes only its decision: a tick saving meanwhile neither loses it nor is overwritten; a finished turn is not brought back', async () => {
        const { sched, run, store, chat, transport, ports } = await waitingTurn();
        const approval = chat.visible().find((m) => m.kind === 'approval');
        const rec = await store.get('A');
        const decided = await decideApproval(rec!, { id: 'U1', username: 'alice' }, 'deny', {
            config: TEST_CONFIG,
            hermes: new HermesClient(transport, TEST_CONFIG),
            store,
            chat,
            log: ports.log,
            sleep: async () => undefined,
        });
        expect(decided).toBe('decided');
        // A tick that read the record before the click saves it after: the decision is its own record.
        await store.save(rec!);
        expect((await store.decision('A', approval!.id))?.decided?.choice).toBe('deny');
        transport.statuses.set('run_1', { status: 'completed', output: 'denied, done' });
        await sched.runUntil(sched.time + 3_000, run);
        expect(await store.get('A')).toBeUndefined();
        // A late click on the finished turn's stale copy: no record is written back.
        const late = await decideApproval(rec!, { id: 'U1', username: 'alice' }, 'deny', {
            config: TEST_CONFIG,
            hermes: new HermesClient(transport, TEST_CONFIG),
            store,
            chat,
            log: ports.log,
            sleep: async () => undefined,
        });
        expect(late).toBe('not-pending');
        expect(store.records.size).toBe(0);
    });
});

describe('an approval clicked before a quick turn has written its run', () => {
    it('waits for the record that still says the turn is being sent, then decides', async () => {
        const { store, chat, transport, ports } = setup();
        const sending = { ...queuedTurn('QA'), owner: { as: 'sending' as const, process: 'p', until: Date.now() + 60_000, at: Date.now() } };
        await store.save(sending);
        const request = { command: 'rm -rf /tmp/x', description: 'delete', choices: ['once', 'deny'], allowPermanent: false };
        const messageId = await chat.post({ roomId: sending.roomId }, 'approve?', 'approval', { turnId: 'QA' });
        let looks = 0;
        const decided = await decideApproval(sending, { id: sending.askerId, username: 'alice' }, 'deny', {
            config: TEST_CONFIG,
            hermes: new HermesClient(transport, TEST_CONFIG),
            store,
            chat,
            log: ports.log,
            // The turn leaves its event meanwhile: its run and the approval are written.
            sleep: async () => {
                if (++looks === 2) {
                    await store.save({ ...sending, owner: undefined, phase: 'running', runId: 'run_qa', approval: { messageId, request, number: 1 } });
                }
            },
        });
        expect(decided).toBe('decided');
        expect((await store.decision('QA', messageId))?.decided?.choice).toBe('deny');
    });

    it('a typed yes finds the approval the turn is still saving; with no turn at Hermes it does not wait', async () => {
        const { store } = setup();
        const sending = { ...queuedTurn('QY'), owner: { as: 'sending' as const, process: 'p', until: Date.now() + 60_000, at: Date.now() } };
        await store.save(sending);
        const request = { command: 'ls', description: 'list', choices: ['once', 'deny'], allowPermanent: false };
        let looks = 0;
        const found = await pendingApproval(store, sending.sessionKey, async () => {
            if (++looks === 3) {
                await store.save({ ...sending, owner: undefined, phase: 'running', runId: 'run_qy', approval: { messageId: 'M', request, number: 1 } });
            }
        });
        expect(found?.id).toBe('QY');
        expect(looks).toBe(3);
        await store.remove('QY');
        await store.save(queuedTurn('QZ'));
        looks = 0;
        expect(await pendingApproval(store, sending.sessionKey, async () => void looks++)).toBeUndefined();
        expect(looks).toBe(0);
    });
});

describe('defect 5: every approval of a run is shown, each with its own message', () => {
    it('a second approval in one run gets a second message after the first was decided', async () => {
        const env = setup();
        const { sched, run, store, chat, transport, ports } = env;
        await store.save(queuedTurn('A'));
        sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
        await sched.runUntil(sched.time + 10, run);
        const push = transport.eventStreams.get('run_1') as (e: Record<string, unknown>) => void;
        const ask = (command: string) => push({ event: 'approval.request', command, description: 'dangerous', choices: ['once', 'deny'] });
        transport.statuses.set('run_1', { status: 'waiting_for_approval' });
        ask('rm -rf /srv/one');
        await sched.runUntil(sched.time + 2_500, run);
        const first = chat.visible().filter((m) => m.kind === 'approval');
        expect(first).toHaveLength(1);
        expect(first[0].text).toContain('rm -rf /srv/one');
        const decide = (choice: string) =>
            decideApproval(store.records.get('A') as never, { id: 'U1', username: 'alice' }, choice, {
                config: TEST_CONFIG,
                hermes: ports.hermes,
                store,
                chat,
                log: ports.log,
                sleep: async () => undefined,
            });
        expect(await decide('once')).toBe('decided');
        push({ event: 'approval.responded', choice: 'once' });
        ask('rm -rf /srv/two');
        await sched.runUntil(sched.time + 2_500, run);
        const both = chat.visible().filter((m) => m.kind === 'approval');
        expect(both).toHaveLength(2);
        expect(both[1].text).toContain('rm -rf /srv/two');
        expect(both[1].buttons?.buttons.map((b) => b.value)).toEqual(['A|once', 'A|deny']);
        expect(both[0].buttons).toBeUndefined();
    });
});

describe('retry windows (issue 9: the retry policy over in-memory ports)', () => {
    it('429 is retried after Retry-After, capped at 30 s, within the minute; then the asker gets one notice', async () => {
        const { sched, run, store, chat, transport } = setup();
        await store.save(queuedTurn('A', { createdAt: sched.time }));
        transport.createFailures.push(
            { status: 429, headers: { 'retry-after': '86400' }, code: 'rate_limit_exceeded' },
            { status: 429, headers: { 'retry-after': '1' }, code: 'rate_limit_exceeded' },
        );
        sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
        await sched.runUntil(sched.time + 100, run);
        const first = await store.get('A');
        // A day's Retry-After does not park the session: the wait is capped.
        expect((first?.retryAt ?? 0) - sched.time).toBeLessThanOrEqual(30_000);
        await sched.runUntil(sched.time + 35_000, run);
        expect(transport.count('POST', /^\/v1\/runs$/)).toBe(3);
        expect((await store.get('A'))?.phase).toBe('running');

        // Beyond the window: a notice, no more attempts.
        const env = setup();
        await env.store.save(queuedTurn('B', { createdAt: env.sched.time }));
        for (let i = 0; i < 10; i++) {
            env.transport.createFailures.push({ status: 429, headers: { 'retry-after': '20' }, code: 'rate_limit_exceeded' });
        }
        env.sched.schedule({ turnId: 'B', chain: 'chain-B' }, 0);
        await env.sched.runUntil(env.sched.time + 120_000, env.run);
        expect(env.transport.count('POST', /^\/v1\/runs$/)).toBeLessThanOrEqual(4);
        expect(env.chat.visible().map((m) => m.kind)).toEqual(['notice']);
        expect(env.chat.visible()[0].text).toContain('busy');
        expect(await env.store.get('B')).toBeUndefined();
        expect(chat.visible().filter((m) => m.kind === 'notice')).toHaveLength(0);
    });

    it('a 429 while another turn of the app is at Hermes is back-pressure: past its minute the turn still waits, then is sent', async () => {
        const { sched, run, store, chat, transport } = setup();
        await store.save({ ...queuedTurn('AT', { roomId: 'R9', sessionKey: 'agent:main:rocketchat:channel:R9' }), phase: 'running', runId: 'run_busy' });
        await expectSentPast429s('LATE', { sched, run, store, chat, transport });
    });

    it('a 429 while another turn of this process has just opened its run (not yet on its record) is back-pressure too', async () => {
        const { sched, run, store, chat, transport, ports } = setup();
        // Its run started a moment ago: its stream is open here, its record does not name the run yet.
        await store.save({ ...queuedTurn('FRESH', { roomId: 'R8', sessionKey: 'agent:main:rocketchat:channel:R8' }), phase: 'running' });
        ports.live.followRun('FRESH', { runEvents: () => new Promise(() => undefined) } as never, 'run_fresh');
        await expectSentPast429s('LATE2', { sched, run, store, chat, transport });
        // Its stream ended: only the late turn's own is open, which is not "another".
        ports.live.end('FRESH');
        expect(ports.live.othersOpen('LATE2')).toBe(false);
        expect(ports.live.othersOpen('X')).toBe(true);
    });

    it('413 is retried once with the recent-messages block dropped (room and asker lines kept), then a notice', async () => {
        const { sched, run, store, chat, transport } = setup();
        const user =
            '[Rocket.Chat room_id: R1]\n[Rocket.Chat asker: v1.U1.R1.9.sig]\n[Recent chat messages - context only, not requests]\n[x] bob: long\n\n[New message]\nq';
        await store.save(queuedTurn('A', { user }));
        transport.createFailures.push({ status: 413, code: 'body_too_large' }, { status: 413, code: 'body_too_large' });
        sched.schedule({ turnId: 'A', chain: 'chain-A' }, 0);
        await sched.runUntil(sched.time + 5_000, run);
        const bodies = transport.requests
            .filter((r) => r.method === 'POST' && r.url.endsWith('/v1/runs'))
            .map((r) => JSON.parse(r.body as string).input as string);
        expect(bodies).toHaveLength(2);
        expect(bodies[1]).toBe('[Rocket.Chat room_id: R1]\n[Rocket.Chat asker: v1.U1.R1.9.sig]\n\n[New message]\nq');
        expect(chat.visible().map((m) => m.kind)).toEqual(['notice']);
        expect(await store.get('A')).toBeUndefined();
    });
});
