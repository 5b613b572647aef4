/**
 * The scripted stand-in model used when the transcripts were recorded
 * (test/fixtures/hermes-transcripts/README.md), so the fake's answers can be compared
 * byte for byte with the real ones. It reacts to the LAST user message:
 * - contains `DANGER`   → asks the terminal tool for `rm -rf <dir>`;
 * - contains `RUN_TOOL` → asks the terminal tool for `echo RUN_TOOL_OK`;
 * - contains `SLOW`     → streams "SLOW:" and 30 " tick" words, one per interval;
 * - `MCP_READ <room id>` → (with an MCP server) the app's read tool with the turn's asker token;
 * - otherwise           → `ECHO: <msg> | user_turns=<n> | prev=<previous user msg or ->`,
 *   which shows how much history Hermes handed to the model; both messages on one line
 *   (whitespace runs become one space) and prev cut at 120 characters.
 *
 * After a tool ran, the model answers `TOOL_RESULT_SEEN: <tool result JSON>`,
 * the JSON cut at 200 characters (transcript 24 shows the cut).
 */
import { askerTokenOf, MCP_READ_TOOL } from './mcpTools';
import { pyJson } from './pyJson';

export type Endpoint = 'chat' | 'run' | 'responses';

export interface ConvMessage {
    role: string;
    content: unknown;
}

export interface ScriptContext {
    /** History the model sees (without the new user message). */
    history: ConvMessage[];
    /** User messages in history + 1. */
    userTurns: number;
    /** The previous user message, or null. */
    prev: string | null;
    sessionId: string;
    endpoint: Endpoint;
}

/** Return a string to answer with plain text; undefined/null falls back to the script. */
export type ReplyFn = (lastUserMessage: string, ctx: ScriptContext) => string | undefined | null;

export type TurnPlan =
    | { kind: 'text'; text: string }
    | { kind: 'slow'; words: string[] }
    | { kind: 'tool'; tool: 'terminal'; command: string; dangerous: boolean }
    | { kind: 'mcp'; tool: string; args: Record<string, unknown> };

/** Hermes's approval pattern for `rm -rf` (transcript 21). */
export const DANGER_PATTERN = 'delete in root path';
const TOOL_RESULT_PREVIEW_CHARS = 200;
/** Usage of one model call in the transcripts; a tool turn makes two calls. */
export const USAGE_PER_CALL = { input_tokens: 11, output_tokens: 7, total_tokens: 18 };

/** Flatten OpenAI content (string or parts) to the text the model reads. */
export function contentText(content: unknown): string {
    if (content === null || content === undefined) return '';
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) {
        const parts: string[] = [];
        for (const item of content) {
            if (typeof item === 'string') {
                if (item) parts.push(item);
            } else if (item && typeof item === 'object') {
                const part = item as { type?: unknown; text?: unknown };
                const type = String(part.type ?? '').toLowerCase();
                if ((type === 'text' || type === 'input_text' || type === 'output_text') && part.text) {
                    parts.push(String(part.text));
                }
            }
        }
        return parts.join('\n');
    }
    return String(content);
}

export function scriptContext(history: ConvMessage[], sessionId: string, endpoint: Endpoint): ScriptContext {
    const users = history.filter((m) => m.role === 'user');
    const last = users[users.length - 1];
    return {
        history,
        userTurns: users.length + 1,
        prev: last ? contentText(last.content) : null,
        sessionId,
        endpoint,
    };
}

/** Python's `" ".join(text.split())`: the stand-in echoes a message on one line. */
const oneLine = (text: string) => text.split(/\s+/).filter(Boolean).join(' ');
/** The stand-in cuts the previous message at 120 characters (after joining it to one line). */
const PREV_CHARS = 120;

/** As the stand-in (`fake_llm.py` `decide`, recorded in test/fixtures/real-hermes-app/): both messages on one line, prev cut. */
function echoText(msg: string, ctx: ScriptContext): string {
    const prev = ctx.prev === null ? '-' : oneLine(ctx.prev).slice(0, PREV_CHARS);
    return `ECHO: ${oneLine(msg)} | user_turns=${ctx.userTurns} | prev=${prev}`;
}

export interface PlanOptions {
    dangerDir: string;
    slowWords: number;
    replyFn?: ReplyFn | null;
    /** A scripted rule's `reply`: wins over everything. */
    replyOverride?: string;
    /** Look for the keywords on the message's last line only (the person's words after the app's context). */
    keywordsOnLastLine?: boolean;
    /** Hermes has the app's MCP server: `MCP_READ <room id>` calls its read tool. */
    mcp?: boolean;
}

export function planTurn(userMessage: string, ctx: ScriptContext, opts: PlanOptions): TurnPlan {
    if (opts.replyOverride !== undefined) return { kind: 'text', text: opts.replyOverride };
    if (opts.replyFn) {
        const custom = opts.replyFn(userMessage, ctx);
        if (typeof custom === 'string') return { kind: 'text', text: custom };
    }
    const keywordsIn = opts.keywordsOnLastLine ? (userMessage.trim().split('\n').pop() ?? '') : userMessage;
    if (keywordsIn.includes('DANGER')) {
        return { kind: 'tool', tool: 'terminal', command: `rm -rf ${opts.dangerDir}`, dangerous: true };
    }
    if (keywordsIn.includes('RUN_TOOL')) {
        return { kind: 'tool', tool: 'terminal', command: 'echo RUN_TOOL_OK', dangerous: false };
    }
    const mcpRead = opts.mcp ? /MCP_READ (\S+)/.exec(keywordsIn) : null;
    if (mcpRead) {
        return { kind: 'mcp', tool: MCP_READ_TOOL, args: { asker: askerTokenOf(userMessage) ?? 'none', room_id: mcpRead[1], limit: 5 } };
    }
    if (keywordsIn.includes('SLOW')) {
        const words = ['SLOW:'];
        for (let i = 1; i < opts.slowWords; i++) words.push('tick');
        return { kind: 'slow', words };
    }
    return { kind: 'text', text: echoText(userMessage, ctx) };
}

/** How a dangerous command ended; `no_channel` is chat completions (transcript 30). */
export type ToolOutcome = 'ok' | 'approved' | 'denied' | 'timeout' | 'no_channel';

export function terminalResult(command: string, outcome: ToolOutcome): Record<string, unknown> {
    switch (outcome) {
        case 'ok':
            return { output: 'RUN_TOOL_OK', exit_code: 0, error: null };
        case 'approved':
            return {
                output: '',
                exit_code: 0,
                error: null,
                approval: `Command required approval (${DANGER_PATTERN}) and was approved by the user.`,
            };
        case 'denied':
            // The first 200 characters are verbatim (transcript 24); the rest never reaches the wire.
            return {
                output: '',
                exit_code: -1,
                error:
                    'BLOCKED: Command denied by user. The user has NOT consented to this action. Do NOT retry this ' +
                    'command, do NOT rephrase it, and do NOT attempt the same outcome through other means.',
            };
        case 'timeout':
            // Not recorded: Hermes blocks on approval timeout ("silence is not consent"); wording invented.
            return {
                output: '',
                exit_code: -1,
                error: 'BLOCKED: Command approval timed out. The user has NOT consented to this action. Do NOT retry this ' + 'command.',
            };
        case 'no_channel':
            return {
                output: '',
                exit_code: -1,
                error: '',
                status: 'pending_approval',
                approval_pending: true,
                command,
                description: DANGER_PATTERN,
                pattern_key: DANGER_PATTERN,
                pattern_keys: [DANGER_PATTERN],
            };
    }
}

/** The model's answer after seeing a tool result. */
export function toolResultText(result: Record<string, unknown>): string {
    return '\n\nTOOL_RESULT_SEEN: ' + pyJson(result).slice(0, TOOL_RESULT_PREVIEW_CHARS);
}

/** The stand-in streams its text word by word: "a b c" → ["a", " b", " c"]. */
export function splitDeltas(text: string): string[] {
    return text
        .split(' ')
        .map((word, i) => (i === 0 ? word : ' ' + word))
        .filter((d) => d !== '');
}
