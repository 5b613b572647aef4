/**
 * Runs tasks with the same key one after another, in arrival order; different keys run in
 * parallel. Hermes runs two requests on one session as two agents at once, so turns of a
 * session must be queued by the app.
 */
export class SerialQueue {
    private readonly tails = new Map<string, Promise<void>>();

    public run<T>(key: string, task: () => Promise<T>): Promise<T> {
        const previous = this.tails.get(key) ?? Promise.resolve();
        const result = previous.then(task, task);
        const tail = result.then(
            () => undefined,
            () => undefined,
        );
        this.tails.set(key, tail);
        void tail.then(() => {
            if (this.tails.get(key) === tail) {
                this.tails.delete(key);
            }
        });
        return result;
    }

    public get size(): number {
        return this.tails.size;
    }
}
