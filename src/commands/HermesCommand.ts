import { IHttp, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IApp } from '@rocket.chat/apps-engine/definition/IApp';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { ISlashCommand, SlashCommandContext } from '@rocket.chat/apps-engine/definition/slashcommands';
import { HermesClient } from '../hermes/client';
import { HermesTransport } from '../hermes/transport';
import { LiveTurns } from '../hermes/liveTurns';
import { EngineTurns } from '../turns/engineTurns';
import { scheduleTick } from '../turns/TurnJobs';
import { t } from '../i18n/messages';
import { SafeLog } from '../security/safeLog';
import { ConfigHolder } from '../settings/configHolder';
import { ensureConfig } from '../settings/ensureConfig';
import { EngineSessions } from '../sessions/engineSessions';
import { admitCommand } from './commandAdmission';
import { commandSessionKey } from './conversationScope';
import { runCommand } from './runCommand';
import { helpText } from './statusText';
import { parseTextCommand } from './textCommand';

/**
 * `/hermes new|reset|status|help`. Works in every room the bot is in (a message starting
 * with `/` never reaches the app as text), for the people a message would be answered for,
 * and every answer is visible only to the caller.
 */
export class HermesCommand implements ISlashCommand {
    public command = 'hermes';
    public i18nParamsExample = 'command_usage';
    public i18nDescription = 'command_description';
    public providesPreview = false;

    constructor(private readonly app: IApp, private readonly config: ConfigHolder, private readonly transport: HermesTransport, private readonly live: LiveTurns) {}

    public async executor(context: SlashCommandContext, read: IRead, modify: IModify, _http: IHttp, persistence: IPersistence): Promise<void> {
        const [sub = 'help'] = context.getArguments().map((a) => a.toLowerCase());
        const sender = context.getSender();
        const room = context.getRoom();
        const bot = await read.getUserReader().getAppUser();
        const reply = async (text: string) => {
            const message = modify.getCreator().startMessage().setRoom(room).setText(text).setGroupable(false);
            if (bot) {
                message.setSender(bot);
            }
            const threadId = context.getThreadId();
            if (threadId) {
                message.setThreadId(threadId);
            }
            await modify.getNotifier().notifyUser(sender, message.getMessage());
        };
        const log = new SafeLog(this.app.getLogger());
        const config = await ensureConfig(this.config, read, log, persistence);
        log.setSecrets([config?.hermesApiKey, config?.endpointSecret, config?.askerKey]);
        if (!bot) {
            return;
        }
        const admission = admitCommand(
            { id: sender.id, username: sender.username },
            { type: String(room.type), directMemberCount: room.userIds?.length },
            { botId: bot.id, botIsMember: await botIsMember(read, room, bot.id) },
            config,
        );
        if (!admission.admit) {
            log.debug(`Refused /hermes from ${sender.id} in room ${room.id}: ${admission.reason}.`);
            // One private line, the same for every reason: the person typed a command and
            // should know it did nothing, but learns no session, version or reason.
            return admission.reason === 'own-command' ? undefined : reply(t('command_not_available'));
        }
        if (!config) {
            return sub === 'help' ? reply(helpText(bot.username)) : reply(t('notice_not-configured'));
        }
        const command = parseTextCommand(`/${sub}`);
        if (!command || command.kind === 'unknown') {
            return reply(t('command_usage'));
        }
        const key = commandSessionKey(
            { roomType: String(room.type), roomId: room.id, directMemberCount: room.userIds?.length, threadId: context.getThreadId(), userId: sender.id },
            config,
        );
        const answer = await runCommand(command, { id: sender.id, username: sender.username }, key, {
            config,
            hermes: new HermesClient(this.transport, config),
            sessions: new EngineSessions(read.getPersistenceReader(), persistence),
            turns: new EngineTurns(read.getPersistenceReader(), persistence),
            live: this.live,
            log,
            botUsername: bot.username,
            wake: async (rec) => {
                await scheduleTick(modify, { turnId: rec.id, chain: rec.chain, wake: true }, 0);
            },
        }, 'hermes ');
        return reply(answer.text);
    }
}

/** As for messages: the room's member list when the event carries it (direct rooms), else the bot's rooms. */
async function botIsMember(read: IRead, room: IRoom, botId: string): Promise<boolean> {
    if (room.userIds && room.userIds.length > 0) {
        return room.userIds.includes(botId);
    }
    return (await read.getUserReader().getUserRoomIds(botId)).includes(room.id);
}
