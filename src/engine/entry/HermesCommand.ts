import { IHttp, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IApp } from '@rocket.chat/apps-engine/definition/IApp';
import { ISlashCommand, SlashCommandContext } from '@rocket.chat/apps-engine/definition/slashcommands';
import { conversationKind } from '../../admission/admit';
import { policyForRoom } from '../../policy/roomPolicy';
import { conversationLink } from '../../delivery/quote';
import { OwnedSession } from '../../sessions/sessionIndex';
import { commandSessionKey } from '../../commands/conversationScope';
import { runCommand } from '../../commands/runCommand';
import { helpText } from '../../commands/statusText';
import { argumentsLine, commandNeed, parseTextCommand } from '../../admission/textCommand';
import { translator } from '../../i18n/messages';
import { AppState } from '../appState';
import { Gate } from './gate';

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
        private readonly gate: Gate,
    ) {}

    public async executor(context: SlashCommandContext, read: IRead, modify: IModify, _http: IHttp, persistence: IPersistence): Promise<void> {
        const args = context.getArguments();
        const sub = (args[0] ?? 'help').toLowerCase();
        const sender = context.getSender();
        const command = parseTextCommand(`/${sub} ${argumentsLine(sub, args.slice(1))}`);
        const threadId = context.getThreadId();
        // The room and thread are the client's claim (the server converts them by id without an access check): the gate checks them.
        const admitted = await this.gate.person('command', { read, modify, persistence, logger: this.owner.getLogger() }, sender, {
            room: context.getRoom(),
            threadId,
            need: commandNeed(command),
        });
        if (!admitted) {
            return;
        }
        const { call, config, bot, room, language } = admitted;
        // Every answer of the command is private: in the caller's language (their Rocket.Chat preference).
        const t = translator(language);
        const reply = async (text: string) => {
            const message = modify.getCreator().startMessage().setRoom(room).setSender(bot).setText(text).setGroupable(false);
            if (threadId) {
                message.setThreadId(threadId);
            }
            await modify.getNotifier().notifyUser(sender, message.getMessage());
        };
        if (!config) {
            return sub === 'help' ? reply(helpText(bot.username, t)) : reply(t('notice_not-configured'));
        }
        if (!command || command.kind === 'unknown') {
            return reply(t('command_usage'));
        }
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
            ...call.commandExtras(config, room),
            usage: call.usage(),
            room: policy,
            unfollow: threadId ? () => call.follows().remove(threadId) : undefined,
            scope: { roomId: room.id, roomType: String(room.type), roomName: room.slugifiedName, threadId, kind: isDm ? ('dm' as const) : ('room' as const) },
            link: (entry: OwnedSession) => conversationLink(siteUrl, entry),
            language,
        };
        const answer = await runCommand(command, { id: sender.id, username: sender.username }, key, ports, 'hermes ');
        // Empty: the command's own message said it (a background task's public "started").
        return answer.text ? reply(answer.text) : undefined;
    }
}
