import { createHash } from 'crypto';
import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { DAY_MS } from './dayIndex';

/**
 * Token records sit in one of three rotating day buckets (day number mod 3). Each day the
 * bucket of the day before yesterday is emptied, so a record is gone within two days
 * whatever the gap in sweeps, with one call a day and no list of days. A token lives 30
 * minutes, so a record older than a day is never needed.
 */
const RING = 3;

const misc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);
const digest = (text: string) => createHash('sha256').update(text).digest('hex');
// A conversation's (session key's) or a Hermes session's pointers: keys (`agent:…`) and session ids never look alike.
const bySession = (keyOrSessionId: string) => misc(`hermes-asker-session:${keyOrSessionId}`);
// Keyed by a digest: the database never holds a usable token, only enough to recognise one.
const bySignature = (signature: string) => misc(`hermes-asker-sig:${digest(signature).slice(0, 32)}`);
/** The day bucket a record of `at` sits in; the write requests of the MCP tools, bound to a token, sit in the same buckets. */
export const askerRing = (at: number) => misc(`hermes-asker-ring:${Math.floor(at / DAY_MS) % RING}`);

/**
 * The conversation's pointer to its newest token (`pointer`), one per conversation, Hermes
 * session and day bucket, written in place, found by either; and a token's own record
 * (`byToken`), found by its signature, naming both (a token marked without its Hermes session
 * names only the conversation).
 */
interface TokenRecord {
    sessionKey: string;
    /** The Hermes session the turn went to (absent when the token was marked without one). */
    sessionId?: string;
    tokenDigest: string;
    at: number;
    pointer?: true;
    byToken?: true;
}

/** The token of `[Rocket.Chat asker: <token>]`, the app's own header line of a turn's text. */
export function askerTokenIn(userText: string): string | undefined {
    // The first such line at column 0: the app writes it before anything a person wrote, and
    // a person's lines never reach column 0 (continuation lines are indented).
    const m = /^\[Rocket\.Chat asker: (v1\.[A-Za-z0-9]+\.[A-Za-z0-9]+\.\d+\.[A-Za-z0-9_-]{22})\]$/m.exec(userText);
    return m?.[1];
}

function signatureOf(token: string): string | undefined {
    const sig = token.slice(token.lastIndexOf('.') + 1);
    return sig.length > 0 && sig !== token ? sig : undefined;
}

/**
 * Which asker token is the newest of each conversation (session key) and of each Hermes
 * session. In a shared session every asker's token lands in one Hermes transcript; only the
 * token of the turn Hermes is working on may be used, so an earlier asker's token cannot be
 * replayed by whoever asks next. After `/hermes resume` one transcript holds the tokens of two
 * conversations' turns: so a token gives way to a newer one of either its conversation or its
 * session.
 */
export class AskerTokens {
    constructor(
        private readonly read: IPersistenceRead,
        private readonly write: IPersistence,
        private readonly now: () => number = Date.now,
    ) {}

    /**
     * Makes `token` the only valid token of `sessionKey` and of the Hermes session `sessionId`:
     * one pointer, found by either, now names it, and the token's own record (by its signature)
     * names both. Two writes side by side, one round trip (a turn makes them before Hermes is
     * asked): the pointer is updated in place (`updateByAssociations` matches the exact
     * association array, the same for a conversation and session all day), and the token's
     * record is new. Turns of one conversation are submitted one after another, and a session is
     * resumed only where no other conversation uses it. Without `sessionId`, the previous
     * version's marks (the conversation's alone).
     */
    public async markNewest(sessionKey: string, token: string, sessionId?: string): Promise<void> {
        const sig = signatureOf(token);
        if (!sig) {
            return;
        }
        const at = this.now();
        const tokenDigest = digest(token);
        const where = sessionId ? { sessionKey, sessionId } : { sessionKey };
        const scopes = sessionId ? [bySession(sessionKey), bySession(sessionId)] : [bySession(sessionKey)];
        await Promise.all([
            this.write.updateByAssociations([...scopes, askerRing(at)], { ...where, tokenDigest, at, pointer: true } as TokenRecord, true),
            this.write.createWithAssociations({ ...where, tokenDigest, at, byToken: true } as TokenRecord, [bySignature(sig), askerRing(at)]),
        ]);
    }

    /**
     * Whether `token` is the newest where it was marked: its records by signature (one read),
     * then the pointers of the conversation and the session each names (one round trip, both
     * read side by side; usually one record). The newest of those pointers must name it.
     */
    public async isNewest(token: string): Promise<boolean> {
        return (await this.newestIn(token)) !== undefined;
    }

    /** The conversation (session key) whose newest token `token` is, if it is one's: {@link isNewest}'s reads. */
    public async newestIn(token: string): Promise<string | undefined> {
        const sig = signatureOf(token);
        if (!sig) {
            return undefined;
        }
        const wanted = digest(token);
        const mine = ((await this.read.readByAssociation(bySignature(sig))) as TokenRecord[]).filter((r) => r.tokenDigest === wanted);
        const read = new Map<string, Promise<TokenRecord[]>>();
        const pointersOf = (scope: string) => {
            const found = read.get(scope) ?? this.read.readByAssociation(bySession(scope)).then((rows) => (rows as TokenRecord[]).filter((r) => r.pointer));
            read.set(scope, found);
            return found;
        };
        // The same token can be the newest of two conversations (same person, room and second).
        for (const mark of mine) {
            const scopes = mark.sessionId ? [mark.sessionKey, mark.sessionId] : [mark.sessionKey];
            const pointers = (await Promise.all(scopes.map(pointersOf))).flat();
            if (pointers.length === 0) {
                continue;
            }
            // The newest pointer (a conversation marked on two days has two until the older day's bucket is emptied).
            const newest = pointers.reduce((x, y) => (y.at > x.at ? y : x));
            if (newest.tokenDigest === wanted) {
                return mark.sessionKey;
            }
        }
        return undefined;
    }

    /** Empties the bucket of the day before yesterday (see {@link expireAskerTokens}). */
    public async expire(now = this.now()): Promise<void> {
        await expireAskerTokens(this.write, now);
    }
}

let expiredOnDay: number | undefined;

/** Tests start every case from an empty process. */
export function forgetAskerTokenExpiry(): void {
    expiredOnDay = undefined;
}

/**
 * Removes token records at least two days old (the ring bucket of the day before yesterday).
 * The sweep job may call it every run: it makes one call on the first run of a day in a
 * process and none until the date changes.
 */
export async function expireAskerTokens(write: IPersistence, now = Date.now()): Promise<void> {
    const day = Math.floor(now / DAY_MS);
    if (expiredOnDay === day) {
        return;
    }
    // (day + 1) mod 3 is (day - 2) mod 3: neither today's bucket nor yesterday's.
    await write.removeByAssociation(askerRing((day + 1) * DAY_MS));
    expiredOnDay = day;
}
