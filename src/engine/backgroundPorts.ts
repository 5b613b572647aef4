import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { randomUUID } from 'crypto';
import { ActionPorts, startActionTurn } from '../actions/actionTurn';
import { conversationKind } from '../admission/admit';
import { BackgroundPorts } from '../commands/backgroundCommand';
import { triggerText } from '../context/contextBlock';
import { translator } from '../i18n/messages';
import { HermesConfig } from '../settings/config';
import { SafeLog } from '../security/safeLog';
import { EngineChat } from './adapters/engineChat';

/** The server refused the "started" message (a read-only room, a muted bot): the task does not start. */
class NotPosted extends Error {
    constructor(cause: unknown) {
        super(cause instanceof Error ? cause.message : String(cause));
    }
}

/** What of one engine call's ports (callPorts.ts) a background task uses. */
interface CallLike {
    read: IRead;
    log: SafeLog;
    chat(room?: IRoom): EngineChat;
    actionPorts(config: HermesConfig, notify: ActionPorts['notify']): ActionPorts;
}

/**
 * `/hermes background` on the engine: the room the command was run in (the gate admitted the
 * caller there), its "started" message posted once the task is admitted and claimed, then the
 * turn. Cost: the admission's reads, the claim, one post, the record's save and
 * the first tick's schedule.
 */
export function backgroundPorts(call: CallLike, config: HermesConfig, known?: IRoom): BackgroundPorts {
    return {
        newId: () => randomUUID().replace(/-/g, '').slice(0, 8),
        start: async (task) => {
            // The command's room, which the gate read already; read here only when the caller had none.
            const room = known?.id === task.roomId ? known : await call.read.getRoomReader().getById(task.roomId);
            if (!room) {
                return false;
            }
            const dm = conversationKind({ roomType: String(room.type), directMemberCount: room.userIds?.length }) === 'dm';
            const chat = call.chat(room);
            const here = { roomId: room.id, threadId: task.threadId };
            const notify: ActionPorts['notify'] = (text) => chat.whisper(task.who.id, here, text);
            // The "started" message is posted before the turn is stored: if the bot may not post here, no task.
            return startActionTurn(
                {
                    id: task.turnId,
                    kind: 'background',
                    asker: task.who,
                    room: { id: room.id, type: String(room.type), name: room.slugifiedName, directMemberCount: room.userIds?.length },
                    private: false,
                    user: triggerText(task.prompt),
                    conversation: dm ? 'dm' : undefined,
                    place: async () => {
                        // Public: in the server's language, as the answer under it will be.
                        const text = translator()(dm ? 'background_started_dm' : 'background_started', { id: task.id, user: task.who.username });
                        const started = await chat.post(here, text, 'command', { turnId: task.turnId }).catch((e: unknown) => {
                            throw new NotPosted(e);
                        });
                        // In a room the answer goes under it (or in the thread it was asked in: threads do not nest).
                        return { threadId: task.threadId ?? (dm ? undefined : started), question: started };
                    },
                },
                call.actionPorts(config, notify),
            ).catch(async (e: unknown) => {
                if (!(e instanceof NotPosted)) {
                    throw e;
                }
                call.log.warn(`Background task ${task.id} in room ${room.id} not started, its message refused: ${e.message}`);
                await notify((t) => t('background_not_posted')).catch(() => undefined);
                return false;
            });
        },
    };
}
