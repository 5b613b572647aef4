import { HermesClient } from '../hermes/client';
import { DEFAULT_ROOM_POLICY } from '../policy/policyLines';
import { describePolicy } from '../policy/roomPolicy';
import { translator } from '../i18n/messages';
import { resetSession } from '../sessions/sessionRecord';
import { stopBackgroundTurn, stopTurn } from '../turns/stopTurn';
import { helpText, statusText } from './statusText';
import { HermesSessions } from '../hermes/sessionsApi';
import { cronCommand } from './cronCommands';
import { shortCount, Totals, usageDay, UsagePort } from '../usage/usage';
import { resumeCommand, SessionCommandPorts, sessionsCommand, titleCommand } from './sessionCommands';
import { searchCommand } from './sessionSearch';
import { commandAllowed, TextCommand, TextCommandName } from '../admission/textCommand';
import { exchangeCommand } from './exchangeCommands';
import { CommandPorts, CommandReply } from './commandPorts';
import { backgroundCommand, backgroundTurnOf } from './backgroundCommand';

/**
 * Every command, however it arrived (`/hermes new`, `@bot /new`, `!new` in a DM): the
 * allowlist (default deny, admins may run everything), then the command itself in the
 * conversation `sessionKey`. The caller delivers the reply its way (privately for the slash
 * command, in place for text).
 */
/** `prefix` is how the command was typed before its name (`hermes ` for the slash command), for the refusal text. */
export async function runCommand(
    command: TextCommand,
    who: { id: string; username: string },
    sessionKey: string,
    ports: CommandPorts,
    prefix = '',
): Promise<CommandReply> {
    // Shadows the module's `t`: this reply is in the language of whoever reads it (ports.language).
    const t = translator(ports.language);
    if (command.kind === 'unknown') {
        // Never passed on: Hermes's api_server would hand `/anything` to the model as text.
        return { text: t('notice_unknown-command', { name: command.name }), kind: 'notice' };
    }
    if (!commandAllowed(command.name, who.id, ports.config)) {
        ports.log.info(`Command ${command.name} refused for ${who.id} (not in command_allowlist).`);
        return { text: t('notice_command_not_allowed', { name: `${prefix}${command.name}` }), kind: 'notice' };
    }
    switch (command.name) {
        case 'new':
        case 'reset': {
            const next = await resetSession(ports.sessions, sessionKey);
            ports.log.info(`Session ${sessionKey} reset by ${who.id} (generation ${next.generation}).`);
            return { text: t('command_new'), kind: 'command' };
        }
        case 'stop': {
            const stopPorts = {
                store: ports.turns,
                hermes: ports.hermes,
                live: ports.live,
                log: ports.log,
                isAdmin: ports.config.adminUserIds.includes(who.id),
                wake: ports.wake,
            };
            // `stop <id>`: a background task, wherever it runs; `stop`: this conversation's turn.
            const task = command.args.trim();
            const turnId = task ? backgroundTurnOf(task) : undefined;
            const stopped = task ? turnId && (await stopBackgroundTurn(turnId, who, stopPorts)) : await stopTurn(sessionKey, who, stopPorts);
            return { text: t(stopped ? 'notice_stop_sent' : task ? 'notice_stop_no_task' : 'notice_stop_none'), kind: 'command' };
        }
        case 'background':
            if (!ports.background || !ports.scope) {
                return { text: t('command_not_here'), kind: 'command' };
            }
            return {
                text: await backgroundCommand(command.args, who, ports.scope, { ...ports.background, log: ports.log, language: ports.language }),
                kind: 'command',
            };
        case 'status':
            return {
                text: await statusText(
                    await ports.sessions.get(sessionKey),
                    ports.hermes,
                    describePolicy(ports.room ?? { kind: 'default', policy: DEFAULT_ROOM_POLICY }, t),
                    t,
                ),
                kind: 'command',
            };
        case 'unfollow': {
            if (!ports.unfollow) {
                return { text: t('command_unfollow_not_thread'), kind: 'command' };
            }
            const was = await ports.unfollow();
            ports.log.info(`Thread unfollowed by ${who.id}${was ? '' : ' (it was not followed)'}.`);
            return { text: t(was ? 'command_unfollow_done' : 'command_unfollow_none'), kind: 'command' };
        }
        case 'help':
            return { text: helpText(ports.botUsername, t), kind: 'command' };
        case 'cron':
            if (!ports.cron || !ports.scope) {
                return { text: t('command_not_here'), kind: 'command' };
            }
            return {
                text: await cronCommand(
                    command.args,
                    who,
                    { ...ports.scope, roomType: ports.scope.roomType ?? 'c' },
                    { ...ports.cron, config: ports.config, now: Date.now, language: ports.language },
                ),
                kind: 'command',
            };
        case 'usage':
            return { text: await usageCommand(command.args, who.id, ports), kind: 'command' };
        case 'retry':
        case 'undo':
            return { text: await runExchangeCommand(command.name, who, sessionKey, ports), kind: 'command' };
        case 'sethome':
        case 'automation':
            return { text: await roomSettingCommand(command.name, command.args, ports), kind: 'command' };
        default:
            return { text: await runSessionCommand(command.name, command.args, who, sessionKey, ports), kind: 'command' };
    }
}

/** `/hermes usage [room|all]`: the asker's day, week and month; a room's or everyone's for admins. */
async function usageCommand(args: string, userId: string, ports: CommandPorts): Promise<string> {
    const t = translator(ports.language);
    const asked = args.trim().toLowerCase();
    const scope = asked === 'room' || asked === 'all' ? asked : 'mine';
    if (!ports.usage) {
        return t('command_not_here');
    }
    if ((scope === 'room' || scope === 'all') && !ports.config.adminUserIds.includes(userId)) {
        return t('usage_admin_only');
    }
    const who = scope === 'room' ? { roomId: ports.scope?.roomId } : scope === 'all' ? {} : { userId };
    const now = Date.now();
    const days = (n: number) => Array.from({ length: n }, (_, i) => usageDay(now - i * 86_400_000, ports.config.timezone));
    const [day, week, month] = await Promise.all([1, 7, 30].map((n) => (ports.usage as UsagePort).over(days(n), who)));
    const line = (x: Totals) => t('usage_line', { turns: x.turns, in: shortCount(x.in), out: shortCount(x.out) });
    const text = t(scope === 'room' ? 'usage_room' : scope === 'all' ? 'usage_all' : 'usage_mine', { day: line(day), week: line(week), month: line(month) });
    if (scope === 'mine' || !ports.feedback) {
        return text;
    }
    // An admin's view: the votes on answers of the room, or everyone's, over the same 30 days.
    const votes = await ports.feedback.counts(now - 30 * 86_400_000, { roomId: who.roomId });
    return `${text}\n${t('usage_feedback', votes)}`;
}

/** `sethome` and `automation on|off` in a room: the settings themselves change, so the admin form shows what is in force. */
async function roomSettingCommand(name: 'sethome' | 'automation', args: string, ports: CommandPorts): Promise<string> {
    const t = translator(ports.language);
    const roomId = ports.scope?.roomId;
    if (!roomId || !ports.updateSetting || ports.scope?.kind === 'dm') {
        return t('command_not_here');
    }
    if (name === 'sethome') {
        await ports.updateSetting('home_room_id', roomId);
        ports.log.info(`Home channel set to room ${roomId}.`);
        return t('sethome_done');
    }
    const on = /^on$/i.test(args.trim());
    if (!on && !/^off$/i.test(args.trim())) {
        return t('automation_usage');
    }
    const rooms = ports.config.automationRoomIds.filter((id) => id !== roomId);
    await ports.updateSetting('automation_room_ids', (on ? [...rooms, roomId] : rooms).join(', '));
    ports.log.info(`Room ${roomId} ${on ? 'is now' : 'is no longer'} an automation room.`);
    return t(on ? 'automation_on' : 'automation_off');
}

/** retry and undo: through the conversation's Hermes profile, where its transcript is. */
async function runExchangeCommand(name: 'retry' | 'undo', who: { id: string; username: string }, key: string, ports: CommandPorts): Promise<string> {
    if (!ports.exchange) {
        return translator(ports.language)('command_not_here');
    }
    return exchangeCommand(name, who, key, {
        ...ports.exchange,
        config: ports.config,
        hermes: profileClient(ports),
        sessions: ports.sessions,
        turns: ports.turns,
        log: ports.log,
        language: ports.language,
    });
}

/** The client of the room's Hermes profile (room_policies `profile=`), where the conversation's sessions live. */
function profileClient(ports: CommandPorts): HermesClient {
    const profile = ports.room?.kind === 'entry' ? ports.room.policy.profile : undefined;
    return profile ? ports.hermes.withRoute({ profile }) : ports.hermes;
}

/** title, sessions, resume, search: through the room's Hermes profile, answered privately by the caller. */
async function runSessionCommand(name: TextCommandName, args: string, who: { id: string }, key: string, ports: CommandPorts): Promise<string> {
    const t = translator(ports.language);
    if (!ports.index || !ports.scope) {
        return t('command_not_here');
    }
    const session: SessionCommandPorts = {
        api: new HermesSessions(profileClient(ports)),
        index: ports.index,
        sessions: ports.sessions,
        turns: ports.turns,
        log: ports.log,
        timeZone: ports.config.timezone,
        isAdmin: ports.config.adminUserIds.includes(who.id),
        now: Date.now,
        language: ports.language,
        // Bound here to the person running the command: no entry point can ask it about someone else.
        memberOf: ports.memberOf ? (roomId) => (ports.memberOf as NonNullable<CommandPorts['memberOf']>)(who.id, roomId) : undefined,
    };
    switch (name) {
        case 'title':
            return titleCommand(args, key, session);
        case 'sessions':
            return sessionsCommand(args, who.id, key, session);
        case 'resume':
            return resumeCommand(args, who, key, ports.scope, session);
        default:
            return searchCommand(args, who.id, key, ports.link ?? (() => undefined), session);
    }
}
