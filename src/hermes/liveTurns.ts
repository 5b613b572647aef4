import { ApprovalRequest, approvalFrom, ChatAnswer, ChatTurn, HermesClient, RunEvent, ToolProgress } from './client';

/** What a detached stream of one turn has seen so far, in this app process. */
export interface LiveTurn {
    kind: 'run-events' | 'chat';
    /** Tool lines, oldest first. */
    tools: ToolProgress[];
    /** Text streamed so far (run deltas or chat content). */
    text: string;
    approval?: ApprovalRequest;
    /** An approval.responded event: how Hermes resolved the pending approval. */
    approvalResolution?: string;
    /** The stream ended: `answer` (chat), or a terminal run event. */
    done: boolean;
    terminal?: 'completed' | 'failed' | 'cancelled';
    output?: string;
    answer?: ChatAnswer;
    error?: unknown;
    abort: AbortController;
}

/**
 * Streams that must outlive one engine call (a turn can take minutes; each call into the
 * app has 30 s). They only gather what Hermes sends; the turn's scheduler ticks read it and
 * act. If the app process restarts they are gone, and the ticks fall back to polling.
 */
export class LiveTurns {
    private readonly entries = new Map<string, LiveTurn>();
    private readonly waiters = new Map<string, Array<() => void>>();

    public get(turnId: string): LiveTurn | undefined {
        return this.entries.get(turnId);
    }

    /** Subscribes to a run's events (only one subscriber ever gets them: keep this one). */
    public followRun(turnId: string, hermes: HermesClient, runId: string): LiveTurn {
        const entry = this.create(turnId, 'run-events');
        hermes
            .runEvents(runId, (e) => this.onRunEvent(turnId, entry, e), entry.abort.signal)
            .then(() => {
                entry.done = true;
            })
            .catch((error: unknown) => {
                entry.error = error;
                entry.done = true;
            })
            .finally(() => this.notify(turnId));
        return entry;
    }

    /** Runs a streamed chat completion; the connection stays open until the answer is complete. */
    public startChat(turnId: string, hermes: HermesClient, turn: ChatTurn): LiveTurn {
        const entry = this.create(turnId, 'chat');
        hermes
            .chatStream(
                turn,
                (p) => {
                    if (p.status !== 'completed') {
                        entry.tools.push(p);
                        this.notify(turnId);
                    }
                },
                entry.abort.signal,
            )
            .then((answer) => {
                entry.answer = answer;
                entry.text = answer.text;
            })
            .catch((error: unknown) => {
                entry.error = error;
            })
            .finally(() => {
                entry.done = true;
                this.notify(turnId);
            });
        return entry;
    }

    /** Resolves on the next thing the stream sees, or after `ms`. */
    public waitForChange(turnId: string, ms: number): Promise<void> {
        return new Promise((resolve) => {
            const timer = setTimeout(done, ms);
            const list = this.waiters.get(turnId) ?? [];
            list.push(done);
            this.waiters.set(turnId, list);
            function done() {
                clearTimeout(timer);
                resolve();
            }
        });
    }

    /** Closes the stream (for chat this interrupts the agent) and forgets the turn. */
    public end(turnId: string): void {
        const entry = this.entries.get(turnId);
        entry?.abort.abort();
        this.entries.delete(turnId);
        this.notify(turnId);
    }

    private create(turnId: string, kind: LiveTurn['kind']): LiveTurn {
        this.entries.get(turnId)?.abort.abort();
        const entry: LiveTurn = { kind, tools: [], text: '', done: false, abort: new AbortController() };
        this.entries.set(turnId, entry);
        return entry;
    }

    private onRunEvent(turnId: string, entry: LiveTurn, e: RunEvent): void {
        switch (e.event) {
            case 'message.delta':
                entry.text += typeof e.delta === 'string' ? e.delta : '';
                break;
            case 'tool.started':
                entry.tools.push({ tool: String(e.tool ?? 'tool'), label: typeof e.preview === 'string' ? e.preview : undefined });
                break;
            case 'approval.request':
                entry.approval = approvalFrom(e);
                entry.approvalResolution = undefined;
                break;
            case 'approval.responded':
                entry.approvalResolution = typeof e.choice === 'string' ? e.choice : 'unknown';
                break;
            case 'run.completed':
                entry.terminal = 'completed';
                entry.output = typeof e.output === 'string' ? e.output : entry.text;
                break;
            case 'run.failed':
                entry.terminal = 'failed';
                entry.error = typeof e.error === 'string' ? e.error : 'run failed';
                break;
            case 'run.cancelled':
                entry.terminal = 'cancelled';
                break;
        }
        this.notify(turnId);
    }

    private notify(turnId: string): void {
        const list = this.waiters.get(turnId);
        this.waiters.delete(turnId);
        list?.forEach((w) => w());
    }
}
