import { IHttp, IModify, IPersistence } from '@rocket.chat/apps-engine/definition/accessors';
import { IProcessor } from '@rocket.chat/apps-engine/definition/scheduler';
import { AppState } from '../../../src/engine/appState';
import { Gate } from '../../../src/engine/entry/gate';
import { jobLogger } from '../../../src/engine/entry/jobLogger';
import { settingsReportProcessor } from '../../../src/engine/entry/SettingsReport';
import { sweepAfterStart, turnProcessors } from '../../../src/engine/entry/TurnJobs';
import { FetchTransport } from '../../../src/hermes/fetchTransport';
import { fakeRead, memoryLog } from '../../support/fakeEngine';
import { MemoryPersistence } from '../../support/memoryPersistence';

/**
 * Rocket.Chat 7.13 and 8.0 ship Apps-Engine 1.58 and 1.59, whose Deno runtime runs a job as
 * `processor.processor(context, read, modify, http, persis)` (1.58.0
 * `deno-runtime/handlers/scheduler-handler.ts`): `this` is the processor object. 1.62.0 calls
 * `processor.processor.call(wrapAppForRequest(app, request), …)`: `this` is the app for that
 * call. Every scheduled job used to throw `this.getLogger is not a function` on the former.
 */
describe('scheduler jobs on every engine the app declares', () => {
    const store = new MemoryPersistence();
    // No settings: each job opens its call, finds no configuration and logs that it has none.
    const read = fakeRead({ settings: {}, botId: 'bot', memberships: {} }, store);
    const scheduled: unknown[] = [];
    const modify = { getScheduler: () => ({ scheduleOnce: async (job: unknown) => void scheduled.push(job) }) } as unknown as IModify;
    const accessors = [read, modify, {} as IHttp, store.write as IPersistence] as const;

    /** The start sweep's look at the minute before the process started (missedMessages.ts), as the processor called it. */
    const missedCalls: unknown[] = [];

    function processors(appLog: ReturnType<typeof memoryLog>): IProcessor[] {
        const state = new AppState(new FetchTransport());
        const appLogger = () => appLog.logger as never;
        const missed = async (a: unknown, window: unknown) => {
            missedCalls.push([a, window]);
            return 0;
        };
        return [...turnProcessors(new Gate(state), appLogger, missed), settingsReportProcessor(state, appLogger)];
    }

    it('runs every processor called as engine 1.58 calls it (this = the processor), logging to the app logger', async () => {
        const appLog = memoryLog();
        const all = processors(appLog);
        expect(all.map((p) => p.id)).toEqual([
            'hermes-turn',
            'hermes-turn-1',
            'hermes-turn-2',
            'hermes-turn-3',
            'hermes-turn-4',
            'hermes-turn-5',
            'hermes-turn-6',
            'hermes-turn-7',
            'hermes-sweep',
            'hermes-sweep-start',
            'hermes-missed',
            'hermes-sweep-run',
            'hermes-settings-report',
        ]);
        for (const p of all) {
            // A method call, exactly as 1.58's handler makes it.
            await expect(p.processor({ turnId: 't1' }, ...accessors)).resolves.toBeUndefined();
        }
        // The recurring sweep only handed its work to a one-time run (TurnJobs.ts: its lock is held for one call).
        expect(scheduled).toEqual([{ id: 'hermes-sweep-run', when: expect.any(Date) }]);
        // The missed messages are looked at only in the window their job carries, on the call's own accessors.
        expect(missedCalls).toEqual([]);
        const start = all.find((p) => p.id === 'hermes-missed') as IProcessor;
        await start.processor({ since: 1_000, until: 2_000 }, ...accessors);
        expect(missedCalls).toEqual([
            [
                { read, modify, persistence: store.write, logger: appLog.logger },
                { since: 1_000, until: 2_000 },
            ],
        ]);
        // The settings report names the missing setting in the log it was handed: the app's own here.
        expect(appLog.lines.join('\n')).toMatch(/hermes_url/);
    });

    it('uses the logger of the call when the engine binds the app for the call (1.60 and later)', async () => {
        const appLog = memoryLog();
        const callLog = memoryLog();
        const report = processors(appLog).find((p) => p.id === 'hermes-settings-report') as IProcessor;
        await report.processor.call({ getLogger: () => callLog.logger }, {}, ...accessors);
        expect(callLog.lines.join('\n')).toMatch(/hermes_url/);
        expect(appLog.lines).toEqual([]);
    });

    it('a starting process schedules its look at missed messages 1 s ahead and its own sweep 11 s ahead; a scheduler that refuses does not fail the start', async () => {
        const jobs: Array<{ id: string; when: Date; data: unknown }> = [];
        const log = memoryLog();
        const before = Date.now();
        await sweepAfterStart(
            { scheduleOnce: async (job: { id: string; when: Date; data: unknown }) => void jobs.push(job) } as never,
            log.logger as never,
            500_000,
        );
        expect(jobs.map((j) => j.id)).toEqual(['hermes-missed', 'hermes-sweep-start']);
        // The minute before the process started, to the end of its start (onEnable): whichever instance runs the job reads that.
        expect(jobs[0].data).toEqual({ since: 440_000, until: expect.any(Number) });
        expect((jobs[0].data as { until: number }).until).toBeGreaterThanOrEqual(before);
        expect(jobs[0].when.getTime() - before).toBeGreaterThanOrEqual(1_000);
        expect(jobs[0].when.getTime() - Date.now()).toBeLessThanOrEqual(1_000);
        expect(jobs[1].data).toBeUndefined();
        expect(jobs[1].when.getTime() - before).toBeGreaterThanOrEqual(11_000);
        expect(jobs[1].when.getTime() - Date.now()).toBeLessThanOrEqual(11_000);
        await expect(
            sweepAfterStart({ scheduleOnce: async () => Promise.reject(new Error('no scheduler')) } as never, log.logger as never),
        ).resolves.toBeUndefined();
        expect(log.lines).toEqual([
            expect.stringContaining('The sweep after this start could not be scheduled: no scheduler'),
            expect.stringContaining('The sweep after this start could not be scheduled: no scheduler'),
        ]);
    });

    it('jobLogger: a bound getLogger wins, anything else falls back', () => {
        const own = memoryLog().logger as never;
        const bound = memoryLog().logger as never;
        expect(jobLogger({ getLogger: () => bound }, () => own)).toBe(bound);
        expect(jobLogger({ id: 'hermes-turn', processor: () => undefined }, () => own)).toBe(own);
        expect(jobLogger(undefined, () => own)).toBe(own);
        expect(jobLogger({ getLogger: 'not a function' }, () => own)).toBe(own);
    });
});
