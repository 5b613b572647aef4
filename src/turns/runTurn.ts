import { parseTextCommand, TextCommand } from '../commands/textCommand';
import { helpText, statusText } from '../commands/statusText';
import { HistoryPort } from '../context/historyPort';
import { ChatPort, ReplyTarget, ServerInfo } from '../delivery/chatPort';
import { deliver } from '../delivery/deliver';
import { BotMessageKind } from '../delivery/messageKind';
import { quotePrefix } from '../delivery/quote';
import { HermesClient } from '../hermes/client';
import { HermesError } from '../hermes/errors';
import { systemText } from '../hermes/systemText';
import { t, MessageKey } from '../i18n/messages';
import { LogPort } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { isAcceptableSessionId } from '../sessions/sessionId';
import { resetSession, SessionPort } from '../sessions/sessionRecord';
import { describeTurn, Turn, turnSessionKey } from './turn';
import { buildUserText } from './userText';

export interface TurnPorts {
    /** Undefined while the app has no usable configuration: the asker is told so. */
    config: HermesConfig | undefined;
    hermes: HermesClient | undefined;
    bot: { id: string; username: string };
    chat: ChatPort;
    history: HistoryPort;
    sessions: SessionPort;
    /** Server facts, possibly cached; `fresh` forces a new read. */
    server: (fresh?: boolean) => Promise<ServerInfo>;
    log: LogPort;
    now: () => number;
}

export type TurnOutcome =
    | { kind: 'answered'; sessionId: string }
    | { kind: 'command'; name: string }
    | { kind: 'failed'; failure: string };

/**
 * One turn from admitted message to exactly one visible outcome: a command's confirmation,
 * the answer, or a short notice naming what went wrong — posted where the answer belongs.
 */
export async function runTurn(turn: Turn, ports: TurnPorts): Promise<TurnOutcome> {
    const started = ports.now();
    const where = describeTurn(turn);
    const server = await ports.server();
    const reply = (text: string, kind: BotMessageKind) => post(turn, ports, server, text, kind, where);

    if (!ports.config || !ports.hermes) {
        ports.log.warn(`Turn for ${where} refused: the app has no valid configuration (see the settings errors above).`);
        await reply(t('notice_not-configured'), 'notice');
        return { kind: 'failed', failure: 'not-configured' };
    }
    const config = ports.config;
    const key = turnSessionKey(turn, config);

    const command = parseTextCommand(turn.text);
    if (command) {
        return runCommand(command, turn, key, ports, reply);
    }

    const session = await ports.sessions.get(key);
    try {
        const user = await buildUserText({ turn, config, bot: ports.bot, session, history: ports.history, log: ports.log });
        const answer = await ports.hermes.chat({
            sessionId: session.sessionId,
            sessionKey: key,
            system: systemText({ kind: turn.kind, roomId: turn.message.roomId, roomName: turn.roomName, threadId: turn.message.threadId, askerUsername: turn.message.senderUsername }),
            user,
            idempotencyKey: turn.message.id,
        });
        const rotated = answer.sessionId !== session.sessionId && isAcceptableSessionId(answer.sessionId);
        if (rotated || session.turns === 0) {
            // Written only when it changes something: the first turn (seeding is over) or a rotation by Hermes.
            await ports.sessions.save({ ...session, sessionId: rotated ? answer.sessionId : session.sessionId, turns: session.turns + 1 });
        }
        const text = answer.text.trim().length > 0 ? answer.text : t('notice_empty-answer');
        await reply(text, 'answer');
        ports.log.info(`Answered ${where} in ${ports.now() - started} ms (session ${rotated ? `${session.sessionId} -> ${answer.sessionId}` : session.sessionId}, ${answer.text.length} chars, finish ${answer.finishReason}).`);
        return { kind: 'answered', sessionId: answer.sessionId };
    } catch (error) {
        const failure = error instanceof HermesError ? error : undefined;
        const kind = failure?.kind ?? 'server-error';
        ports.log.error(`Hermes turn failed for ${where} after ${ports.now() - started} ms: ${failure ? failure.message : describeUnexpected(error)}`);
        await reply(t(`notice_${kind}` as MessageKey), 'notice');
        return { kind: 'failed', failure: kind };
    }
}

async function runCommand(
    command: TextCommand,
    turn: Turn,
    key: string,
    ports: TurnPorts,
    reply: (text: string, kind: BotMessageKind) => Promise<void>,
): Promise<TurnOutcome> {
    if (command.kind === 'unknown') {
        // Never passed on: Hermes's api_server would hand `/anything` to the model as text.
        await reply(t('notice_unknown-command', { name: command.name }), 'notice');
        return { kind: 'command', name: `unknown:${command.name}` };
    }
    switch (command.name) {
        case 'new':
        case 'reset': {
            const next = await resetSession(ports.sessions, key);
            ports.log.info(`Session ${key} reset by ${turn.message.senderId} (generation ${next.generation}).`);
            await reply(t('command_new'), 'command');
            break;
        }
        case 'status':
            await reply(await statusText(await ports.sessions.get(key), ports.hermes), 'command');
            break;
        case 'help':
            await reply(helpText(ports.bot.username), 'command');
            break;
    }
    return { kind: 'command', name: command.name };
}

/** Posts where the answer belongs; in a room's main channel the first message quotes the question. */
async function post(turn: Turn, ports: TurnPorts, server: ServerInfo, text: string, kind: BotMessageKind, where: string): Promise<void> {
    const target: ReplyTarget = { roomId: turn.message.roomId, threadId: turn.message.threadId };
    const m = turn.message;
    let quote: string | undefined;
    if (turn.kind === 'room' && !m.threadId) {
        // Without Site_Url a link would not render as a quote; the mention alone still notifies the asker.
        quote = server.siteUrl
            ? quotePrefix({ siteUrl: server.siteUrl, roomType: m.roomType, roomId: m.roomId, roomName: turn.roomName, messageId: m.id, askerUsername: m.senderUsername })
            : `@${m.senderUsername} `;
    }
    const freshMaxMessageSize = async () => (await ports.server(true)).maxMessageSize;
    await deliver({ target, text, kind, maxMessageSize: server.maxMessageSize, freshMaxMessageSize, firstPrefix: quote }, ports.chat, ports.log, where);
}

function describeUnexpected(error: unknown): string {
    return error instanceof Error ? `${error.name}: ${error.message}` : 'unknown error';
}
