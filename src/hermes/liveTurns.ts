import { ChatTurn } from './chat';
import { HermesClient } from './client';
import { addTool, applyRunEvent, LiveTurn } from './liveTurn';
import { RunEvent } from './runs';
import { TurnWakes } from './turnWakes';

/** A turn being handed to Hermes in this process: done when Hermes answered (with a run id, or without one for chat). */
export interface Submission {
    done: boolean;
    runId?: string;
    error?: unknown;
    /** Its result was written for the other instances (sendResult.ts handOver): whoever records it drops that record. */
    handedOver?: boolean;
}

/**
 * Streams that must outlive one engine call (a turn can take minutes; each call into the
 * app has 30 s). They only gather what Hermes sends; the turn's scheduler ticks read it and
 * act. If the app process restarts they are gone, and the ticks fall back to polling.
 */
export class LiveTurns {
    private readonly entries = new Map<string, LiveTurn>();
    private readonly waiters = new Map<string, Array<() => void>>();
    private readonly submissions = new Map<string, Submission>();

    /** How this process's streams wake their turns' ticks (hermes/turnWakes.ts). */
    private readonly wakes = new TurnWakes();

    /** See {@link TurnWakes.onWake}. */
    public onWake(turnId: string, wake: () => void): void {
        this.wakes.onWake(turnId, wake);
    }

    /** See {@link TurnWakes.wakeOnText}. */
    public wakeOnText(turnId: string, everyMs: number, firstAfterMs = 0): void {
        this.wakes.wakeOnText(turnId, everyMs, firstAfterMs);
    }

    /** See {@link TurnWakes.holdText}. */
    public holdText(turnId: string, ms: number, pending = false): void {
        this.wakes.holdText(turnId, ms, pending);
    }

    public woke(turnId: string): void {
        this.wakes.woke(turnId);
    }

    public get(turnId: string): LiveTurn | undefined {
        return this.entries.get(turnId);
    }

    /** Whether another turn of this process has a stream open at Hermes right now (exact here; other instances' runs are on their records). */
    public othersOpen(turnId: string): boolean {
        for (const [id, entry] of this.entries) {
            if (id !== turnId && !entry.done) {
                return true;
            }
        }
        return false;
    }

    /** Whether a request or a stream of this process is still on its way (its beat goes on meanwhile: turns/processBeat.ts). */
    public holdsAny(): boolean {
        return [...this.entries.values(), ...this.submissions.values()].some((e) => !e.done);
    }

    /** Subscribes to a run's events (only one subscriber ever gets them: keep this one, and subscribe once). */
    public followRun(turnId: string, hermes: HermesClient, runId: string): LiveTurn {
        const following = this.entries.get(turnId);
        if (following?.runId === runId) {
            // Followed since Hermes named the run (submit): an end or an approval it saw before this tick
            // took the run woke nobody (the submission's own wake-up was still pending), so it wakes the turn now.
            if (following.done || following.terminal || following.approval) {
                this.wakes.wake(turnId);
            }
            return following;
        }
        const entry = this.create(turnId, 'run-events');
        entry.runId = runId;
        hermes
            .runEvents(runId, (e) => this.onRunEvent(turnId, entry, e), entry.abort.signal)
            .then(() => {
                entry.done = true;
            })
            .catch((error: unknown) => {
                entry.error = error;
                entry.done = true;
            })
            .finally(() => {
                this.notify(turnId);
                this.wakes.wake(turnId);
            });
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
                        addTool(entry, p);
                        this.notify(turnId);
                    }
                },
                entry.abort.signal,
                (text) => {
                    entry.text = text;
                    this.notify(turnId);
                    this.wakes.textArrived(turnId);
                },
            )
            .then((answer) => {
                entry.answer = answer;
                entry.text = answer.text;
                entry.truncated = answer.truncated === true;
            })
            .catch((error: unknown) => {
                entry.error = error;
            })
            .finally(() => {
                entry.done = true;
                this.notify(turnId);
                this.wakes.wake(turnId);
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
    /**
     * Starts handing a turn to Hermes without waiting for it (a slow answer to `POST /v1/runs`
     * must not hold the scheduler, which runs one job at a time). The turn's tick picks the
     * result up with `submission` when the wake comes. A run's events are subscribed to the
     * moment Hermes names the run (`follow`), not when a tick takes the result: v0.18.2 keeps an
     * unread run's event buffer for 5 minutes and counts it against `max_concurrent_runs`, so a
     * process that died in between held one of Hermes's slots that long (npm run chaos). A
     * stream that dies with its process ends, and Hermes drops the buffer.
     */
    public submit(
        turnId: string,
        send: () => Promise<string | undefined>,
        unclaimed?: { afterMs: number; then: (s: Submission) => void },
        follow?: HermesClient,
    ): void {
        const entry: Submission = { done: false };
        this.submissions.set(turnId, entry);
        send()
            .then((runId) => {
                entry.runId = runId;
                if (runId && follow) {
                    this.followRun(turnId, follow, runId);
                }
            })
            .catch((error: unknown) => {
                entry.error = error;
            })
            .finally(() => {
                entry.done = true;
                this.wakes.wake(turnId);
                if (unclaimed) {
                    // No tick of the turn here took the result in time (its wake-up ran on another instance): hand it over.
                    const timer = setTimeout(() => this.submissions.get(turnId) === entry && unclaimed.then(entry), unclaimed.afterMs);
                    (timer as { unref?: () => void }).unref?.();
                }
            });
    }

    public submission(turnId: string): Submission | undefined {
        return this.submissions.get(turnId);
    }

    public forgetSubmission(turnId: string): void {
        this.submissions.delete(turnId);
    }

    public end(turnId: string): void {
        const entry = this.entries.get(turnId);
        // A stream that ended has no connection left to close (and an abort builds an exception with its stack: most turns end so).
        if (entry && !entry.done) {
            entry.abort.abort();
        }
        this.entries.delete(turnId);
        this.wakes.forget(turnId);
        this.notify(turnId);
    }

    private create(turnId: string, kind: LiveTurn['kind']): LiveTurn {
        this.entries.get(turnId)?.abort.abort();
        const entry: LiveTurn = { kind, tools: [], toolsDropped: 0, text: '', truncated: false, done: false, abort: new AbortController() };
        this.entries.set(turnId, entry);
        return entry;
    }

    private onRunEvent(turnId: string, entry: LiveTurn, e: RunEvent): void {
        applyRunEvent(entry, e);
        this.notify(turnId);
        if (e.event === 'message.delta') {
            this.wakes.textArrived(turnId);
        }
        if (e.event.startsWith('approval.') || e.event.startsWith('run.')) {
            this.wakes.wake(turnId);
        }
    }

    private notify(turnId: string): void {
        const list = this.waiters.get(turnId);
        this.waiters.delete(turnId);
        list?.forEach((w) => w());
    }
}
