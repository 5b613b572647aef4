import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { CronCommandPorts } from '../commands/cronCommands';
import { HermesConfig } from '../settings/config';
import { resolveCronTarget } from './adapters/cronTargets';
import { botPostingRefusal } from './adapters/membership';
import type { CallPorts } from './callPorts';

/** What `/hermes cron …` and the MCP tool `schedule_prompt` need of the engine: the jobs, their firing, and where a job may go. */
export function cronCommandPorts(call: CallPorts, config: HermesConfig): Omit<CronCommandPorts, 'config' | 'now'> {
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
