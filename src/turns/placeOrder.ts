/**
 * Message events of one place (a room, or a thread) start their turns in the order they reached
 * this app process, which is the order of their messages. Each event takes its place in line at
 * once, before its first await; it reads and stores its turn only after the events of the same
 * place that came before it have stored theirs (or turned out to be no turn), and lets the next
 * one go as soon as its own turn is stored. Without it, a later message whose reads were faster
 * stored its turn first, went to Hermes, and the earlier one waited behind it: twenty questions
 * posted one after another in a thread were sent `q01, q00, q02, …` on a busy machine.
 *
 * Events of different places never wait for each other. Process memory (AppState), a few bytes
 * per place with an event in flight.
 */
export class PlaceOrder {
    private readonly tails = new Map<string, Promise<void>>();

    /**
     * Takes the event's place in line (call it before anything is awaited). `ready` resolves when
     * the events of `place` before it have let go; `done` lets the next go (once; any number of calls).
     */
    public arrive(place: string): { ready: Promise<void>; done: () => void } {
        const before = this.tails.get(place) ?? Promise.resolve();
        let release: () => void = () => undefined;
        const mine = new Promise<void>((resolve) => {
            release = resolve;
        });
        const tail = before.then(() => mine);
        this.tails.set(place, tail);
        void tail.then(() => {
            if (this.tails.get(place) === tail) {
                this.tails.delete(place);
            }
        });
        return { ready: before, done: () => release() };
    }

    /** Places with an event in line (tests). */
    public get size(): number {
        return this.tails.size;
    }
}
