import { showApproval } from '../approvals/approvalPrompt';
import { progressText, toolLine } from '../delivery/progressText';
import { Seen } from './observe';
import { TickPorts } from './tickPorts';
import { TurnRecord } from './turnRecord';
import { processMemory } from './processMemory';
import { lateTaken } from './ack';
import { freezeStream, hasWords, showStream, streams } from './streamAnswer';

/** Status edits at most this often (every edit re-runs all apps' update hooks). */
export const STATUS_EDIT_MS = 2_000;
/** Tool lines kept in the record (the status message shows the newest few). */
const MAX_PROGRESS_LINES = 50;
/** Rocket.Chat clients drop a typing indicator that is not repeated; repeat it this often. */
const TYPING_EVERY_MS = 10_000;

/**
 * How soon a tick of `rec` should come: `every`, or sooner when its status message falls due
 * before (status_delay_seconds after the run started), so it shows then, not up to a tick later.
 * `ifDue`: when it is due already (the caller's own tick posts it: `every`; a hand-over, which
 * posts nothing: 0).
 */
export function nextLookIn(rec: TurnRecord, every: number, ports: Pick<TickPorts, 'config' | 'now'>, ifDue = every): number {
    if (rec.statusMessageId || rec.privateTo || ports.config.progress === 'off' || rec.startedAt === undefined) {
        return every;
    }
    const due = rec.startedAt + ports.config.statusDelaySeconds * 1000 - ports.now();
    // Due already: the caller's tick posts it (one that failed is tried again a whole tick later), or the next tick at once.
    return due > 0 ? Math.min(every, due) : ifDue;
}

/** Typing indicators this process shows, per turn: the way to end each, and when it was sent. */
const typing = processMemory.map<string, { stop: () => Promise<void>; at: number }>('progress.typing');

/**
 * Keeps what people see in step with the turn: the typing indicator, the one status message,
 * and the approval prompt. Returns whether the record changed (the tick saves it then).
 */
export async function showProgress(rec: TurnRecord, seen: Seen, ports: TickPorts): Promise<boolean> {
    if (rec.privateTo) {
        // A private answer leaves no trace in the room: no typing, no status message (the panel shows its progress).
        const lines = seen.live?.tools.map(toolLine);
        rec.progress = lines ? lines.slice(-MAX_PROGRESS_LINES) : rec.progress;
        return showApproval(rec, seen, ports);
    }
    const statusDue = ports.now() - (rec.startedAt ?? ports.now()) >= ports.config.statusDelaySeconds * 1000;
    await Promise.all([keepTyping(rec, ports), statusDue ? lateTaken(rec, ports) : undefined]);
    const live = seen.live;
    const streaming = streams(rec, ports.config);
    const asking = Boolean(live?.approval && !live.approvalResolution);
    let changed = false;
    if (streaming && live && rec.stream && asking && (live.approvals ?? 0) > (rec.approval?.number ?? 0)) {
        // Hermes asks for an approval mid-answer: the answer so far stays, the rest goes on below the approval.
        await freezeStream(rec, live, ports);
        changed = true;
    }
    changed = (await showApproval(rec, seen, ports)) || changed;
    if (live) {
        const lines = live.tools.map(toolLine);
        rec.progress = lines.slice(-MAX_PROGRESS_LINES);
    }
    if (streaming && (rec.stream || (statusDue && live && hasWords(rec, live)))) {
        // The answer's words take the status message's place (and after a restart, with no stream here, stay until the answer's end).
        if (!rec.stream && !rec.statusMessageId && rec.statusPosting) {
            changed = (await findStatus(rec, ports)) || changed;
        }
        return (live && !asking ? await showStream(rec, live, ports) : false) || changed;
    }
    if (ports.config.progress === 'off') {
        return changed;
    }
    if (!rec.statusMessageId && rec.statusPosting) {
        changed = (await findStatus(rec, ports)) || changed;
    }
    if (!rec.statusMessageId && statusDue) {
        // Saved before the post: a crash right after it leaves a mark to find the message by.
        rec.statusPosting = true;
        await ports.store.save(rec);
        rec.statusText = progressText(ports.config.progress, rec.progress);
        rec.statusMessageId = await ports.chat.post({ roomId: rec.roomId, threadId: rec.threadId }, rec.statusText, 'status', { turnId: rec.id });
        rec.statusEditedAt = ports.now();
        return true;
    }
    if (!rec.statusMessageId) {
        return changed;
    }
    const text = progressText(ports.config.progress, rec.progress);
    if (text !== rec.statusText && ports.now() - (rec.statusEditedAt ?? 0) >= STATUS_EDIT_MS) {
        await ports.chat.edit(rec.statusMessageId, rec.roomId, text, { kind: 'status', turnId: rec.id });
        rec.statusText = text;
        rec.statusEditedAt = ports.now();
        changed = true;
    }
    return changed;
}

/** The status message went out but its id was lost with a process: found by its mark. */
async function findStatus(rec: TurnRecord, ports: TickPorts): Promise<boolean> {
    const found = (await ports.chat.botMessages({ roomId: rec.roomId, threadId: rec.threadId })).find(
        (m) => m.mark?.kind === 'status' && m.mark.turnId === rec.id,
    );
    rec.statusMessageId = found?.id;
    return Boolean(found);
}

async function keepTyping(rec: TurnRecord, ports: TickPorts): Promise<void> {
    const shown = typing.get(rec.id);
    if (shown && ports.now() - shown.at < TYPING_EVERY_MS) {
        return;
    }
    const stop = await ports.chat.typing(rec.roomId).catch(() => undefined);
    if (stop) {
        typing.set(rec.id, { stop, at: ports.now() });
    }
}

/** Ends the typing indicator of a finished turn (if this process showed it). */
export async function stopTyping(turnId: string): Promise<void> {
    const shown = typing.get(turnId);
    typing.delete(turnId);
    await shown?.stop().catch(() => undefined);
}
