import { IHttp, ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IJobContext, IProcessor } from '@rocket.chat/apps-engine/definition/scheduler';
import { StartupType } from '@rocket.chat/apps-engine/definition/scheduler/IProcessor';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { EngineChat } from '../delivery/engineChat';
import { ServerInfoCache } from '../delivery/serverInfo';
import { CapabilitiesCache } from '../hermes/capabilitiesCache';
import { HermesClient } from '../hermes/client';
import { LiveTurns } from '../hermes/liveTurns';
import { HermesTransport } from '../hermes/transport';
import { AskerTokens, askerTokenIn, expireAskerTokens } from '../security/askerTokens';
import { LogPort } from '../security/safeLog';
import { ConfigHolder } from '../settings/configHolder';
import { HermesConfig } from '../settings/config';
import { ensureConfig } from '../settings/ensureConfig';
import { EngineSessions, expireSessions } from '../sessions/engineSessions';
import { EngineTurns } from './engineTurns';
import { Receipts } from './receipts';
import { sweepTurns } from './sweep';
import { tick } from './tick';
import { TickJob, TickPorts } from './tickPorts';

export const TURN_JOB = 'hermes-turn';
export const SWEEP_JOB = 'hermes-sweep';

export interface JobDeps {
    config: ConfigHolder;
    transport: HermesTransport;
    live: LiveTurns;
    capabilities: CapabilitiesCache;
    serverInfo: ServerInfoCache;
    /**
     * The log of the current call. The engine runs a processor with `this` bound to the app
     * proxied for that call, which is the only way to reach the call's logger from a job.
     */
    log: (callApp: { getLogger(): ILogger }) => LogPort;
}

/** Schedules a tick of a turn as a one-time job (the scheduler survives app restarts); resolves with its job id. */
export async function scheduleTick(modify: IModify, job: TickJob, delayMs: number): Promise<string | void> {
    const data: Record<string, unknown> = { turnId: job.turnId, chain: job.chain };
    if (job.wake) {
        data.wake = true;
    }
    return modify.getScheduler().scheduleOnce({ id: TURN_JOB, when: new Date(Date.now() + Math.max(0, delayMs)), data });
}

/** The ports a tick needs, on the engine's accessors of the current call. */
export function engineTickPorts(deps: JobDeps, config: HermesConfig, bot: IUser, read: IRead, modify: IModify, persis: IPersistence, log: LogPort): TickPorts {
    const hermes = new HermesClient(deps.transport, config);
    return {
        config,
        hermes,
        capabilities: () => deps.capabilities.get(hermes, `${config.hermesUrl}#${config.hermesTransport}`),
        store: new EngineTurns(read.getPersistenceReader(), persis),
        sessions: new EngineSessions(read.getPersistenceReader(), persis),
        chat: new EngineChat(read, modify, bot),
        server: (fresh?: boolean) => deps.serverInfo.get(read, fresh),
        live: deps.live,
        schedule: (job, delayMs) => scheduleTick(modify, job, delayMs),
        cancel: (jobId) => modify.getScheduler().cancelJob(jobId),
        markNewestToken: async (sessionKey, userText) => {
            const token = config.askerKey ? askerTokenIn(userText) : undefined;
            if (token) {
                await new AskerTokens(read.getPersistenceReader(), persis).markNewest(sessionKey, token);
            }
        },
        log,
        now: () => Date.now(),
    };
}

/**
 * The scheduler processors: `hermes-turn` advances one turn by one short step;
 * `hermes-sweep` (every 10 s, and at start: one persistence read) restarts turns whose chains were lost and
 * expires old receipts.
 */
export function turnProcessors(deps: JobDeps): IProcessor[] {
    let bot: IUser | undefined;
    const appUser = async (read: IRead) => (bot ??= await read.getUserReader().getAppUser());
    return [
        {
            id: TURN_JOB,
            processor: async function (this: { getLogger(): ILogger }, job: IJobContext, read: IRead, modify: IModify, _http: IHttp, persis: IPersistence) {
                const log = deps.log(this);
                const config = await ensureConfig(deps.config, read, log, persis);
                const user = await appUser(read);
                if (!config || !user || typeof job.turnId !== 'string') {
                    return;
                }
                const tickJob: TickJob = { turnId: job.turnId, chain: typeof job.chain === 'string' ? job.chain : undefined, wake: job.wake === true, jobId: typeof job.jobId === 'string' ? job.jobId : undefined };
                await tick(tickJob, engineTickPorts(deps, config, user, read, modify, persis, log));
            },
        },
        {
            id: SWEEP_JOB,
            startupSetting: { type: StartupType.RECURRING, interval: '10 seconds' },
            processor: async function (this: { getLogger(): ILogger }, _job: IJobContext, read: IRead, modify: IModify, _http: IHttp, persis: IPersistence) {
                const log = deps.log(this);
                const now = Date.now();
                await ensureConfig(deps.config, read, log, persis);
                const turns = new EngineTurns(read.getPersistenceReader(), persis);
                await sweepTurns({ store: turns, schedule: (job, delayMs) => scheduleTick(modify, job, delayMs), log, now: () => Date.now() });
                // Each of these works at most once a day per process (or every few minutes), so most sweeps cost one read.
                await new Receipts(read.getPersistenceReader(), persis).expire(now);
                await expireSessions(read.getPersistenceReader(), persis, now);
                await expireAskerTokens(persis, now);
                await turns.removeOrphanStops(now);
            },
        },
    ];
}
