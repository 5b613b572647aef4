/*
 * A turn whose sender died may have been answered already: found among the bot's messages, it
 * ends as delivered instead of being sent to Hermes a second time.
 */
import { endClaim, Owner } from './owner';
import { finish } from './finish';
import { move } from './machine';
import { TickPorts } from './tickPorts';
import { TurnRecord, hermesFor } from './turnRecord';

/**
 * How long after its sender started a turn can have been answered without its run written: a
 * quick turn writes its run 0.1 s into it unless Hermes answered by then (carryOn.ts), so
 * such an answer is posted within moments of the send; 5 s leaves room for a loaded server.
 */
const UNRECORDED_ANSWER_MS = 5_000;

/**
 * A turn whose sender is gone (its claim lapsed) may have been answered all the same: a quick
 * turn is answered in its event without recording that before its record is removed
 * (carryOn.ts). Before it is sent again, the target is read once (only on this path) for
 * the bot's outcome posted within UNRECORDED_ANSWER_MS after the sender's start (never before
 * it: the answer of the turn ahead, which woke this one, came just before): in a channel, the
 * answer quoting this question (any answer without Site_Url, which quotes nothing); in a DM or
 * thread, any answer; a notice by its mark. Not later: a fresh claim is stored before its
 * session's order is read, so a sender that died before taking back a claim that had to wait
 * leaves a start before the answer of the turn ahead of it (npm run chaos: that answer was taken
 * for this turn's, and the turn was never answered).
 * Found: the turn ends as delivered, nothing is sent or posted twice.
 */
export async function answeredBefore(rec: TurnRecord, sender: Owner, ports: TickPorts): Promise<boolean> {
    const since = sender.at;
    if (since === undefined || rec.privateTo) {
        return false;
    }
    const quoted = rec.kind === 'room' && !rec.threadId;
    const posted = (await ports.chat.botMessages({ roomId: rec.roomId, threadId: rec.threadId }))
        .filter((m) => m.createdAt >= since && m.createdAt <= since + UNRECORDED_ANSWER_MS)
        .filter((m) => (m.mark ? m.mark.kind === 'notice' && m.mark.turnId === rec.id : !quoted || m.text.includes(rec.id) || !m.text.includes('msg=')))
        .sort((a, b) => a.createdAt - b.createdAt);
    if (posted.length === 0) {
        return false;
    }
    // A DM's or thread's answers quote nothing: whose it is, only Hermes's session can tell.
    const attributed = Boolean(posted[0].mark) || (quoted && posted[0].text.includes(rec.id));
    if (!attributed && !(await questionReachedHermes(rec, ports))) {
        return false;
    }
    endClaim(rec, 'sending');
    move(rec, {
        kind: 'outcomeFixed',
        delivery: {
            kind: posted[0].mark ? 'notice' : 'answer',
            parts: posted.map((m) => m.text),
            posted: posted.map((m) => m.id),
            startedAt: ports.now(),
            summary: 'was answered before its app process stopped',
        },
    });
    await ports.store.save(rec);
    await finish(
        rec,
        posted[0].mark ? { kind: 'failed', failure: 'notice_lost', detail: 'notice posted before a restart' } : { kind: 'answer', text: posted[0].text },
        ports,
    );
    return true;
}

/**
 * Whether Hermes's session holds this turn's question: a sender whose claim had to wait (the
 * turn ahead's answer came right after) never sent it. One transcript read, only on the
 * answeredBefore path; when it cannot be read, or the question's text is not at hand, the
 * answer found counts, as before.
 */
async function questionReachedHermes(rec: TurnRecord, ports: TickPorts): Promise<boolean> {
    if (typeof rec.user !== 'string') {
        return true;
    }
    try {
        const sessionId = rec.sessionId ?? (await ports.sessions.get(rec.sessionKey)).sessionId;
        const transcript = await hermesFor(rec, ports.hermes).sessionMessages(sessionId);
        return transcript.some((m) => m.role === 'user' && m.content === rec.user);
    } catch {
        return true;
    }
}
