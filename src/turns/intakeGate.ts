/**
 * How many message events of one app process read and store their turns at once. Without a
 * bound, a burst (a hundred mentions at once) queues every event's reads before any turn's
 * head at the server, and the first turn reaches Hermes only after all of them (`npm run bench`
 * part 4: 130–220 ms). Past the bound an event waits, in arrival order, before its first read;
 * its place goes to the next one as soon as its turn is stored (or it turned out to be no turn,
 * or a command that is about to run), never while the turn itself runs in the event.
 *
 * Only ever a delay before anything is read or written: a waiting event has taken nothing (no
 * receipt, no turn), and turns keep the order of their messages (the server's time), not of
 * their storing. Hand-written (a counting semaphore whose place is given back mid-call, which
 * p-limit and its kind do not offer).
 */
export class IntakeGate {
    private inside = 0;
    private readonly waiting: Array<() => void> = [];

    constructor(private readonly atOnce: number) {}

    /** Resolves when the event may read; the function it returns gives its place back (once, any number of calls). */
    public async enter(): Promise<() => void> {
        if (this.inside < this.atOnce) {
            this.inside += 1;
        } else {
            // The place is handed over by the one leaving (`inside` unchanged).
            await new Promise<void>((resolve) => this.waiting.push(resolve));
        }
        let left = false;
        return () => {
            if (left) {
                return;
            }
            left = true;
            const next = this.waiting.shift();
            if (next) {
                next();
            } else {
                this.inside -= 1;
            }
        };
    }

    /** Events inside and waiting (tests). */
    public get load(): { inside: number; waiting: number } {
        return { inside: this.inside, waiting: this.waiting.length };
    }
}

/**
 * Events that read and store at once in one process: enough to keep the server's pipeline
 * full and to start every slot of `max_parallel_turns`' default (8) at once, few enough that a
 * burst's first turns are not queued behind all the others' reads.
 */
export const INTAKE_AT_ONCE = 16;
