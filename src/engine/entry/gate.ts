import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { MessageKey, preferenceOf } from '../../i18n/messages';
import { AccessFacts, accessRefusal, Need } from '../../admission/access';
import { SafeLog } from '../../security/safeLog';
import { HermesConfig } from '../../settings/config';
import { roomHasBot, userInRoom, userMayPost } from '../adapters/membership';
import { AppState } from '../appState';
import { CallPorts } from '../callPorts';

/** The accessors the engine hands one call. */
export interface Accessors {
    read: IRead;
    modify: IModify;
    persistence: IPersistence;
    logger: ILogger;
}

/** How a person's request came in: the name the log and the refusal notice use. */
export type Way = 'command' | 'action-button' | 'block-action' | 'view-submit';

/**
 * What a person's request names. Every id here came from the client (Rocket.Chat converts a
 * UIKit interaction's `rid` / `mid`, a view's id and a slash command's room by id, without an
 * access check: `apps/meteor/app/apps/server/communication/uikit.ts`, the commands bridge), so
 * each is a claim until the gate has checked it against the server's data.
 */
export interface Subject {
    /** The room, when the server already converted it from the client's id (a command's room, an interaction's `rid`). */
    room?: IRoom;
    /** Otherwise its id (from a view id or a record the request named): read here. */
    roomId?: string;
    /** A message the server converted from the client's `mid`: its `room` is the server's. */
    message?: IMessage;
    /** A message named only by id (a view id): read here. */
    messageId?: string;
    /** A message action names a message even when the server found none for its `mid`: then it is in no room. */
    messageNamed?: boolean;
    /** A thread named by its root's id (a command's `tmid`): read here. */
    threadId?: string;
    need: Need;
}

/** A request the gate let through: its ports, and the room and messages as the server has them. */
export interface Admitted {
    call: CallPorts;
    config: HermesConfig | undefined;
    bot: IUser;
    user: IUser;
    room: IRoom;
    message?: IMessage;
    /** The caller's language preference: what only they read is in it. */
    language?: string;
}

const NOTICE: Record<Way, MessageKey> = {
    command: 'command_not_available',
    'action-button': 'action_not_available',
    'block-action': 'action_not_available',
    'view-submit': 'action_not_available',
};

/**
 * The one way into the app. An entry point gets its ports (`CallPorts`) only from here, so none
 * can skip the checks (the lint refuses `CallPorts.open` anywhere else). Server events and jobs
 * carry no caller's claim: the server let the sender post (it checks membership before
 * `sendMessage`), and a job names only the app's own records. A person's request (the slash
 * command, a button, a view) names a room and maybe a message or thread that the client chose:
 * `person` resolves them and checks the caller against them before anything else is read or
 * written. A refusal is one private line, the same for every reason (a caller learns nothing
 * about a room they are not in), and a log line with ids only.
 */
export class Gate {
    constructor(private readonly app: AppState) {}

    /** A message posted or edited: the server's event is its own proof of who may post there. */
    public event(a: Accessors): Promise<CallPorts> {
        return CallPorts.open(this.app, a.read, a.modify, a.persistence, a.logger);
    }

    /** A scheduler job: it names only the app's own records (a turn, the sweep), each re-checked where it acts. */
    public job(a: Accessors): Promise<CallPorts> {
        return CallPorts.open(this.app, a.read, a.modify, a.persistence, a.logger);
    }

    /** The bot user, read once per process (AppState's cache): an endpoint needs it to tell its rooms. */
    public botUser(read: Accessors['read']): Promise<IUser | undefined> {
        return this.app.botUser(read);
    }

    /** An HTTP endpoint: the configuration and log only; the caller proves itself with its JWT and asker token there. */
    public endpoint(a: Pick<Accessors, 'read' | 'persistence' | 'logger'>): Promise<{ log: SafeLog; config: HermesConfig | undefined }> {
        return this.app.loadConfig(a.read, a.logger, a.persistence);
    }

    /**
     * An MCP tool call that may write (engine/entry/McpEndpoint.ts): the endpoint proved the
     * caller with its secret, the tool turns the asker token into a person and checks that
     * person against the room the model named (engine/adapters/cronTargets.ts `actingPlace`)
     * before it proposes anything; nothing is done before that person's click.
     */
    public tool(a: Accessors): Promise<CallPorts> {
        return CallPorts.open(this.app, a.read, a.modify, a.persistence, a.logger);
    }

    /** A person's request: admitted with its ports, or refused (one private line, one log line) and undefined. */
    public async person(way: Way, a: Accessors, user: IUser, subject: Subject): Promise<Admitted | undefined> {
        const call = await CallPorts.open(this.app, a.read, a.modify, a.persistence, a.logger);
        const { bot, config } = call;
        if (!bot) {
            return undefined;
        }
        const room = subject.room ?? (subject.roomId ? await a.read.getRoomReader().getById(subject.roomId) : undefined);
        const facts = await this.facts(a.read, user, bot, room, subject);
        const refusal = accessRefusal(facts, config);
        if (!refusal && room) {
            return { call, config, bot, user, room, message: subject.message, language: preferenceOf(user) };
        }
        const named = [subject.message?.id ?? subject.messageId, subject.threadId].filter(Boolean).join(', ');
        call.log.info(`Refused ${way} from ${user.id} naming room ${room?.id ?? subject.roomId ?? '-'}${named ? ` (${named})` : ''}: ${refusal}.`);
        if (room && refusal !== 'own-command') {
            const notice = NOTICE[way];
            await call.chat(room).whisper(user.id, { roomId: room.id }, (tr) => tr(notice));
        }
        return undefined;
    }

    /** Reads what the request's claims need, side by side; nothing is read for a room that does not exist. */
    private async facts(read: IRead, user: IUser, bot: IUser, room: IRoom | undefined, subject: Subject): Promise<AccessFacts> {
        const base = { caller: { id: user.id, username: user.username }, botId: bot.id, need: subject.need };
        if (!room) {
            return { ...base, callerIsMember: false, botIsMember: false, callerMayPost: false };
        }
        const messages = read.getMessageReader();
        const inRoom = async (id: string | undefined, given?: IMessage, named = false) => {
            if (!id && !given && !named) {
                return undefined;
            }
            const message = given ?? (id ? await messages.getById(id) : undefined);
            return message?.room?.id === room.id;
        };
        const [callerIsMember, botIsMember, messageInRoom, threadInRoom, callerMayPost] = await Promise.all([
            userInRoom(read, user.id, room),
            roomHasBot(read, room, bot.id),
            inRoom(subject.messageId, subject.message, subject.messageNamed),
            inRoom(subject.threadId),
            subject.need === 'post' ? userMayPost(read, user, room) : Promise.resolve(true),
        ]);
        return {
            ...base,
            room: { type: String(room.type), directMemberCount: room.userIds?.length },
            callerIsMember,
            botIsMember,
            messageInRoom,
            threadInRoom,
            callerMayPost,
        };
    }
}
