import { Usage, usageOf } from '../usage/usage';
import { ChatAnswer, ToolProgress } from './chat';
import { clipAnswer } from './content';
import { ApprovalRequest, approvalFrom, RunEvent } from './runs';

/** What a detached stream of one turn has seen so far, in this app process. */
export interface LiveTurn {
    kind: 'run-events' | 'chat';
    /** The run whose events these are (runs only). */
    runId?: string;
    /** Tool lines, oldest first: the newest MAX_LIVE_TOOLS. */
    tools: ToolProgress[];
    /** How many older tool lines were dropped to keep `tools` at MAX_LIVE_TOOLS. */
    toolsDropped: number;
    /** Text streamed so far (run deltas or chat content), at most MAX_ANSWER_CHARS. */
    text: string;
    /** The answer (`text`, `output` or the chat answer) was cut at MAX_ANSWER_CHARS. */
    truncated: boolean;
    approval?: ApprovalRequest;
    /** How many approval requests the stream has carried (a run can ask more than once). */
    approvals?: number;
    /** An approval.responded event: how Hermes resolved the pending approval. */
    approvalResolution?: string;
    /** The stream ended: `answer` (chat), or a terminal run event. */
    done: boolean;
    terminal?: 'completed' | 'failed' | 'cancelled';
    output?: string;
    /** Tokens of the run, from its `run.completed` event. */
    usage?: Usage;
    answer?: ChatAnswer;
    error?: unknown;
    abort: AbortController;
}

/** What one run event tells of the turn, written into `entry` (the stream's listener wakes the turn). */
export function applyRunEvent(entry: LiveTurn, e: RunEvent): void {
    switch (e.event) {
        case 'message.delta':
            // Past the cap the deltas are not kept; `truncated` lets the turn say the answer was cut.
            if (typeof e.delta === 'string' && !entry.truncated) {
                ({ text: entry.text, truncated: entry.truncated } = clipAnswer(entry.text + e.delta));
            }
            break;
        case 'tool.started':
            addTool(entry, { tool: String(e.tool ?? 'tool'), label: typeof e.preview === 'string' ? e.preview : undefined });
            break;
        case 'approval.request':
            entry.approvals = (entry.approvals ?? 0) + 1;
            entry.approval = approvalFrom(e);
            entry.approvalResolution = undefined;
            break;
        case 'approval.responded':
            entry.approvalResolution = typeof e.choice === 'string' ? e.choice : 'unknown';
            break;
        case 'run.completed': {
            entry.terminal = 'completed';
            const output = clipAnswer(typeof e.output === 'string' ? e.output : entry.text);
            entry.output = output.text;
            entry.truncated = entry.truncated || output.truncated;
            entry.usage = usageOf(e.usage);
            break;
        }
        case 'run.failed':
            entry.terminal = 'failed';
            entry.error = typeof e.error === 'string' ? e.error : 'run failed';
            break;
        case 'run.cancelled':
            entry.terminal = 'cancelled';
            break;
    }
}

/** Tool lines a live turn keeps. The status message shows only the last few; older ones are counted. */
export const MAX_LIVE_TOOLS = 50;
/** A tool line is shown as one short line; longer names and previews are not worth keeping. */
const MAX_TOOL_FIELD_CHARS = 200;

/** Adds a tool line, dropping the oldest past MAX_LIVE_TOOLS so the persisted progress stays small. */
export function addTool(entry: LiveTurn, p: ToolProgress): void {
    const clip = (value: string | undefined) => value?.slice(0, MAX_TOOL_FIELD_CHARS);
    entry.tools.push({ ...p, tool: p.tool.slice(0, MAX_TOOL_FIELD_CHARS), label: clip(p.label), emoji: clip(p.emoji), status: clip(p.status) });
    if (entry.tools.length > MAX_LIVE_TOOLS) {
        entry.tools.shift();
        entry.toolsDropped++;
    }
}
