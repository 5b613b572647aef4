/**
 * Chat completions have no approval channel (Hermes v0.18.2, transcript 30): a command that
 * needs approval is not run, and its tool result — `{"status": "pending_approval",
 * "approval_pending": true, "command": …, "description": …}` — goes back to the model, which may
 * repeat it as its answer, cut off or whole. The app never posts that JSON: it finds the result
 * in the answer and says what happened instead (`notice_chat_approval`).
 */
export interface ChatApproval {
    command?: string;
    description?: string;
}

const MARK = /"approval_pending"\s*:\s*true/;

/** The pending approval an answer repeats, if it does; its command and description as far as the text has them. */
export function chatApprovalIn(answer: string): ChatApproval | undefined {
    if (!MARK.test(answer)) {
        return undefined;
    }
    return { command: jsonString(answer, 'command'), description: jsonString(answer, 'description') };
}

/** A string field of the (possibly cut) JSON object, decoded; undefined when it is not there whole. */
function jsonString(text: string, field: string): string | undefined {
    const found = new RegExp(`"${field}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")`).exec(text);
    if (!found) {
        return undefined;
    }
    try {
        const value: unknown = JSON.parse(found[1]);
        return typeof value === 'string' && value.trim() ? value : undefined;
    } catch {
        return undefined;
    }
}
