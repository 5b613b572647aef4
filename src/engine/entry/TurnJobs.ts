import { IHttp, ILogger, IModify, IPersistence, IRead, ISchedulerModify } from '@rocket.chat/apps-engine/definition/accessors';
import { IJobContext, IProcessor } from '@rocket.chat/apps-engine/definition/scheduler';
import { StartupType } from '@rocket.chat/apps-engine/definition/scheduler/IProcessor';
import { fireDue } from '../../cron/fire';
import { sweepTurns } from '../../turns/sweep';
import { GONE_MS } from '../../turns/owner';
import { MISSED_LOOKBACK_MS, PROCESS_STARTED_AT } from './missedFirst';
import { tick } from '../../turns/tick';
import { TickJob } from '../../turns/tickPorts';
import { expireAskerTokens } from '../adapters/askerTokens';
import { expireSessions } from '../adapters/engineSessions';
import { expireFollows } from '../adapters/threadFollows';
import { expireSummaries } from '../adapters/engineSummaries';
import { expireUsage } from '../adapters/engineUsage';
import { expireFeedback } from '../adapters/engineFeedback';
import { TURN_JOBS } from '../turnLanes';
import { Gate } from './gate';
import { jobLogger } from './jobLogger';

const SWEEP_JOB = 'hermes-sweep';
const SWEEP_RUN_JOB = 'hermes-sweep-run';
const SWEEP_RUN_DELAY_MS = 2_000;
const SWEEP_START_JOB = 'hermes-sweep-start';
/** A process that started (the engine restarted it, or its instance came up) sweeps once the one before it counts as gone. */
const SWEEP_START_AFTER_MS = GONE_MS + 1_000;
const MISSED_JOB = 'hermes-missed';
/**
 * And looks at the messages whose events died with the process before it much sooner: a question
 * asked after one of them through another instance must not reach Hermes first. Not at once:
 * another instance's event of a message posted just before this start stores its turn first.
 */
const MISSED_AFTER_MS = 1_000;

/**
 * Schedules the sweep a new app process owes the turns of the one it replaced (onEnable runs
 * on every start, and on the engine's restart of a killed process). Its own processor: a
 * processor whose job was running in the killed process stays busy until the engine's 30 s
 * timeout of that call (AppsEngineDenoRuntime waitForResponse), and `hermes-sweep-run` may be
 * that one; this sweep comes GONE_MS after the start whatever was running. Never fails the
 * start: the recurring sweep still comes.
 */
export async function sweepAfterStart(scheduler: ISchedulerModify, logger: ILogger, startedAt = PROCESS_STARTED_AT): Promise<void> {
    // The window of this process's start travels with the job: any instance may run it (one Agenda).
    // Until now (the end of onEnable): an event the engine sent while this process was loading found no handler.
    const data = { since: startedAt - MISSED_LOOKBACK_MS, until: Math.max(startedAt, Date.now()) };
    await Promise.all(
        [
            { id: MISSED_JOB, when: new Date(Date.now() + MISSED_AFTER_MS), data },
            { id: SWEEP_START_JOB, when: new Date(Date.now() + SWEEP_START_AFTER_MS) },
        ].map((job) =>
            scheduler
                .scheduleOnce(job)
                .catch((e: unknown) => logger.warn(`The sweep after this start could not be scheduled: ${e instanceof Error ? e.message : String(e)}`)),
        ),
    );
}

/**
 * The scheduler processors: `hermes-turn` (and its lanes, callPorts.ts TURN_JOBS) advance one turn by one short step;
 * `hermes-sweep-run` (one persistence read when nothing is due; the slots of max_parallel_turns are fields of the turn records it reads) restarts turns whose
 * chains were lost, starts scheduled prompts whose time has come, and expires old records. `hermes-sweep`, every 10 s and at
 * start, only hands each sweep to a `hermes-sweep-run` job: Agenda keeps a running recurring job locked for its lock lifetime
 * (10 min) when the instance running it dies, so the one recurring job must hold its lock for one scheduler call, not a whole
 * sweep; a one-time run that dies with its instance is simply followed by the next, 10 s later, on any instance. The call's
 * logger comes from `this` where the engine binds it, else from `appLogger` (jobLogger.ts: engines 1.58 and 1.59 bind nothing).
 */
export function turnProcessors(
    gate: Gate,
    appLogger: () => ILogger,
    missed?: (a: JobAccessors, window: { since: number; until: number }) => Promise<number>,
): IProcessor[] {
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
            processor: async (_job: IJobContext, _read: IRead, modify: IModify) => {
                // A little ahead, so the run does not start while this call still holds the lock.
                await modify.getScheduler().scheduleOnce({ id: SWEEP_RUN_JOB, when: new Date(Date.now() + SWEEP_RUN_DELAY_MS) });
            },
        },
        {
            id: SWEEP_START_JOB,
            processor: async function (this: unknown, _job: IJobContext, read: IRead, modify: IModify, _http: IHttp, persis: IPersistence) {
                const call = await gate.job({ read, modify, persistence: persis, logger: jobLogger(this, appLogger) });
                await sweepTurns(call.sweep());
            },
        },
        {
            id: MISSED_JOB,
            processor: async function (this: unknown, job: IJobContext, read: IRead, modify: IModify, _http: IHttp, persis: IPersistence) {
                const logger = jobLogger(this, appLogger);
                const call = await gate.job({ read, modify, persistence: persis, logger });
                // The messages whose event died with the process before their turn was stored (missedMessages.ts).
                const window = typeof job.since === 'number' && typeof job.until === 'number' ? { since: job.since, until: job.until } : undefined;
                const looked = window ? await missed?.({ read, modify, persistence: persis, logger }, window) : undefined;
                if (looked) {
                    call.log.debug(`Looked again at ${looked} messages of the minute before this app process started.`);
                }
            },
        },
        {
            id: SWEEP_RUN_JOB,
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
                await expireFeedback(read.getPersistenceReader(), persis, now);
                await expireAskerTokens(persis, now);
                await call.turns().removeOrphanStops(now);
            },
        },
    ];
}

type JobAccessors = { read: IRead; modify: IModify; persistence: IPersistence; logger: ILogger };

function str(value: unknown): string | undefined {
    return typeof value === 'string' ? value : undefined;
}
