import { IHttp, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IApp } from '@rocket.chat/apps-engine/definition/IApp';
import { ISlashCommand, SlashCommandContext } from '@rocket.chat/apps-engine/definition/slashcommands';
import { conversationKind } from '../../admission/admit';
import { admitCommand } from '../../commands/commandAdmission';
import { policyForRoom } from '../../policy/roomPolicy';
import { conversationLink } from '../../delivery/quote';
import { OwnedSession } from '../../sessions/sessionIndex';
import { commandSessionKey } from '../../commands/conversationScope';
import { runCommand } from '../../commands/runCommand';
import { helpText } from '../../commands/statusText';
import { parseTextCommand } from '../../commands/textCommand';
import { preferenceOf, translator } from '../../i18n/messages';
import { roomHasBot } from '../adapters/membership';
import { AppState, CallPorts } from '../callPorts';

/**
 * `/hermes new|reset|stop|status|help`. Works in every room the bot is in (a message
 * starting with `/` never reaches the app as text), for the people a message would be
 * answered for, and every answer is visible only to the caller. The command itself is the
 * same runner as `@bot /new` and `!new` (commands/runCommand.ts).
 */
export class HermesCommand implements ISlashCommand {
    public command = 'hermes';
    public i18nParamsExample = 'command_usage';
    public i18nDescription = 'command_description';
    public providesPreview = false;

    constructor(
        private readonly owner: IApp,
        private readonly app: AppState,
    ) {}

    public async executor(context: SlashCommandContext, read: IRead, modify: IModify, _http: IHttp, persistence: IPersistence): Promise<void> {
        const args = context.getArguments();
        const sub = (args[0] ?? 'help').toLowerCase();
        const sender = context.getSender();
        // Every answer of the command is private: in the caller's language (their Rocket.Chat preference).
        const language = preferenceOf(sender);
        const t = translator(language);
        const room = context.getRoom();
        const call = await CallPorts.open(this.app, read, modify, persistence, this.owner.getLogger());
        const { bot, config, log } = call;
        if (!bot) {
            return;
        }
        const reply = async (text: string) => {
            const message = modify.getCreator().startMessage().setRoom(room).setSender(bot).setText(text).setGroupable(false);
            const threadId = context.getThreadId();
            if (threadId) {
                message.setThreadId(threadId);
            }
            await modify.getNotifier().notifyUser(sender, message.getMessage());
        };
        const admission = admitCommand(
            { id: sender.id, username: sender.username },
            { type: String(room.type), directMemberCount: room.userIds?.length },
            { botId: bot.id, botIsMember: await roomHasBot(read, room, bot.id) },
            config,
        );
        if (!admission.admit) {
            log.debug(`Refused /hermes from ${sender.id} in room ${room.id}: ${admission.reason}.`);
            // One private line, the same for every reason: the person typed a command and
            // should know it did nothing, but learns no session, version or reason.
            return admission.reason === 'own-command' ? undefined : reply(t('command_not_available'));
        }
        if (!config) {
            return sub === 'help' ? reply(helpText(bot.username, t)) : reply(t('notice_not-configured'));
        }
        const command = parseTextCommand(['/' + sub, ...args.slice(1)].join(' '));
        if (!command || command.kind === 'unknown') {
            return reply(t('command_usage'));
        }
        const threadId = context.getThreadId();
        const isDm = conversationKind({ roomType: String(room.type), directMemberCount: room.userIds?.length }) === 'dm';
        const policy = policyForRoom(config, room.id, isDm);
        const key = commandSessionKey(
            {
                roomType: String(room.type),
                roomId: room.id,
                directMemberCount: room.userIds?.length,
                threadId,
                userId: sender.id,
                profile: policy.kind === 'entry' ? policy.policy.profile : undefined,
            },
            config,
        );
        const { siteUrl } = await this.app.serverInfo.get(read);
        const ports = {
            ...call.commands(config),
            ...call.commandExtras(config),
            usage: call.usage(),
            room: policy,
            unfollow: threadId ? () => call.follows().remove(threadId) : undefined,
            scope: { roomId: room.id, roomType: String(room.type), roomName: room.slugifiedName, threadId, kind: isDm ? ('dm' as const) : ('room' as const) },
            link: (entry: OwnedSession) => conversationLink(siteUrl, entry),
            language,
        };
        const answer = await runCommand(command, { id: sender.id, username: sender.username }, key, ports, 'hermes ');
        return reply(answer.text);
    }
}
