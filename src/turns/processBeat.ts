import { BEAT_MS, BeatStore } from './beats';
import { PROCESS_ID } from './processId';

interface Timers {
    now(): number;
    setTimeout(fn: () => void, ms: number): unknown;
}

/**
 * This process's beat (beats.ts): started by any turn work (`touch`), written every BEAT_MS
 * while the process has turns in hand, stopped when it has none. The first write comes
 * BEAT_MS after the work began: until then the turn's own write says this process is there.
 * Lives as long as the app process (AppState).
 */
export class ProcessBeat {
    private running = false;
    private store: BeatStore | undefined;

    constructor(
        private readonly inHand: () => boolean,
        private readonly timers: Timers = { now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms) },
        private readonly process: string = PROCESS_ID,
    ) {}

    /** Turn work begins here: the beat runs from now on while turns are in hand (`store`: the newest call's). */
    public touch(store: BeatStore): void {
        this.store = store;
        if (!this.running) {
            this.running = true;
            this.next();
        }
    }

    private next(): void {
        this.timers.setTimeout(() => {
            if (!this.inHand()) {
                this.running = false;
                return;
            }
            // A failed write is followed by the next one: GONE_MS allows two to fail.
            this.store?.writeBeat(this.process, this.timers.now()).catch(() => undefined);
            this.next();
        }, BEAT_MS);
    }
}
