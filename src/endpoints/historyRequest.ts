import { z } from '../generated/zodBundle';

/** The body a Hermes-side history tool sends. */
export const HistoryRequestSchema = z
    .object({
        /** The asker token from the turn, passed through verbatim by the model. */
        asker: z.string().min(1).max(300),
        /** Default: the room the token was issued in. */
        room_id: z
            .string()
            .regex(/^[A-Za-z0-9]{1,64}$/)
            .optional(),
        /** Case-insensitive text to find; without it, the most recent messages. */
        query: z.string().min(1).max(200).optional(),
        limit: z.number().int().min(1).max(50).default(20),
    })
    .strict();

export interface HistoryHit {
    id: string;
    created_at: string;
    user: string;
    text: string;
    thread_id?: string;
}
