import { Usage, usageOf } from '../usage/usage';
import { clipAnswer, ImagePart, userContent } from './content';
import { HermesError } from './errors';
import { SseParser } from './sse';
import { HermesWire, parseJson, str, tryJson } from './wire';

/*
 * The runs transport (`/v1/runs`): create a run, read its status and its event stream, answer
 * its approval, stop it.
 */

export interface RunInput {
    input: string;
    /** As on ChatTurn; the run's `input` then becomes a one-message list carrying the text and the image parts. */
    images?: ImagePart[];
    instructions: string;
    sessionId: string;
    sessionKey: string;
    /** Sent to servers whose runs do not load the session's history themselves. */
    history?: Array<{ role: string; content: string }>;
    idempotencyKey: string;
}

type RunState = 'queued' | 'running' | 'waiting_for_approval' | 'stopping' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

export interface RunStatus {
    status: RunState;
    output?: string;
    error?: string;
    lastEvent?: string;
    /** Newer servers describe a pending approval in the status. */
    approval?: ApprovalRequest;
    /** `output` was longer than MAX_ANSWER_CHARS; it holds the beginning. */
    truncated?: boolean;
    usage?: Usage;
}

export interface ApprovalRequest {
    command: string;
    description: string;
    choices: string[];
    allowPermanent: boolean;
}

/** A run event (`message.delta`, `tool.started`, `approval.request`, …) as Hermes sends it. */
export type RunEvent = Record<string, unknown> & { event: string };

export async function createRun(wire: HermesWire, run: RunInput): Promise<string> {
    const input = run.images?.length ? [{ role: 'user', content: userContent(run.input, run.images) }] : run.input;
    const body: Record<string, unknown> = { model: wire.modelName(), input, instructions: run.instructions, session_id: run.sessionId };
    if (run.history) {
        body.conversation_history = run.history;
    }
    const result = await wire.call(
        'POST',
        '/v1/runs',
        { 'Content-Type': 'application/json', 'X-Hermes-Session-Key': run.sessionKey, 'Idempotency-Key': run.idempotencyKey },
        JSON.stringify(body),
    );
    const runId = (parseJson(result.body) as { run_id?: unknown }).run_id;
    if (typeof runId !== 'string' || !/^[\w-]{1,200}$/.test(runId)) {
        throw new HermesError('malformed', 'run created without a usable run_id');
    }
    return runId;
}

export async function runStatus(wire: HermesWire, runId: string): Promise<RunStatus> {
    const result = await wire.call('GET', `/v1/runs/${encodeURIComponent(runId)}`, {});
    const json = parseJson(result.body) as Record<string, unknown>;
    if (typeof json.status !== 'string') {
        throw new HermesError('malformed', 'run status without a status');
    }
    const output = str(json.output);
    const clipped = output === undefined ? undefined : clipAnswer(output);
    return {
        status: json.status as RunState,
        output: clipped?.text,
        truncated: clipped?.truncated ?? false,
        error: str(json.error),
        lastEvent: str(json.last_event),
        approval: json.approval ? approvalFrom(json.approval) : undefined,
        usage: usageOf(json.usage),
    };
}

/** Reads the run's event stream until it closes or `signal` aborts; each event to `onEvent`. */
export async function runEvents(wire: HermesWire, runId: string, onEvent: (e: RunEvent) => void, signal?: AbortSignal): Promise<void> {
    const parser = new SseParser();
    await wire.stream(
        { method: 'GET', path: `/v1/runs/${encodeURIComponent(runId)}/events`, headers: { Accept: 'text/event-stream' } },
        (chunk) => {
            for (const frame of parser.push(chunk)) {
                const json = tryJson(frame.data) as RunEvent | undefined;
                if (json && typeof json.event === 'string') {
                    onEvent(json);
                }
            }
        },
        signal,
    );
}

export async function approve(wire: HermesWire, runId: string, choice: string): Promise<void> {
    await wire.call('POST', `/v1/runs/${encodeURIComponent(runId)}/approval`, { 'Content-Type': 'application/json' }, JSON.stringify({ choice }));
}

export async function stopRun(wire: HermesWire, runId: string): Promise<void> {
    await wire.call('POST', `/v1/runs/${encodeURIComponent(runId)}/stop`, {});
}

/**
 * Newer servers (`run_steer`): the text joins the running run, which reads it at its next step.
 * True when Hermes took it; false when the run no longer accepts input (`409
 * run_not_accepting_steer`: it is ending, or waits for an approval). Other failures throw.
 */
export async function steerRun(wire: HermesWire, runId: string, input: string): Promise<boolean> {
    try {
        const result = await wire.call(
            'POST',
            `/v1/runs/${encodeURIComponent(runId)}/steer`,
            { 'Content-Type': 'application/json' },
            JSON.stringify({ input }),
        );
        return (parseJson(result.body) as { accepted?: unknown }).accepted === true;
    } catch (error) {
        if (error instanceof HermesError && (error.status === 409 || error.status === 404)) {
            return false;
        }
        throw error;
    }
}

/** Hermes's approval request, from an `approval.request` event or a newer run status. */
export function approvalFrom(raw: unknown): ApprovalRequest {
    const a = raw as Record<string, unknown>;
    const choices = Array.isArray(a.choices) ? a.choices.filter((c): c is string => typeof c === 'string') : ['once', 'deny'];
    return {
        command: str(a.command) ?? '',
        description: str(a.description) ?? '',
        choices,
        allowPermanent: a.allow_permanent === true,
    };
}
