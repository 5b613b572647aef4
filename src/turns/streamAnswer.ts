import { isSizeRefusal } from '../admission/botPosting';
import { shownSoFar, STREAM_CURSOR, textPrint } from '../delivery/streamText';
import { t } from '../i18n/messages';
import { LiveTurn } from '../hermes/liveTurn';
import { HermesConfig } from '../settings/config';
import { answerParts, framedAnswer } from './answerParts';
import { processMemory } from './processMemory';
import { TickPorts } from './tickPorts';
import { DeliveryState, describe, StreamState, TurnRecord } from './turnRecord';

/*
 * stream_answers: the answer shown as Hermes writes it. Its first words (once the status delay
 * has passed) are posted in place of the turn's status message; later words are edits of it, at most one per stream_edit_seconds. An answer that outgrows a message goes on in the
 * next, split as the final answer will be; an approval request freezes what was written and
 * the rest goes on below the approval. At the end (deliverOutcome.ts) the streamed messages
 * are edited into the answer's parts. Text edits are not saved: a new message's id is, so a
 * turn resumed elsewhere edits the same messages and never posts a second answer.
 */

/** Per process and turn: the text each streamed message shows, and when the turn last edited one. */
const shown = processMemory.map<string, { texts: Map<string, string>; at: number }>('stream.shown');
/** What this process showed of a turn's stream (kept from the first look on). */
function memoOf(turnId: string): { texts: Map<string, string>; at: number } {
    const memo = shown.get(turnId) ?? { texts: new Map<string, string>(), at: 0 };
    shown.set(turnId, memo);
    return memo;
}

/** Per process: turns whose streaming was refused (the answer comes whole at the end). */
const given = processMemory.set<string>('stream.given');

/** Whether this turn's answer is streamed: rooms and DMs; a private answer cannot be edited, a scheduled one may be silent. */
export function streams(rec: Pick<TurnRecord, 'privateTo' | 'cron'>, config: Pick<HermesConfig, 'streamAnswers'>): boolean {
    return config.streamAnswers && !rec.privateTo && !rec.cron;
}

/** The edit interval in milliseconds. */
export function streamEditMs(config: Pick<HermesConfig, 'streamEditSeconds'>): number {
    return Math.max(1_000, Number(config.streamEditSeconds) * 1000 || 1_500);
}

/** Whether the stream has words to show (the turn's messages then become the stream's). */
export function hasWords(rec: TurnRecord, live: LiveTurn): boolean {
    return shownSoFar(live.text.slice(rec.stream?.cut ?? 0)) !== '';
}

/**
 * Shows the answer so far: posts its first message (no wait), or edits the messages whose text
 * changed once the edit interval has passed. Returns whether the record changed.
 */
export async function showStream(rec: TurnRecord, live: LiveTurn, ports: TickPorts): Promise<boolean> {
    if (given.has(rec.id)) {
        return false;
    }
    try {
        return await streamOn(rec, live, ports);
    } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        if (isSizeRefusal(error)) {
            // The server's limit was lowered since it was read: read again, and the next look splits by it.
            await ports.server(true);
            ports.log.info(`Streaming the answer of ${describe(rec)}: the server refused a part as too long; its limit is read again.`);
        } else {
            // Refused (muted, read-only, …) or the chat is down: the answer comes whole at its end, where refusals are handled.
            given.add(rec.id);
            ports.log.warn(`Streaming the answer of ${describe(rec)} stopped (${why}); the answer comes whole when it is complete.`);
        }
        // Its `posting` mark may be new: the record is saved.
        return true;
    }
}

async function streamOn(rec: TurnRecord, live: LiveTurn, ports: TickPorts): Promise<boolean> {
    let changed = false;
    if (!rec.stream) {
        // The status message goes and the words come as a new message: a post notifies the asker as an
        // answer does (the quote's mention, a DM's new message); an edit of the status message would
        // notify nobody (sendNotificationsOnMessage.ts returns early for an edited message).
        const status = rec.statusMessageId;
        rec.stream = { ids: [], frozen: 0, cut: 0 };
        rec.statusMessageId = undefined;
        rec.statusPosting = undefined;
        if (status) {
            await ports.chat
                .remove(status, rec.roomId)
                .catch((e: unknown) =>
                    ports.log.warn(`Status message of turn ${describe(rec)} could not be removed: ${e instanceof Error ? e.message : String(e)}`),
                );
        }
        changed = true;
    }
    const st = rec.stream;
    if (st.posting) {
        await findStreamPost(rec, st, ports);
        changed = true;
    }
    const words = shownSoFar(live.text.slice(st.cut));
    if (!words) {
        // Not one whole word yet (of the answer, or of its part after an approval).
        return changed;
    }
    const memo = memoOf(rec.id);
    const every = streamEditMs(ports.config);
    const wait = memo.at + every - ports.now();
    if (wait > 0 && st.ids.length > st.frozen) {
        // Too soon after the last edit: the stream wakes the turn when it may edit again.
        ports.live.holdText(rec.id, wait, true);
        return changed;
    }
    const parts = await segmentParts(rec, st, words, ports, true);
    const acted = await showParts(rec, st, parts, memo, ports);
    if (acted) {
        memo.at = ports.now();
        ports.live.holdText(rec.id, every);
    }
    return acted === 'posted' || changed;
}

/**
 * Hermes asks for an approval: what was streamed so far stays as it is (its last words too,
 * without the cursor) and the rest of the answer goes on below the approval message.
 */
export async function freezeStream(rec: TurnRecord, live: LiveTurn, ports: TickPorts): Promise<void> {
    const st = rec.stream;
    if (!st || st.ids.length === st.frozen) {
        return;
    }
    const memo = memoOf(rec.id);
    const parts = await segmentParts(rec, st, shownSoFar(live.text.slice(st.cut), true), ports, false);
    // The approval matters more than the last words: a failed edit leaves them as they were shown.
    await showParts(rec, st, parts, memo, ports).catch((e: unknown) =>
        ports.log.warn(`The streamed words of ${describe(rec)} could not be finished before its approval: ${e instanceof Error ? e.message : String(e)}`),
    );
    st.frozen = st.ids.length;
    st.cut = live.text.length;
    const frozen = live.text.trim();
    st.frozenText = { chars: frozen.length, print: textPrint(frozen) };
    memo.at = ports.now();
}

/** The answer (trimmed) without what was streamed before an approval, when it starts with that; undefined otherwise. */
export function afterFrozen(st: StreamState | undefined, answer: string): string | undefined {
    const frozen = st?.frozenText;
    if (!frozen || answer.length < frozen.chars || textPrint(answer.slice(0, frozen.chars)) !== frozen.print) {
        return undefined;
    }
    return answer.slice(frozen.chars).trim();
}

/** Which streamed messages become the outcome's first parts, and which go: an answer reuses them, a notice does not. */
export function streamedInto(st: StreamState | undefined, kind: DeliveryState['kind'], parts: number): Pick<DeliveryState, 'reuse' | 'drop'> {
    const open = st ? st.ids.slice(st.frozen) : [];
    if (open.length === 0) {
        return {};
    }
    const reuse = kind === 'answer' ? open.slice(0, parts) : [];
    return { reuse, drop: open.slice(reuse.length) };
}

/** Removes what an attempt streamed (the turn is sent again: its words belong to no answer now). */
export async function dropStream(rec: TurnRecord, ports: TickPorts): Promise<void> {
    for (const id of rec.stream?.ids ?? []) {
        await ports.chat.remove(id, rec.roomId).catch(() => undefined);
    }
    rec.stream = undefined;
    forgetStream(rec.id);
}

/** Forgets what this process showed of a turn's stream (its end). */
export function forgetStream(turnId: string): void {
    shown.delete(turnId);
    given.delete(turnId);
}

/**
 * The messages of the open part of the stream, split as the final answer will be (the first
 * segment quotes the question and opens as the answer will); `cursor`: the last one ends with
 * it, when it fits (a part of its own for the cursor would be a message of nothing).
 */
async function segmentParts(rec: TurnRecord, st: StreamState, words: string, ports: TickPorts, cursor: boolean): Promise<string[]> {
    const first = st.frozen === 0;
    const parts = await answerParts(rec, first ? framedAnswer(rec, words, t) : words, ports, first);
    const last = parts.length - 1;
    if (cursor && last >= 0 && parts[last].length + STREAM_CURSOR.length <= (await ports.server()).maxMessageSize) {
        parts[last] += STREAM_CURSOR;
    }
    return parts;
}

/**
 * Edits the open messages whose text changed, posts the parts that have no message yet. Returns
 * 'posted' when a message was posted (its id is in the record), 'edited', or undefined.
 */
async function showParts(
    rec: TurnRecord,
    st: StreamState,
    parts: string[],
    memo: { texts: Map<string, string> },
    ports: TickPorts,
): Promise<'posted' | 'edited' | undefined> {
    let acted: 'posted' | 'edited' | undefined;
    for (let i = 0; i < parts.length; i++) {
        const id = st.ids[st.frozen + i];
        if (id === undefined) {
            // Saved first: a crash right after the post leaves a mark to find the message by.
            st.posting = true;
            await ports.store.save(rec);
            const posted = await ports.chat.post({ roomId: rec.roomId, threadId: rec.threadId }, parts[i], 'status', { turnId: rec.id });
            st.ids.push(posted);
            st.posting = undefined;
            memo.texts.set(posted, parts[i]);
            acted = 'posted';
        } else if (memo.texts.get(id) !== parts[i]) {
            await ports.chat.edit(id, rec.roomId, parts[i], undefined);
            memo.texts.set(id, parts[i]);
            acted = acted ?? 'edited';
        }
    }
    return acted;
}

/** A message posted just before a crash, its id not saved: found by its status mark. */
export async function findStreamPost(rec: TurnRecord, st: StreamState, ports: TickPorts): Promise<void> {
    const known = new Set(st.ids);
    const found = (await ports.chat.botMessages({ roomId: rec.roomId, threadId: rec.threadId })).filter(
        (m) => m.mark?.kind === 'status' && m.mark.turnId === rec.id && !known.has(m.id),
    );
    st.ids.push(...found.map((m) => m.id));
    st.posting = undefined;
    if (found.length > 1) {
        ports.log.warn(`Turn ${describe(rec)} found ${found.length} streamed messages it had not recorded; they are taken in order.`);
    }
}
