import { Usage, usageOf } from '../usage/usage';
import { clipAnswer, ImagePart, userContent } from './content';
import { HermesError } from './errors';
import { SseFrame, SseParser } from './sse';
import { HermesWire, parseJson, str, tryJson } from './wire';

/*
 * The chat-completions transport (`POST /v1/chat/completions`): one turn whole or streamed, its
 * tool progress frames, the session id Hermes answers with.
 */

export interface ChatTurn {
    sessionId: string;
    sessionKey: string;
    system: string;
    user: string;
    /** Images for this turn only (Hermes keeps `[screenshot]` in the transcript, not the pixels). Ask `takesImages` first. */
    images?: ImagePart[];
    /** The Rocket.Chat message id: Hermes de-duplicates a replayed request with it. */
    idempotencyKey: string;
}

export interface ChatAnswer {
    text: string;
    /** The session id Hermes used; differs from the one sent when Hermes rotated the transcript. */
    sessionId: string;
    finishReason: string;
    /** The answer was longer than MAX_ANSWER_CHARS; `text` is its beginning. */
    truncated?: boolean;
    /** Tokens in and out, when Hermes reported them. */
    usage?: Usage;
}

/** A progress frame of a streamed chat completion (`hermes.tool.progress`). */
export interface ToolProgress {
    tool: string;
    label?: string;
    emoji?: string;
    status?: string;
}

export async function chat(wire: HermesWire, turn: ChatTurn): Promise<ChatAnswer> {
    const result = await wire.call('POST', '/v1/chat/completions', chatHeaders(turn), chatBody(wire, turn, false));
    const parsed = parseJson(result.body);
    const choice = (parsed as { choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }> })?.choices?.[0];
    const text = choice?.message?.content;
    if (typeof text !== 'string') {
        throw new HermesError('malformed', 'chat completion without choices[0].message.content');
    }
    const returnedId = result.headers['x-hermes-session-id'];
    const clipped = clipAnswer(text);
    return {
        text: clipped.text,
        sessionId: returnedId && returnedId.length > 0 ? returnedId : turn.sessionId,
        finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : 'stop',
        truncated: clipped.truncated,
        usage: usageOf((parsed as { usage?: unknown })?.usage),
    };
}

/**
 * The chat turn streamed, so tool progress and the answer so far (`onText`, after each content
 * delta) arrive while the agent works. The connection must stay open: Hermes interrupts the
 * agent when the client leaves.
 */
export async function chatStream(
    wire: HermesWire,
    turn: ChatTurn,
    onProgress: (p: ToolProgress) => void,
    signal?: AbortSignal,
    onText?: (text: string) => void,
): Promise<ChatAnswer> {
    const parser = new SseParser();
    let text = '';
    let truncated = false;
    let finishReason = 'stop';
    let usage: Usage | undefined;
    let sawDone = false;
    const onFrame = (frame: SseFrame) => {
        if (frame.data === '[DONE]') {
            sawDone = true;
            return;
        }
        const json = tryJson(frame.data) as Record<string, unknown> | undefined;
        if (!json) {
            return;
        }
        if (frame.event === 'hermes.tool.progress') {
            if (typeof json.tool === 'string') {
                onProgress({ tool: json.tool, label: str(json.label), emoji: str(json.emoji), status: str(json.status) });
            }
            return;
        }
        const choice = (json.choices as Array<{ delta?: { content?: unknown }; finish_reason?: unknown }> | undefined)?.[0];
        // Past the cap the rest is read (the connection must stay open) but not kept.
        if (typeof choice?.delta?.content === 'string' && !truncated) {
            ({ text, truncated } = clipAnswer(text + choice.delta.content));
            onText?.(text);
        }
        if (typeof choice?.finish_reason === 'string') {
            finishReason = choice.finish_reason;
        }
        usage = usageOf(json.usage) ?? usage;
    };
    const result = await wire.stream(
        { method: 'POST', path: '/v1/chat/completions', headers: chatHeaders(turn), body: chatBody(wire, turn, true) },
        (chunk) => parser.push(chunk).forEach(onFrame),
        signal,
    );
    if (!sawDone && !signal?.aborted) {
        throw new HermesError('incomplete', 'the chat stream ended before [DONE]');
    }
    return { text, sessionId: result.headers['x-hermes-session-id'] || turn.sessionId, finishReason, truncated, usage };
}

function chatHeaders(turn: ChatTurn): Record<string, string> {
    return {
        'Content-Type': 'application/json',
        'X-Hermes-Session-Id': turn.sessionId,
        'X-Hermes-Session-Key': turn.sessionKey,
        'Idempotency-Key': turn.idempotencyKey,
    };
}

function chatBody(wire: HermesWire, turn: ChatTurn, stream: boolean): string {
    return JSON.stringify({
        model: wire.modelName(),
        stream,
        messages: [
            { role: 'system', content: turn.system },
            { role: 'user', content: turn.images?.length ? userContent(turn.user, turn.images) : turn.user },
        ],
    });
}
