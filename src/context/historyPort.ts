import { ContextMessage } from './contextMessage';

/** Reads of a room's history, as the context builder needs them. Implemented at the edge. */
export interface HistoryPort {
    /**
     * Main-channel messages (no thread replies) older than `before`, chronological. Reads
     * pages from the newest backwards until `settled(messagesSoFar)` says the window cannot
     * change any more, the room has no more, or `cap` messages were read. The first read asks
     * for `firstPage` messages (what the caller expects to need), the later ones for as many as
     * the server gives at once.
     */
    mainChannel(
        roomId: string,
        before: { id: string; createdAt: Date },
        settled: (m: ContextMessage[]) => boolean,
        cap: number,
        firstPage?: number,
    ): Promise<ContextMessage[]>;
    /** The thread: root first, then replies, older than `before`, chronological. */
    thread(threadId: string, before: { id: string; createdAt: Date }): Promise<ContextMessage[]>;
    /** One message by id, as people see it now: undefined when it does not exist, is deleted or is a hidden edit copy. */
    message(id: string): Promise<ContextMessage | undefined>;
}
