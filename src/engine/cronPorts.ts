import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { CronCommandPorts } from '../commands/cronCommandPorts';
import { HermesConfig } from '../settings/config';
import { resolveCronTarget } from './adapters/cronTargets';
import { botPostingRefusal } from './adapters/membership';
import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { EngineCron } from './adapters/engineCron';
import { FirePorts } from '../cron/fire';

/** What of one engine call's ports (callPorts.ts) the cron commands use. */
interface CallLike {
    read: IRead;
    bot: IUser | undefined;
    cron(): EngineCron;
    cronFire(config: HermesConfig): FirePorts;
}

/** What `/hermes cron …` and the MCP tool `schedule_prompt` need of the engine: the jobs, their firing, and where a job may go. */
export function cronCommandPorts(call: CallLike, config: HermesConfig): Omit<CronCommandPorts, 'config' | 'now'> {
    const bot = call.bot as IUser;
    return {
        store: call.cron(),
        fire: call.cronFire(config),
        resolveTo: (spec, userId) => resolveCronTarget(spec, call.read, bot.id, config.homeRoomId, userId, config),
        botCannotPost: async (place) => {
            const room = await call.read.getRoomReader().getById(place.roomId);
            return room ? botPostingRefusal(call.read, room, bot) : undefined;
        },
    };
}
