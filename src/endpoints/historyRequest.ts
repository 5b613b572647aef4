import { z } from '../generated/zodBundle';
import type { WorkspaceMessage } from '../mcp/tools';
import { inertReferences } from '../security/contextReferences';
import { neutralise } from '../security/inertText';

/** Pages of 100 a search reads (the newest 500 messages); a read without a query, one. */
const SCAN_PAGES = 5;

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

/**
 * What `/history` returns from a room's pages (newest first, 100 a page): the newest `limit`
 * messages, or the newest that contain `query` among the newest 500; oldest first, system
 * messages left out, texts neutralised as the room context is.
 */
export async function historyHits(page: (n: number) => Promise<WorkspaceMessage[]>, query: string | undefined, limit: number): Promise<HistoryHit[]> {
    const needle = query?.toLowerCase();
    const hits: HistoryHit[] = [];
    for (let n = 0; n < (needle ? SCAN_PAGES : 1) && hits.length < limit; n++) {
        const raw = await page(n);
        for (const m of raw) {
            if (m.isSystem || (needle && !m.text.toLowerCase().includes(needle))) {
                continue;
            }
            hits.push({ id: m.id, created_at: m.createdAt.toISOString(), user: m.author, text: inertReferences(neutralise(m.text)), thread_id: m.threadId });
            if (hits.length >= limit) {
                break;
            }
        }
        if (raw.length < 100) {
            break;
        }
    }
    return hits.reverse();
}
