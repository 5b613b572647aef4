import { ConversationKind, InboundMessage } from '../admission/admit';
import { ChatPort, ReplyTarget } from '../delivery/chatPort';
import { t, MessageKey } from '../i18n/messages';
import { HermesClient } from '../hermes/client';
import { HermesError } from '../hermes/errors';
import { systemText } from '../hermes/systemText';
import { LogPort } from '../security/safeLog';
import { isSharedSession, sessionKey, SessionScope } from '../sessions/sessionKey';
import { sessionIdFor } from '../sessions/sessionId';

export interface Turn {
    message: InboundMessage;
    kind: ConversationKind;
    /** The asker's text with the bot's mention removed. */
    text: string;
    roomName?: string;
}

export interface TurnDeps {
    /** Undefined while the app has no usable configuration: the asker is told so. */
    hermes: HermesClient | undefined;
    chat: ChatPort;
    log: LogPort;
    now: () => number;
}

export type TurnOutcome = { kind: 'answered'; sessionId: string } | { kind: 'failed'; failure: string };

export function scopeOf(turn: Turn): SessionScope {
    return {
        chatType: turn.kind === 'dm' ? 'dm' : 'channel',
        roomId: turn.message.roomId,
        threadId: turn.message.threadId,
        userId: turn.message.senderId,
    };
}

/** The user turn text: in a shared session Hermes needs to know who is speaking. */
export function userTurnText(turn: Turn): string {
    return isSharedSession(scopeOf(turn)) ? `[${turn.message.senderUsername}] ${turn.text}` : turn.text;
}

/**
 * One turn: ask Hermes, then post exactly one outcome where the answer belongs — the answer,
 * or a short notice naming what went wrong. The log names the cause with ids only.
 */
export async function runTurn(turn: Turn, deps: TurnDeps): Promise<TurnOutcome> {
    const started = deps.now();
    const target: ReplyTarget = { roomId: turn.message.roomId, threadId: turn.message.threadId };
    const scope = scopeOf(turn);
    const key = sessionKey(scope);
    const sessionId = sessionIdFor(key, 0);
    const where = `message ${turn.message.id} in room ${turn.message.roomId}${turn.message.threadId ? ` thread ${turn.message.threadId}` : ''}`;

    if (!deps.hermes) {
        deps.log.warn(`Turn for ${where} refused: the app has no valid configuration (see the settings errors above).`);
        await deps.chat.post(target, t('notice_not-configured'));
        return { kind: 'failed', failure: 'not-configured' };
    }

    try {
        const answer = await deps.hermes.chat({
            sessionId,
            sessionKey: key,
            system: systemText({ kind: turn.kind, roomId: turn.message.roomId, roomName: turn.roomName, threadId: turn.message.threadId, askerUsername: turn.message.senderUsername }),
            user: userTurnText(turn),
            idempotencyKey: turn.message.id,
        });
        const text = answer.text.trim().length > 0 ? answer.text : t('notice_empty-answer');
        await deps.chat.post(target, text);
        deps.log.info(`Answered ${where} in ${deps.now() - started} ms (session ${answer.sessionId}, ${answer.text.length} chars, finish ${answer.finishReason}).`);
        return { kind: 'answered', sessionId: answer.sessionId };
    } catch (error) {
        const failure = error instanceof HermesError ? error : undefined;
        const kind = failure?.kind ?? 'server-error';
        deps.log.error(`Hermes turn failed for ${where} after ${deps.now() - started} ms: ${failure ? failure.message : describeUnexpected(error)}`);
        await deps.chat.post(target, t(`notice_${kind}` as MessageKey));
        return { kind: 'failed', failure: kind };
    }
}

function describeUnexpected(error: unknown): string {
    return error instanceof Error ? `${error.name}: ${error.message}` : 'unknown error';
}
