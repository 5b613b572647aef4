import { IRoomRead } from '@rocket.chat/apps-engine/definition/accessors';
import { randomUUID } from 'crypto';
import { startActionTurn } from '../actions/actionTurn';
import { conversationKind } from '../admission/admit';
import { ExchangeEnginePorts } from '../commands/exchangeCommands';
import { messageLink } from '../delivery/quote';
import { HermesClient } from '../hermes/client';
import { Exchange } from '../sessions/exchanges';
import { HermesConfig } from '../settings/config';
import { EngineExchanges } from './adapters/engineExchanges';
import { ActionPorts } from '../actions/actionTurn';
import { AppState } from './appState';
import { EngineChat } from './adapters/engineChat';
import { IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { SafeLog } from '../security/safeLog';

/** What of one engine call's ports (callPorts.ts) a retry or undo uses. */
interface CallLike {
    app: AppState;
    read: IRead;
    persistence: IPersistence;
    log: SafeLog;
    chat(room?: IRoom): EngineChat;
    actionPorts(config: HermesConfig, notify: ActionPorts['notify']): ActionPorts;
}

/** What `/hermes retry` and `undo` need of the engine (commands/exchangeCommands.ts). */
export function exchangePorts(call: CallLike, config: HermesConfig): ExchangeEnginePorts {
    const hermes = call.app.hermes(config) as HermesClient;
    const chat = call.chat();
    // The answers edited are the bot's own, in the room its own usage row names: never an id from the request.
    // The exchange's room, read once for its link and its retry.
    let roomRead: ReturnType<IRoomRead['getById']> | undefined;
    const room = (roomId: string) => (roomRead ??= call.read.getRoomReader().getById(roomId));
    return {
        capabilities: () => call.app.capabilities.get(hermes, `${config.hermesUrl}#${config.hermesTransport}`),
        exchanges: new EngineExchanges(call.read.getPersistenceReader(), call.persistence, config.timezone),
        replace: async (x, id, text) => {
            await (text === undefined ? chat.remove(id, x.roomId) : chat.edit(id, x.roomId, text, undefined)).catch((e: unknown) =>
                call.log.warn(`Answer ${id} could not be ${text === undefined ? 'removed' : 'edited'}: ${e instanceof Error ? e.message : String(e)}`),
            );
        },
        mark: async (x, id, line) => {
            await chat
                .prepend(id, x.roomId, line)
                .catch((e: unknown) => call.log.warn(`Answer ${id} could not be marked: ${e instanceof Error ? e.message : String(e)}`));
        },
        linkTo: async (x: Exchange) => {
            const [{ siteUrl }, found] = await Promise.all([call.app.serverInfo.get(call.read), room(x.roomId)]);
            return siteUrl && found
                ? messageLink(siteUrl, { roomType: String(found.type), roomId: found.id, roomName: found.slugifiedName }, x.question)
                : undefined;
        },
        ask: async (x, input, callerId) => {
            const found = await room(x.roomId);
            if (!found) {
                return false;
            }
            const dm = conversationKind({ roomType: String(found.type), directMemberCount: found.userIds?.length }) === 'dm';
            return startActionTurn(
                {
                    id: `retry.${randomUUID()}`,
                    kind: 'retry',
                    asker: { id: x.askerId, username: x.askerUsername },
                    room: { id: found.id, type: String(found.type), name: found.slugifiedName, directMemberCount: found.userIds?.length },
                    threadId: x.threadId,
                    private: false,
                    sessionKey: x.key,
                    user: input,
                    conversation: dm ? 'dm' : undefined,
                    question: x.question,
                },
                call.actionPorts(config, (text) => call.chat(found).whisper(callerId, { roomId: found.id, threadId: x.threadId }, text)),
            );
        },
    };
}
