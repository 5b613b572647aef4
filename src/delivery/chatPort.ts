/** Where an answer goes: the room, and the thread when the question was asked in one. */
export interface ReplyTarget {
    roomId: string;
    threadId?: string;
}

/** What the core needs from Rocket.Chat to answer. Implemented at the edge with IModify. */
export interface ChatPort {
    /** Posts as the bot; resolves with the new message id. */
    post(target: ReplyTarget, text: string): Promise<string>;
}
