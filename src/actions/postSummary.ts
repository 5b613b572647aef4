/** A private summary kept for its button: who may post it, where, and what. */
export interface KeptSummary {
    id: string;
    ownerId: string;
    roomId: string;
    threadId: string;
    text: string;
    at: number;
}

export interface SummaryStore {
    keep(summary: KeptSummary): Promise<void>;
    take(id: string): Promise<KeptSummary | undefined>;
}

/**
 * A click on "Post to thread": only the person the summary was made for, once (the record is
 * taken), and only into the thread it summarises, from the room the gate checked the click
 * against (the click's room is the client's claim: a summary of one room is never posted on a
 * click that names another). The button's value is a random id, so a forged click cannot make
 * the bot post text of someone's choosing.
 */
export async function postSummary(
    id: string,
    clicker: { userId: string; roomId: string },
    store: SummaryStore,
    post: (s: KeptSummary) => Promise<void>,
): Promise<'posted' | 'not-yours' | 'gone'> {
    const summary = await store.take(id);
    if (!summary) {
        return 'gone';
    }
    if (summary.ownerId !== clicker.userId || summary.roomId !== clicker.roomId) {
        await store.keep(summary);
        return 'not-yours';
    }
    await post(summary);
    return 'posted';
}
