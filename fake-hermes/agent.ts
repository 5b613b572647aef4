/**
 * Runs one agent turn of the scripted model, the way Hermes's AIAgent drives a
 * turn: text deltas through a stream callback, tool start/complete callbacks,
 * an approval gate for dangerous commands, a final "reasoning" preview.
 *
 * The endpoints (chat completions, runs) translate these callbacks into their
 * own wire events, so the model logic lives in one place. Interruption (stop,
 * client disconnect) is an AbortSignal: the turn stops emitting at once.
 */
import { randomBytes } from 'crypto';
import { pyJson, pyFloat, PyFloat } from './pyJson';
import { mcpResultText, untrustedEnvelope } from './mcpTools';
import { DANGER_PATTERN, splitDeltas, terminalResult, ToolOutcome, toolResultText, TurnPlan, USAGE_PER_CALL } from './model';

export interface Usage {
    input_tokens: number;
    output_tokens: number;
    total_tokens: number;
}

export interface ApprovalRequest {
    command: string;
    pattern_key: string;
    pattern_keys: string[];
    description: string;
    allow_permanent: boolean;
}

export type ApprovalAnswer = 'once' | 'session' | 'always' | 'deny' | 'timeout';

export interface AgentHooks {
    onDelta?(delta: string): void;
    onToolStart?(info: { callId: string; tool: string; preview: string | null; args: Record<string, unknown> }): void;
    onToolComplete?(info: { callId: string; tool: string; duration: PyFloat; isError: boolean; result: string }): void;
    onReasoning?(text: string): void;
    /** Present only where an approval channel exists (runs). */
    requestApproval?(request: ApprovalRequest): Promise<ApprovalAnswer>;
}

/** A message the turn adds to the session transcript (ids/timestamps assigned by the store). */
export interface MessageDraft {
    role: string;
    content: unknown;
    tool_call_id?: string | null;
    tool_calls?: unknown[] | null;
    tool_name?: string | null;
    finish_reason?: string | null;
}

export interface TurnOutcome {
    interrupted: boolean;
    final: string;
    usage: Usage;
    /** Assistant/tool messages produced by the turn (the user message is added by the caller). */
    messages: MessageDraft[];
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
        if (signal?.aborted) return resolve();
        const timer = setTimeout(done, ms);
        function done(): void {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            resolve();
        }
        signal?.addEventListener('abort', done, { once: true });
    });
}

/** Yield to the event loop so writes and other requests interleave like a real stream. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function newCallId(): string {
    return 'call_' + randomBytes(5).toString('hex');
}

function usageFor(calls: number): Usage {
    return {
        input_tokens: USAGE_PER_CALL.input_tokens * calls,
        output_tokens: USAGE_PER_CALL.output_tokens * calls,
        total_tokens: USAGE_PER_CALL.total_tokens * calls,
    };
}

export async function runTurn(
    plan: TurnPlan,
    hooks: AgentHooks,
    signal: AbortSignal,
    opts: {
        slowIntervalMs: number;
        toolRunMs?: number;
        toolPreamble?: string;
        callMcp?: (tool: string, args: Record<string, unknown>) => Promise<{ json: string; isError: boolean }>;
    },
): Promise<TurnOutcome> {
    const messages: MessageDraft[] = [];
    const interrupted = (): TurnOutcome => ({ interrupted: true, final: '', usage: usageFor(0), messages });
    let text: string;
    let calls = 1;

    if (plan.kind === 'tool') {
        calls = 2;
        await tick();
        if (signal.aborted) return interrupted();
        const preamble = opts.toolPreamble ? splitDeltas(opts.toolPreamble) : [];
        for (let i = 0; i < preamble.length; i++) {
            if (i > 0) await sleep(opts.slowIntervalMs, signal);
            if (signal.aborted) return interrupted();
            hooks.onDelta?.(preamble[i]);
        }
        const callId = newCallId();
        const args = { command: plan.command };
        const started = performance.now();
        hooks.onToolStart?.({ callId, tool: plan.tool, preview: plan.command, args });
        let outcome: ToolOutcome = 'ok';
        if (plan.dangerous) {
            if (hooks.requestApproval) {
                const answer = await hooks.requestApproval({
                    command: plan.command,
                    pattern_key: DANGER_PATTERN,
                    pattern_keys: [DANGER_PATTERN],
                    description: DANGER_PATTERN,
                    allow_permanent: true,
                });
                outcome = answer === 'deny' ? 'denied' : answer === 'timeout' ? 'timeout' : 'approved';
            } else {
                outcome = 'no_channel';
            }
        } else if (opts.toolRunMs) {
            await sleep(opts.toolRunMs, signal);
        }
        if (signal.aborted) return interrupted();
        const result = terminalResult(plan.command, outcome);
        const resultJson = pyJson(result);
        const duration = Math.round(performance.now() - started) / 1000;
        hooks.onToolComplete?.({
            callId,
            tool: plan.tool,
            duration: pyFloat(duration),
            isError: outcome === 'denied' || outcome === 'timeout',
            result: resultJson,
        });
        messages.push(
            {
                role: 'assistant',
                content: opts.toolPreamble ?? '',
                // Hermes stores the provider's call id three ways (transcript 59).
                tool_calls: [
                    {
                        id: callId,
                        call_id: callId,
                        response_item_id: callId.replace(/^call_/, 'fc_'),
                        type: 'function',
                        function: { name: plan.tool, arguments: pyJson(args) },
                    },
                ],
                finish_reason: 'tool_calls',
            },
            { role: 'tool', content: resultJson, tool_call_id: callId, tool_name: plan.tool },
        );
        text = toolResultText(result);
    } else if (plan.kind === 'mcp') {
        calls = 2;
        await tick();
        if (signal.aborted) return interrupted();
        const callId = newCallId();
        const started = performance.now();
        // Hermes shows no preview for an MCP tool (recorded: "preview": null).
        hooks.onToolStart?.({ callId, tool: plan.tool, preview: null, args: plan.args });
        const out = opts.callMcp ? await opts.callMcp(plan.tool, plan.args) : { json: pyJson({ error: `Unknown tool: ${plan.tool}` }), isError: true };
        if (signal.aborted) return interrupted();
        hooks.onToolComplete?.({
            callId,
            tool: plan.tool,
            duration: pyFloat(Math.round(performance.now() - started) / 1000),
            isError: out.isError,
            result: out.json,
        });
        messages.push(
            {
                role: 'assistant',
                content: '',
                tool_calls: [
                    {
                        id: callId,
                        call_id: callId,
                        response_item_id: callId.replace(/^call_/, 'fc_'),
                        type: 'function',
                        function: { name: plan.tool, arguments: pyJson(plan.args) },
                    },
                ],
                finish_reason: 'tool_calls',
            },
            { role: 'tool', content: untrustedEnvelope(plan.tool, out.json), tool_call_id: callId, tool_name: plan.tool },
        );
        text = mcpResultText(out.json);
    } else if (plan.kind === 'slow') {
        text = plan.words.join(' ');
    } else {
        text = plan.text;
    }

    const deltas = splitDeltas(text);
    for (let i = 0; i < deltas.length; i++) {
        if (plan.kind === 'slow' && i > 0) await sleep(opts.slowIntervalMs, signal);
        else await tick();
        if (signal.aborted) return interrupted();
        hooks.onDelta?.(deltas[i]);
    }
    await tick();
    if (signal.aborted) return interrupted();
    const final = text.trim();
    hooks.onReasoning?.(final);
    messages.push({ role: 'assistant', content: final, finish_reason: 'stop' });
    return { interrupted: false, final, usage: usageFor(calls), messages };
}
