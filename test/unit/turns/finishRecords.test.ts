import { finish } from '../../../src/turns/finish';
import { Outcome } from '../../../src/turns/observe';
import { TickPorts } from '../../../src/turns/tickPorts';
import { Usage, UsagePort } from '../../../src/usage/usage';
import { TEST_CONFIG } from '../../support/turnPorts';
import { answer, failPosts, leaseWrites, paragraphs, runningTurn } from '../../support/finishTurn';

/**
 * Finishing a turn, what it leaves besides its messages: a scheduled prompt's delivery and the
 * report of its run, the usage receipt, the thread followed for its asker, and which of its
 * side records (a stop request) go with it.
 */

const dm = { kind: 'dm', roomType: 'd' } as const;

describe('a scheduled prompt', () => {
    type CronReport = Parameters<NonNullable<TickPorts['cronDone']>>;

    async function cronRun(outcome: Outcome, maxMessageSize = 5000, failures: Array<Error | undefined> = []) {
        const reports: CronReport[] = [];
        const env = await runningTurn(
            { cron: { jobId: 'job-1', name: 'Daily digest' } },
            {
                server: async () => ({ maxMessageSize, siteUrl: 'https://chat.example.com' }),
                cronDone: async (...report) => {
                    reports.push(report);
                },
            },
        );
        const writes = leaseWrites(env.ports);
        failPosts(env.chat, failures);
        await finish(env.rec, outcome, env.ports);
        return { ...env, reports, writes };
    }

    it("opens its answer with the job's header instead of quoting a question, and reports it delivered", async () => {
        const env = await cronRun(answer('All quiet.'));
        expect(env.chat.visible().map((m) => [m.kind, m.text])).toEqual([['answer', '**[Cron delivery: Daily digest]**\nAll quiet.']]);
        expect(env.reports).toEqual([['job-1', env.rec.id, { at: env.sched.time, status: 'delivered', error: undefined }]]);
        expect(env.logs.pop()).toBe(`Turn message ${env.rec.id} in room R1 delivered after 4000 ms.`);
    });

    it('puts the header on the first part only', async () => {
        const [first, second] = paragraphs(2, 100);
        const env = await cronRun(answer(`${first}\n\n${second}`), 160);
        expect(env.chat.answers().map((m) => m.text)).toEqual([`**[Cron delivery: Daily digest]**\n${first}`, second]);
    });

    it('posts nothing for an answer of exactly [SILENT], and reports it silent', async () => {
        const env = await cronRun(answer('  [SILENT]\n'));
        expect(env.chat.messages).toEqual([]);
        expect(env.reports).toEqual([['job-1', env.rec.id, { at: env.sched.time, status: 'silent', error: undefined }]]);
        expect(env.writes[0].delivery).toEqual({ kind: 'answer', parts: [], posted: [], startedAt: env.sched.time, summary: 'delivered nothing ([SILENT])' });
        expect(env.logs.pop()).toBe(`Turn message ${env.rec.id} in room R1 delivered nothing ([SILENT]) after 4000 ms.`);
    });

    it('posts an answer that only mentions [SILENT]', async () => {
        const env = await cronRun(answer('Nothing new [SILENT]'));
        expect(env.chat.answers().map((m) => m.text)).toEqual(['**[Cron delivery: Daily digest]**\nNothing new [SILENT]']);
        expect(env.reports[0][2].status).toBe('delivered');
    });

    it("reports a failed run with its notice's name, and delivers the notice under the header", async () => {
        const env = await cronRun({ kind: 'failed', failure: 'notice_unreachable', detail: 'ECONNREFUSED' });
        expect(env.chat.visible().map((m) => [m.kind, m.text])).toEqual([
            ['notice', '**[Cron delivery: Daily digest]**\n:warning: Hermes could not be reached. Please try again in a moment.'],
        ]);
        expect(env.reports).toEqual([['job-1', env.rec.id, { at: env.sched.time, status: 'failed', error: 'unreachable' }]]);
        expect(env.writes[0].delivery?.summary).toBe('ended with a notice');
    });

    it('reports a stopped run as failed, saying who stopped it', async () => {
        const env = await cronRun({ kind: 'stopped', by: 'bob' });
        expect(env.chat.visible().map((m) => m.text)).toEqual(['**[Cron delivery: Daily digest]**\n:stop_button: Stopped by @bob.']);
        expect(env.reports).toEqual([['job-1', env.rec.id, { at: env.sched.time, status: 'failed', error: 'stopped by bob' }]]);
    });

    it('reports an answer that could not be posted as failed', async () => {
        const env = await cronRun(answer('All quiet.'), 5000, [new Error('boom')]);
        expect(env.reports).toEqual([['job-1', env.rec.id, { at: env.sched.time, status: 'failed', error: undefined }]]);
    });
});

describe('the usage receipt', () => {
    type Recorded = Parameters<UsagePort['record']>;

    function usagePort(calls: Recorded[], failure?: Error): UsagePort {
        return {
            record: async (...args) => {
                calls.push(args);
                if (failure) {
                    throw failure;
                }
            },
            today: async () => ({}),
            over: async () => ({ turns: 0, in: 0, out: 0 }),
        };
    }

    async function receipt(outcome: Outcome, failures: Array<Error | undefined> = []) {
        const calls: Recorded[] = [];
        const env = await runningTurn(dm, { usage: usagePort(calls) });
        env.sched.time = Date.parse('2025-05-06T12:00:00Z');
        failPosts(env.chat, failures);
        await finish(env.rec, outcome, env.ports);
        return { ...env, calls };
    }

    const used: Usage = { in: 1200, out: 80 };

    it("counts an answer's tokens against the asker and the room for the day, with the turn's receipt", async () => {
        const env = await receipt(answer('hi', { usage: used }));
        // With the answer's message, session and run: what a vote on the answer is recorded with.
        expect(env.calls).toEqual([
            [
                '2025-05-06',
                'U1',
                'R1',
                { in: 1200, out: 80 },
                {
                    receipt: env.rec.id,
                    answered: true,
                    answers: ['m1'],
                    sessionId: env.rec.sessionId,
                    runId: 'run_1',
                    // What /hermes retry and undo find the exchange by: a print of the text sent, never the text.
                    exchange: {
                        key: 'agent:main:rocketchat:channel:R1:U1',
                        question: env.rec.id,
                        askerUsername: 'alice',
                        threadId: undefined,
                        print: '1d453ac5',
                        at: env.sched.time,
                    },
                },
            ],
        ]);
        expect(JSON.stringify(env.calls)).not.toContain(env.rec.user);
    });

    it('writes the receipt without tokens for an answer that could not be posted', async () => {
        const env = await receipt(answer('hi', { usage: used }), [new Error('boom')]);
        expect(env.calls).toEqual([['2025-05-06', 'U1', 'R1', undefined, { receipt: env.rec.id, answered: false }]]);
    });

    it('writes the receipt without tokens for a failed turn', async () => {
        const env = await receipt({ kind: 'failed', failure: 'notice_unreachable', detail: 'ECONNREFUSED' });
        expect(env.calls).toEqual([['2025-05-06', 'U1', 'R1', undefined, { receipt: env.rec.id, answered: false }]]);
    });

    it("counts the day in the app's time zone", async () => {
        const calls: Recorded[] = [];
        const env = await runningTurn(dm, { config: { ...TEST_CONFIG, timezone: 'Pacific/Auckland' }, usage: usagePort(calls) });
        env.sched.time = Date.parse('2025-05-06T12:00:00Z');
        await finish(env.rec, answer('hi'), env.ports);
        expect(calls.map((c) => c[0])).toEqual(['2025-05-07']);
    });

    it('logs a receipt that could not be written, and ends the turn with its answer', async () => {
        const calls: Recorded[] = [];
        const env = await runningTurn(dm, { usage: usagePort(calls, new Error('usage store down')) });
        await finish(env.rec, answer('hi', { usage: used }), env.ports);
        expect(calls).toHaveLength(1);
        expect(env.logs).toContain(`Usage of message ${env.rec.id} in room R1 could not be recorded: usage store down`);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['hi']);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });
});

describe('following the thread', () => {
    async function followed(over: Parameters<typeof runningTurn>[0], outcome: Outcome = answer('hi'), failure?: Error) {
        const follows: string[][] = [];
        const env = await runningTurn(over, {
            follow: async (threadId, askerId) => {
                follows.push([threadId, askerId]);
                if (failure) {
                    throw failure;
                }
            },
        });
        await finish(env.rec, outcome, env.ports);
        return { ...env, follows };
    }

    it('follows a room thread the answer went to, for its asker', async () => {
        const env = await followed({ threadId: 'TH1' });
        expect(env.follows).toEqual([['TH1', 'U1']]);
    });

    it('follows nothing for an answer outside a thread, in a DM thread, or a private one', async () => {
        expect((await followed({})).follows).toEqual([]);
        expect((await followed({ ...dm, threadId: 'TH1' })).follows).toEqual([]);
        expect((await followed({ threadId: 'TH1', privateTo: 'U1' })).follows).toEqual([]);
    });

    it('follows nothing when the thread saw no answer', async () => {
        expect((await followed({ threadId: 'TH1' }, { kind: 'failed', failure: 'notice_unreachable', detail: 'x' })).follows).toEqual([]);
        expect((await followed({ threadId: 'TH1' }, { kind: 'stopped', by: 'bob' })).follows).toEqual([]);
    });

    it('logs a follow that failed, and ends the turn', async () => {
        const env = await followed({ threadId: 'TH1' }, answer('hi'), new Error('not a member'));
        expect(env.logs).toContain('Following thread TH1 failed: not a member');
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });
});

describe('the stop request', () => {
    it('goes with a stopped turn', async () => {
        const env = await runningTurn();
        await env.store.requestStop(env.rec.id, 'bob');
        await finish(env.rec, { kind: 'stopped', by: 'bob' }, env.ports);
        expect(env.store.stops.has(env.rec.id)).toBe(false);
    });

    it('is left to the sweep when the turn ended otherwise (it came as the turn ended)', async () => {
        const env = await runningTurn();
        await env.store.requestStop(env.rec.id, 'bob');
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.store.stops.get(env.rec.id)).toBe('bob');
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });
});
