/** When new answer text may next wake a streamed turn, and whether text is waiting to be shown. */
interface TextWake {
    every: number;
    next: number;
    dirty: boolean;
    timer?: ReturnType<typeof setTimeout>;
}

/**
 * How the streams of this process wake their turns' ticks (hermes/liveTurns.ts): when a run
 * settles something (ends, asks for an approval), and, for a streamed answer, when new text
 * came, no more often than the turn edits its message.
 */
export class TurnWakes {
    /** Per turn: wakes the turn's ticks when its stream settles something (at most one wake pending). */
    private readonly wakers = new Map<string, { wake: () => void; pending: boolean }>();
    /** Per streamed turn: new answer text wakes it too, but not before `next` (the turn's edit interval). */
    private readonly texts = new Map<string, TextWake>();

    /**
     * Registers how to wake a turn's tick (a scheduler job for now) when its stream ends or
     * asks for an approval, so the ticks need not poll often. One wake is pending at a time;
     * `woke` (called by the tick) allows the next.
     */
    public onWake(turnId: string, wake: () => void): void {
        this.wakers.set(turnId, { wake, pending: false });
    }

    /**
     * New answer text wakes the turn (stream_answers), at most once per `everyMs`: the turn edits
     * its answer message when woken, and no more often than that; not before `firstAfterMs` (its
     * status delay: until then nothing is shown).
     */
    public wakeOnText(turnId: string, everyMs: number, firstAfterMs = 0): void {
        if (!this.texts.has(turnId)) {
            this.texts.set(turnId, { every: everyMs, next: Date.now() + firstAfterMs, dirty: false });
        }
    }

    /**
     * The turn showed its text (or may not show it yet): no text wake before `ms` from now; text
     * that came meanwhile (or `pending`: text the turn could not show yet) wakes it then.
     */
    public holdText(turnId: string, ms: number, pending = false): void {
        const w = this.texts.get(turnId);
        if (!w) {
            return;
        }
        w.next = Date.now() + ms;
        w.dirty = w.dirty || pending;
        if (w.timer) {
            clearTimeout(w.timer);
            w.timer = undefined;
        }
        if (w.dirty) {
            this.armText(turnId, w);
        }
    }

    /** Answer text came: it wakes the turn once its interval allows. */
    public textArrived(turnId: string): void {
        const w = this.texts.get(turnId);
        if (w) {
            w.dirty = true;
            if (!w.timer) {
                this.armText(turnId, w);
            }
        }
    }

    private armText(turnId: string, w: TextWake): void {
        w.timer = setTimeout(
            () => {
                w.timer = undefined;
                w.dirty = false;
                w.next = Date.now() + w.every;
                this.wake(turnId);
            },
            Math.max(0, w.next - Date.now()),
        );
        (w.timer as { unref?: () => void }).unref?.();
    }

    public woke(turnId: string): void {
        const waker = this.wakers.get(turnId);
        if (waker) {
            waker.pending = false;
        }
    }

    /** Wakes the turn's tick unless a wake is pending already. */
    public wake(turnId: string): void {
        const waker = this.wakers.get(turnId);
        if (waker && !waker.pending) {
            waker.pending = true;
            waker.wake();
        }
    }

    /** The turn ended here: no wake of it any more. */
    public forget(turnId: string): void {
        this.wakers.delete(turnId);
        const text = this.texts.get(turnId);
        if (text?.timer) {
            clearTimeout(text.timer);
        }
        this.texts.delete(turnId);
    }
}
