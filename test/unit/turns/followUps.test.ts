import { HermesClient } from '../../../src/hermes/client';
import { HermesConfig } from '../../../src/settings/config';
import { beforeWait, endMerged, followUpMode, joinable, mergeFollowUps, newMessageOf, withEarlier } from '../../../src/turns/followUps';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { FinishedTurn } from '../../../src/usage/usage';
import { processMemory } from '../../../src/turns/processMemory';
import { memoryTickPorts, queuedTurn, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

/*
 * busy_input_mode's rules over in-memory ports (turns/followUps.ts). End to end: test/e2e/followUps.test.ts
 * (merge and queue on v0.18.2) and followUpsSteer.test.ts (a server that steers).
 */
const STEERS = { runs: true, runsLoadHistory: true, steer: true, version: 'newer' };
const V0182 = { runs: true, runsLoadHistory: false, steer: false, version: '0.18.2' };
const DM_KEY = 'agent:main:rocketchat:dm:D1';

function dmTurn(id: string, over: Partial<TurnRecord> = {}): TurnRecord {
    return queuedTurn(id, { sessionKey: DM_KEY, roomId: 'D1', roomType: 'd', kind: 'dm', user: `text of ${id}`, ...over });
}

function world(opts: { caps?: typeof STEERS; mode?: HermesConfig['busyInputMode']; steer?: (runId: string, input: string) => Promise<boolean> } = {}) {
    const sched = new VirtualScheduler();
    const steered: Array<[string, string]> = [];
    const receipts: Array<[string, FinishedTurn]> = [];
    const stopped: string[] = [];
    const hermes = {
        stopRun: async (runId: string) => void stopped.push(runId),
        steerRun: async (runId: string, input: string) => {
            steered.push([runId, input]);
            return opts.steer ? opts.steer(runId, input) : true;
        },
    } as unknown as HermesClient;
    const env = memoryTickPorts({
        sched,
        config: { ...TEST_CONFIG, busyInputMode: opts.mode ?? 'auto', reactions: true },
        hermes,
        capabilities: async () => opts.caps ?? STEERS,
        usage: {
            record: async (_day: string, _user: string, _room: string, _usage: unknown, turn: FinishedTurn) => void receipts.push([turn.receipt, turn]),
            today: async () => ({}),
            over: async () => ({ turns: 0, in: 0, out: 0 }),
        },
    });
    return { ...env, sched, steered, receipts, stopped };
}

describe('followUpMode', () => {
    const config = (busyInputMode: HermesConfig['busyInputMode'], hermesTransport: HermesConfig['hermesTransport'] = 'auto') => ({
        busyInputMode,
        hermesTransport,
    });
    it('auto steers where the run transport offers it, and merges everywhere else', () => {
        expect(followUpMode(config('auto'), STEERS)).toBe('steer');
        expect(followUpMode(config('auto', 'chat'), STEERS)).toBe('merge');
        expect(followUpMode(config('auto'), V0182)).toBe('merge');
        expect(followUpMode(config('auto'), { runs: true, runsLoadHistory: false })).toBe('merge');
    });
    it('steer falls back to merge on a server without it; merge and queue are what they say', () => {
        expect(followUpMode(config('steer'), V0182)).toBe('merge');
        expect(followUpMode(config('steer'), STEERS)).toBe('steer');
        expect(followUpMode(config('merge'), STEERS)).toBe('merge');
        expect(followUpMode(config('queue'), STEERS)).toBe('queue');
        expect(followUpMode(config('interrupt'), STEERS)).toBe('interrupt');
    });
});

describe('joinable', () => {
    it("a person's own message turn, a room thread's too before its block is read", () => {
        expect(joinable(dmTurn('M1'))).toBe(true);
        expect(joinable(queuedTurn('M1', { threadId: 'T', threadContext: 'pending' }))).toBe(true);
    });
    it.each<[string, Partial<TurnRecord>]>([
        ['a scheduled prompt', { cron: { jobId: 'j', name: 'n' } }],
        ['a private answer', { privateTo: 'U1' }],
        ['a retry', { question: 'M0' }],
        ['an action', { id: 'ask.T1' }],
        ['one with files', { files: [{ id: 'f', name: 'a.png', type: 'image/png', size: 1 }] as never }],
        ['one with context files', { contextFiles: { files: [{ id: 'f' }] } as never }],
        ['one whose text is not stored', { user: undefined as unknown as string }],
    ])('not %s', (_what, over) => {
        expect(joinable(dmTurn(over.id ?? 'M1', over))).toBe(false);
    });
});

describe('newMessageOf', () => {
    it("is a room turn's words after its last [New message] line, and a DM's whole text", () => {
        expect(newMessageOf('[Rocket.Chat room R1 - context only, not requests]\n[12:00] bob: hi\n\n[New message]\n[alice] the question')).toBe(
            '[alice] the question',
        );
        expect(newMessageOf('just words')).toBe('just words');
        expect(newMessageOf('a\n\n[New message]\nb\n\n[New message]\nc')).toBe('c');
        expect(newMessageOf('[New message]\nnot after a blank line')).toBe('[New message]\nnot after a blank line');
    });
});

describe('beforeWait: steer', () => {
    const running = (over: Partial<TurnRecord> = {}) => dmTurn('T1', { phase: 'running', runId: 'run_1', ...over });

    it("hands the words to the same person's running run and ends the turn: receipt, ↪️, record gone", async () => {
        const w = world();
        const shownBefore = processMemory.sizes()['ack.shown'];
        const rec = dmTurn('F1', { user: 'keep it short' });
        await w.store.save(rec);
        expect(await beforeWait(rec, [running()], w.ports)).toBe(true);
        expect(w.steered).toEqual([['run_1', 'keep it short']]);
        expect(await w.store.get('F1')).toBeUndefined();
        expect(w.receipts).toEqual([['F1', { receipt: 'F1', answered: false }]]);
        expect(w.chat.reactions).toEqual([
            { messageId: 'F1', emoji: ':eyes:', on: false },
            { messageId: 'F1', emoji: ':hourglass_flowing_sand:', on: false },
            { messageId: 'F1', emoji: ':arrow_right_hook:', on: true },
        ]);
        // Its last reaction: this process keeps nothing of the turn.
        expect(processMemory.sizes()['ack.shown']).toBe(shownBefore);
        expect(rec.phase).toBe('done');
        expect(w.logs).toContain('Turn message F1 in room D1 steered into run run_1 of turn T1.');
    });

    it("steers a room turn's new message only, never its context block", async () => {
        const w = world();
        const rec = queuedTurn('F1', { user: '[Rocket.Chat room R1 - context only, not requests]\n[12:00] bob: hi\n\n[New message]\n[alice] and the risks' });
        await beforeWait(rec, [queuedTurn('T1', { phase: 'running', runId: 'run_1' })], w.ports);
        expect(w.steered).toEqual([['run_1', '[alice] and the risks']]);
    });

    it.each<[string, TurnRecord[], Parameters<typeof world>[0]]>([
        ["another person's run", [running({ askerId: 'U2' })], {}],
        ['two turns ahead (one would be passed)', [running(), dmTurn('T2', { waiting: true, followUp: true })], {}],
        ['a server that cannot steer', [running()], { caps: V0182 }],
        ['busy_input_mode merge', [running()], { mode: 'merge' }],
    ])('does not steer past %s: the turn waits, noted as a follow-up', async (_what, ahead, opts) => {
        const w = world(opts);
        const rec = dmTurn('F1');
        await w.store.save(rec);
        expect(await beforeWait(rec, ahead, w.ports)).toBe(false);
        expect(rec.followUp).toBe(true);
        expect(w.steered).toEqual([]);
        expect(w.sched.pending).toEqual([]);
        expect(await w.store.get('F1')).toBeDefined();
    });

    it('busy_input_mode queue, or a turn that cannot join (a retry): nothing noted, nothing steered', async () => {
        for (const [opts, over] of [
            [{ mode: 'queue' as const }, {}],
            [{}, { question: 'M0' }],
        ] as const) {
            const w = world(opts);
            const rec = dmTurn('F1', over);
            expect(await beforeWait(rec, [running()], w.ports)).toBe(false);
            expect(rec.followUp).toBeUndefined();
            expect(w.steered).toEqual([]);
            expect(w.sched.pending).toEqual([]);
        }
    });

    it('the run ahead not named on its record yet (being sent): a follow-up, and it looks again in 500 ms to steer', async () => {
        const w = world();
        const rec = dmTurn('F1');
        expect(await beforeWait(rec, [running({ runId: undefined })], w.ports)).toBe(false);
        expect(rec.followUp).toBe(true);
        expect(w.sched.pending.map((p) => [p.job, p.at - w.sched.time])).toEqual([[{ turnId: 'F1', chain: rec.chain, wake: true }, 500]]);
        expect(w.steered).toEqual([]);
    });

    it('a run that takes no more input (409), or a failed request: the turn waits as a follow-up, and the log says why', async () => {
        const refused = world({ steer: async () => false });
        const rec = dmTurn('F1');
        await refused.store.save(rec);
        expect(await beforeWait(rec, [running()], refused.ports)).toBe(false);
        expect(rec.followUp).toBe(true);
        expect(await refused.store.get('F1')).toBeDefined();
        expect(refused.logs).toContain('Run run_1 took no more input: message F1 in room D1 waits for it (merged with what follows).');
        const failing = world({
            steer: async () => {
                throw new Error('boom');
            },
        });
        expect(await beforeWait(dmTurn('F2'), [running()], failing.ports)).toBe(false);
        expect(failing.logs[0]).toBe('Steering message F2 in room D1 into run run_1 failed: boom');
    });
});

describe('beforeWait: what makes a follow-up (merge)', () => {
    it('a turn ahead at Hermes (its run named, or being sent): a follow-up, no second look', async () => {
        for (const ahead of [[dmTurn('T1', { runId: 'run_1' })], [dmTurn('T1', { phase: 'running' })], [dmTurn('T0'), dmTurn('T1', { phase: 'running' })]]) {
            const w = world({ caps: V0182 });
            const rec = dmTurn('F1');
            await beforeWait(rec, ahead, w.ports);
            expect(rec.followUp).toBe(true);
            expect(w.sched.pending).toEqual([]);
        }
    });

    it('only a turn claimed by its event ahead (it may be being sent, or a burst): not yet, looked at again in 500 ms', async () => {
        const w = world({ caps: V0182 });
        const rec = dmTurn('F1');
        await beforeWait(rec, [dmTurn('T1', { owner: { process: 'P', at: 1, fresh: true } as never })], w.ports);
        expect(rec.followUp).toBeUndefined();
        expect(w.sched.pending.map((p) => [p.job, p.at - w.sched.time])).toEqual([[{ turnId: 'F1', chain: rec.chain, wake: true }, 500]]);
    });

    it('noted on a second look (already waiting): written then, since its wait writes nothing new; once', async () => {
        const w = world({ caps: V0182 });
        const rec = dmTurn('F1', { waiting: true });
        await w.store.save(rec);
        const before = w.store.saves;
        await beforeWait(rec, [dmTurn('T1', { runId: 'run_1' })], w.ports);
        expect(w.store.saves).toBe(before + 1);
        expect((await w.store.get('F1'))?.followUp).toBe(true);
        await beforeWait(rec, [dmTurn('T1', { runId: 'run_1' })], w.ports);
        expect(w.store.saves).toBe(before + 1);
        const first = dmTurn('F2');
        await beforeWait(first, [dmTurn('T1', { runId: 'run_1' })], w.ports);
        // Not waiting yet: its wait's own save writes it.
        expect(w.store.saves).toBe(before + 1);
    });

    it('a claimed turn among queued ones ahead: looked at again; a named run among them: a follow-up', async () => {
        const w = world({ caps: V0182 });
        const rec = dmTurn('F1');
        await beforeWait(rec, [dmTurn('T0', { waiting: true }), dmTurn('T1', { owner: { process: 'P', at: 1, fresh: true } as never })], w.ports);
        expect(rec.followUp).toBeUndefined();
        expect(w.sched.pending).toHaveLength(1);
        const named = dmTurn('F2');
        await beforeWait(named, [dmTurn('T0', { waiting: true }), dmTurn('T1', { runId: 'run_1' })], w.ports);
        expect(named.followUp).toBe(true);
        expect(w.sched.pending).toHaveLength(1);
    });

    it('only queued turns ahead: not a follow-up, no second look', async () => {
        const w = world({ caps: V0182 });
        const rec = dmTurn('F1');
        await beforeWait(rec, [dmTurn('T1', { waiting: true })], w.ports);
        expect(rec.followUp).toBeUndefined();
        expect(w.sched.pending).toEqual([]);
    });
});

describe('beforeWait: interrupt', () => {
    it("stops the same person's run ahead and asks its question again in this turn, first; written before the stop; once", async () => {
        const w = world({ caps: V0182, mode: 'interrupt' });
        await w.store.save(dmTurn('T1', { phase: 'running', runId: 'run_1', user: 'SLOW report please' }));
        const rec = dmTurn('F1', { user: 'also the budget' });
        expect(await beforeWait(rec, [dmTurn('T1', { phase: 'running', runId: 'run_1' })], w.ports)).toBe(false);
        expect(rec.user).toBe('SLOW report please\n\n[New message]\nalso the budget');
        expect(rec.followUp).toBe(true);
        expect((await w.store.get('F1'))?.user).toBe('SLOW report please\n\n[New message]\nalso the budget');
        expect(await w.store.stopRequest('T1')).toBe('alice');
        expect(w.stopped).toEqual(['run_1']);
        expect(w.logs).toContain('Turn message F1 in room D1 interrupts turn T1: its question is asked again with this one (busy_input_mode).');
        // Its next look (woken while the run stops) changes nothing.
        await beforeWait(rec, [dmTurn('T1', { phase: 'running', runId: 'run_1' })], w.ports);
        expect(rec.user).toBe('SLOW report please\n\n[New message]\nalso the budget');
        expect(w.stopped).toEqual(['run_1']);
    });

    it('over chat completions (no run id): the stop request alone stops it; a failed stop of a run is logged', async () => {
        const w = world({ caps: V0182, mode: 'interrupt' });
        await w.store.save(dmTurn('T1', { phase: 'running', user: 'SLOW report please' }));
        const rec = dmTurn('F1', { user: 'also the budget' });
        await beforeWait(rec, [dmTurn('T1', { phase: 'running' })], w.ports);
        expect(await w.store.stopRequest('T1')).toBe('alice');
        expect(w.stopped).toEqual([]);
        expect(rec.user).toBe('SLOW report please\n\n[New message]\nalso the budget');
        const failing = world({ caps: V0182, mode: 'interrupt' });
        (failing.ports.hermes as unknown as { stopRun: () => Promise<void> }).stopRun = async () => {
            throw new Error('gone');
        };
        await failing.store.save(dmTurn('T1', { phase: 'running', runId: 'run_1', user: 'x' }));
        await beforeWait(dmTurn('F1', { user: 'y' }), [dmTurn('T1', { phase: 'running', runId: 'run_1' })], failing.ports);
        expect(failing.logs).toContain('Stopping run run_1 for a follow-up failed: gone');
        expect(await failing.store.stopRequest('T1')).toBe('alice');
    });

    it("leaves alone a turn already delivering, another person's, or one not at Hermes", async () => {
        for (const [stored, ahead] of [
            [
                dmTurn('T1', { phase: 'running', runId: 'run_1', delivery: { kind: 'answer', parts: ['x'], posted: [], startedAt: 1, summary: 's' } }),
                dmTurn('T1', { phase: 'running', runId: 'run_1' }),
            ],
            [dmTurn('T1', { phase: 'running', runId: 'run_1', askerId: 'U2' }), dmTurn('T1', { phase: 'running', runId: 'run_1', askerId: 'U2' })],
            [dmTurn('T1'), dmTurn('T1')],
        ] as const) {
            const w = world({ caps: V0182, mode: 'interrupt' });
            await w.store.save(stored);
            const rec = dmTurn('F1', { user: 'also the budget' });
            await beforeWait(rec, [ahead], w.ports);
            expect(rec.user).toBe('also the budget');
            expect(await w.store.stopRequest('T1')).toBeUndefined();
            expect(w.stopped).toEqual([]);
        }
    });

    it("withEarlier puts the earlier new message before the turn's own, each after its own [New message]", () => {
        expect(withEarlier('[Rocket.Chat room R1 - context only, not requests]\n[x] y\n\n[New message]\n[alice] two', '[alice] one')).toBe(
            '[Rocket.Chat room R1 - context only, not requests]\n[x] y\n\n[New message]\n[alice] one\n\n[New message]\n[alice] two',
        );
        expect(withEarlier('two', 'one')).toBe('one\n\n[New message]\ntwo');
    });
});

describe('mergeFollowUps', () => {
    /** The turn about to go and the tickets of its session: its own follow-ups waiting, then someone else's. */
    async function setUp(w: ReturnType<typeof world>, extra: TurnRecord[] = []) {
        const rec = dmTurn('F1', { seq: 1, waiting: true, followUp: true, user: 'also the budget' });
        const g1 = dmTurn('G1', { seq: 2, waiting: true, followUp: true, user: 'and the risks' });
        const g2 = dmTurn('G2', {
            seq: 3,
            waiting: true,
            followUp: true,
            user: '[Rocket.Chat room - context only, not requests]\n[x] y\n\n[New message]\nthanks!',
        });
        for (const r of [rec, g1, g2, ...extra]) {
            await w.store.save(r);
        }
        return { rec, open: [rec, g1, g2, ...extra] };
    }

    it("takes in the same person's waiting turns right behind it, each as its own [New message]", async () => {
        const w = world({ caps: V0182 });
        const { rec, open } = await setUp(w, [
            dmTurn('H1', { seq: 4, waiting: true, followUp: true, askerId: 'U2' }),
            dmTurn('G3', { seq: 5, waiting: true, followUp: true }),
        ]);
        // The tickets come in any order: they are put in the session's order first.
        await mergeFollowUps(rec, [...open].reverse(), w.ports);
        expect(rec.user).toBe('also the budget\n\n[New message]\nand the risks\n\n[New message]\nthanks!');
        expect(rec.merged).toEqual(['G1', 'G2']);
        expect(w.chat.reactions.filter((r) => r.on)).toEqual([
            { messageId: 'G1', emoji: ':arrow_right_hook:', on: true },
            { messageId: 'G2', emoji: ':arrow_right_hook:', on: true },
        ]);
        expect(w.logs).toContain('Turn message F1 in room D1 takes in the follow-ups G1, G2 (busy_input_mode).');
    });

    it('stops at a turn whose text is not stored, one not waiting, one being sent or one of another session', async () => {
        for (const g1 of [
            dmTurn('G1', { seq: 2, waiting: true, followUp: true, user: undefined as unknown as string }),
            dmTurn('G1', { seq: 2 }),
            dmTurn('G1', { seq: 2, waiting: true }),
            dmTurn('G1', { seq: 2, waiting: true, followUp: true, runId: 'run_9' }),
            dmTurn('G1', { seq: 2, waiting: true, followUp: true, phase: 'running' }),
        ]) {
            const w = world({ caps: V0182 });
            const rec = dmTurn('F1', { seq: 1, waiting: true, followUp: true, user: 'also the budget' });
            await w.store.save(g1);
            await mergeFollowUps(rec, [rec, g1, dmTurn('G2', { seq: 3, waiting: true, followUp: true })], w.ports);
            expect(rec.user).toBe('also the budget');
            expect(rec.merged).toBeUndefined();
        }
        const w = world({ caps: V0182 });
        const rec = dmTurn('F1', { seq: 1, waiting: true, followUp: true });
        await mergeFollowUps(rec, [rec, dmTurn('G1', { seq: 2, waiting: true, followUp: true, sessionKey: 'other' })], w.ports);
        expect(rec.merged).toBeUndefined();
    });

    it('takes in nothing ahead of it, nothing with queue, nothing twice, nothing into a turn that cannot join or never waited (a burst)', async () => {
        for (const [opts, over] of [
            [{ mode: 'queue' as const }, {}],
            [{}, { merged: ['G0'] as string[] }],
            [{}, { question: 'M0' }],
            [{}, { followUp: undefined }],
        ] as const) {
            const w = world({ caps: V0182, ...opts });
            const { open } = await setUp(w);
            const rec = { ...open[0], ...over };
            await mergeFollowUps(rec, open, w.ports);
            expect(rec.user).toBe('also the budget');
        }
        const w = world({ caps: V0182 });
        const { open } = await setUp(w);
        const last = open[2];
        await mergeFollowUps(last, open, w.ports);
        expect(last.merged).toBeUndefined();
    });
});

describe('endMerged', () => {
    it('with the answer: each merged follow-up gets its receipt and ✅ (its ↪️ gone), and its record goes', async () => {
        const w = world();
        await w.store.save(dmTurn('E1', { waiting: true, followUp: true }));
        await endMerged(dmTurn('F1', { merged: ['E1'] }), 'answered', w.ports);
        expect(await w.store.get('E1')).toBeUndefined();
        expect(w.receipts).toEqual([['E1', { receipt: 'E1', answered: false }]]);
        expect(w.chat.reactions).toEqual([
            { messageId: 'E1', emoji: ':arrow_right_hook:', on: false },
            { messageId: 'E1', emoji: ':hourglass_flowing_sand:', on: false },
            { messageId: 'E1', emoji: ':eyes:', on: false },
            { messageId: 'E1', emoji: ':white_check_mark:', on: true },
        ]);
    });

    it('stopped: they end with ❌; failed: they stay, each to be sent on its own', async () => {
        const stopped = world();
        await stopped.store.save(dmTurn('E1', { waiting: true, followUp: true }));
        await endMerged(dmTurn('F1', { merged: ['E1'] }), 'stopped', stopped.ports);
        expect(stopped.chat.reactions.filter((r) => r.on)).toEqual([{ messageId: 'E1', emoji: ':x:', on: true }]);
        expect(await stopped.store.get('E1')).toBeUndefined();
        const failed = world();
        await failed.store.save(dmTurn('E1', { waiting: true, followUp: true }));
        await endMerged(dmTurn('F1', { merged: ['E1'] }), 'failed', failed.ports);
        expect(await failed.store.get('E1')).toBeDefined();
        expect(failed.receipts).toEqual([]);
        await endMerged(dmTurn('F1'), 'answered', failed.ports);
        expect(failed.receipts).toEqual([]);
    });
});
