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
import { LogPort } from '../security/safeLog';
import { ConfigHolder } from '../settings/configHolder';
import { ensureConfig } from '../settings/ensureConfig';
import { EngineSessions } from '../sessions/engineSessions';
import { EngineTurns } from './engineTurns';
import { Receipts } from './receipts';
import { HermesConfig } from '../settings/config';
import { tick, TickPorts } from './turnMachine';

export const TURN_JOB = 'hermes-turn';
export const SWEEP_JOB = 'hermes-sweep';
/** A turn whose record has not moved for this long has lost its tick (restart, lost job): the sweep restarts it. */
const STALE_MS = 20_000;

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

/** Schedules the next tick of a turn as a one-time job (the scheduler survives app restarts); resolves with its job id. */
export async function scheduleTick(modify: IModify, turnId: string, delayMs: number): Promise<string | void> {
    return modify.getScheduler().scheduleOnce({ id: TURN_JOB, when: new Date(Date.now() + Math.max(0, delayMs)), data: { turnId } });
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
        schedule: (turnId, delayMs) => scheduleTick(modify, turnId, delayMs),
        cancel: (jobId) => modify.getScheduler().cancelJob(jobId),
        log,
        now: () => Date.now(),
    };
}

/**
 * The scheduler processors: `hermes-turn` advances one turn by one tick; `hermes-sweep`
 * (every 30 s, and at start) restarts turns whose ticks were lost and expires old receipts.
 */
export function turnProcessors(deps: JobDeps): IProcessor[] {
    let bot: IUser | undefined;
    const appUser = async (read: IRead) => (bot ??= await read.getUserReader().getAppUser());
    return [
        {
            id: TURN_JOB,
            processor: async function (this: { getLogger(): ILogger }, job: IJobContext, read: IRead, modify: IModify, _http: IHttp, persis: IPersistence) {
                const log = deps.log(this);
                const config = await ensureConfig(deps.config, read, log);
                const user = await appUser(read);
                if (!config || !user || typeof job.turnId !== 'string') {
                    return;
                }
                await tick(job.turnId, engineTickPorts(deps, config, user, read, modify, persis, log));
            },
        },
        {
            id: SWEEP_JOB,
            startupSetting: { type: StartupType.RECURRING, interval: '30 seconds' },
            processor: async function (this: { getLogger(): ILogger }, _job: IJobContext, read: IRead, modify: IModify, _http: IHttp, persis: IPersistence) {
                const turns = new EngineTurns(read.getPersistenceReader(), persis);
                const open = await turns.open();
                const now = Date.now();
                for (const rec of open) {
                    const lastMove = Math.max(rec.tickAt ?? 0, rec.startedAt ?? 0, rec.createdAt, rec.retryAt ?? 0);
                    if (now - lastMove > STALE_MS) {
                        await scheduleTick(modify, rec.id, 0);
                    }
                }
                await new Receipts(read.getPersistenceReader(), persis).expire(now);
                if (open.length > 0) {
                    deps.log(this).debug(`Sweep: ${open.length} open turn(s).`);
                }
            },
        },
    ];
}
