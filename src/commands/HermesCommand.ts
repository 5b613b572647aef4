import { IHttp, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IApp } from '@rocket.chat/apps-engine/definition/IApp';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { ISlashCommand, SlashCommandContext } from '@rocket.chat/apps-engine/definition/slashcommands';
import { HermesClient } from '../hermes/client';
import { HermesTransport } from '../hermes/transport';
import { LiveTurns } from '../hermes/liveTurns';
import { EngineTurns } from '../turns/engineTurns';
import { stopTurn } from '../turns/stopTurn';
import { t } from '../i18n/messages';
import { SafeLog } from '../security/safeLog';
import { ConfigHolder } from '../settings/configHolder';
import { ensureConfig } from '../settings/ensureConfig';
import { EngineSessions } from '../sessions/engineSessions';
import { resetSession } from '../sessions/sessionRecord';
import { admitCommand } from './commandAdmission';
import { commandSessionKey } from './conversationScope';
import { commandAllowed, TextCommandName } from './textCommand';
import { helpText, statusText } from './statusText';

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
        if (['new', 'reset', 'stop', 'status', 'help'].includes(sub) && !commandAllowed(sub as TextCommandName, sender.id, config)) {
            return reply(t('notice_command_not_allowed', { name: `hermes ${sub}` }));
        }
        if (sub === 'help') {
            return reply(helpText(bot.username));
        }
        const key = commandSessionKey(
            { roomType: String(room.type), roomId: room.id, directMemberCount: room.userIds?.length, threadId: context.getThreadId(), userId: sender.id },
            config,
        );
        const sessions = new EngineSessions(read.getPersistenceReader(), persistence);
        switch (sub) {
            case 'new':
            case 'reset': {
                const next = await resetSession(sessions, key);
                log.info(`Session ${key} reset by ${sender.id} with /hermes ${sub} (generation ${next.generation}).`);
                return reply(t('command_new'));
            }
            case 'stop': {
                const stopped = await stopTurn(key, { id: sender.id, username: sender.username }, {
                    store: new EngineTurns(read.getPersistenceReader(), persistence),
                    hermes: new HermesClient(this.transport, config),
                    live: this.live,
                    log,
                    isAdmin: config.adminUserIds.includes(sender.id),
                });
                return reply(t(stopped ? 'notice_stop_sent' : 'notice_stop_none'));
            }
            case 'status':
                return reply(await statusText(await sessions.get(key), new HermesClient(this.transport, config)));
            default:
                return reply(t('command_usage'));
        }
    }
}

/** As for messages: the room's member list when the event carries it (direct rooms), else the bot's rooms. */
async function botIsMember(read: IRead, room: IRoom, botId: string): Promise<boolean> {
    if (room.userIds && room.userIds.length > 0) {
        return room.userIds.includes(botId);
    }
    return (await read.getUserReader().getUserRoomIds(botId)).includes(room.id);
}
