import { IHttp, ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IJobContext, IProcessor } from '@rocket.chat/apps-engine/definition/scheduler';
import { StartupType } from '@rocket.chat/apps-engine/definition/scheduler/IProcessor';
import { fireDue } from '../../cron/fire';
import { sweepTurns } from '../../turns/sweep';
import { tick } from '../../turns/tick';
import { TickJob } from '../../turns/tickPorts';
import { expireAskerTokens } from '../adapters/askerTokens';
import { expireSessions } from '../adapters/engineSessions';
import { expireFollows } from '../adapters/threadFollows';
import { expireSummaries } from '../adapters/engineSummaries';
import { expireUsage } from '../adapters/engineUsage';
import { TURN_JOBS } from '../callPorts';
import { Gate } from './gate';
import { jobLogger } from './jobLogger';

const SWEEP_JOB = 'hermes-sweep';

/**
 * The scheduler processors: `hermes-turn` (and its lanes, callPorts.ts TURN_JOBS) advance one turn by one short step;
 * `hermes-sweep` (every 10 s, and at start: one persistence read each, the slots of max_parallel_turns are fields of the turn records it reads) restarts turns whose
 * chains were lost, starts scheduled prompts whose time has come, and expires old records. The call's logger comes from `this`
 * where the engine binds it, else from `appLogger` (jobLogger.ts: engines 1.58 and 1.59 bind nothing).
 */
export function turnProcessors(gate: Gate, appLogger: () => ILogger): IProcessor[] {
    return [
        ...TURN_JOBS.map((id): IProcessor => ({
            id,
            processor: async function (this: unknown, job: IJobContext, read: IRead, modify: IModify, _http: IHttp, persis: IPersistence) {
                const call = await gate.job({ read, modify, persistence: persis, logger: jobLogger(this, appLogger) });
                if (!call.config || !call.bot || typeof job.turnId !== 'string') {
                    return;
                }
                const tickJob: TickJob = { turnId: job.turnId, chain: str(job.chain), wake: job.wake === true, jobId: str(job.jobId) };
                await tick(tickJob, call.tick(call.config));
            },
        })),
        {
            id: SWEEP_JOB,
            startupSetting: { type: StartupType.RECURRING, interval: '10 seconds' },
            processor: async function (this: unknown, _job: IJobContext, read: IRead, modify: IModify, _http: IHttp, persis: IPersistence) {
                const call = await gate.job({ read, modify, persistence: persis, logger: jobLogger(this, appLogger) });
                const now = Date.now();
                await sweepTurns(call.sweep());
                // Scheduled prompts whose time has come: one read of the job list.
                if (call.config && call.bot) {
                    await fireDue(call.cronFire(call.config));
                }
                // Each of these works at most once a day per process (or every few minutes), so most sweeps cost one read.
                await call.receipts().expire(now);
                await expireSessions(read.getPersistenceReader(), persis, now);
                await expireFollows(read.getPersistenceReader(), persis, now);
                await expireSummaries(read.getPersistenceReader(), persis, now);
                await expireUsage(read.getPersistenceReader(), persis, now);
                await expireAskerTokens(persis, now);
                await call.turns().removeOrphanStops(now);
            },
        },
    ];
}

function str(value: unknown): string | undefined {
    return typeof value === 'string' ? value : undefined;
}
