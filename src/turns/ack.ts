import { LiveChatPort, ReactionsUnsupported } from '../delivery/chatPort';
import { LogPort } from '../security/safeLog';
import { processMemory } from './processMemory';
import { describe, TurnRecord } from './turnRecord';

/**
 * Where a turn stands, shown as the bot's reaction on the message that asked (`reactions`):
 * 👀 taken and going, ⏳ queued behind another turn (of its conversation, or for a slot),
 * then ✅ answered or ❌ failed or stopped; ↪️ a follow-up whose words joined another turn (its run,
 * or the next turn: followUps.ts). Each change replaces the one before it: one
 * reaction of the bot's at a time.
 *
 * Cost: a turn that goes at once adds 👀 beside its run request (one call, on no path anyone
 * waits on) and, when it ends, removes 👀 and adds ✅ beside the end's writes (two calls, one
 * round trip); a queued one adds ⏳ first and swaps it for 👀 when it goes (two more). A 1:1 DM
 * skips 👀 unless the answer is still running after `status_delay_seconds` (the status message's
 * moment), so a quick answer does not flicker. Only turns a person's message opened: a scheduled
 * prompt or a message action has no question of theirs to react to.
 *
 * A reaction that fails (a read-only room, a muted bot, a message deleted meanwhile) is logged
 * and never holds the turn. Rocket.Chat makes reactions idempotent (adding one already there or
 * removing one that is not changes nothing), so a step done twice after a restart is harmless.
 */
export type Ack = 'taken' | 'queued' | 'answered' | 'failed' | 'joined';

const ACK_EMOJI: Readonly<Record<Ack, string>> = {
    taken: ':eyes:',
    queued: ':hourglass_flowing_sand:',
    answered: ':white_check_mark:',
    failed: ':x:',
    joined: ':arrow_right_hook:',
};

/** What each step may find on the message when this process does not know (another process set it, before a restart). */
const MAYBE_THERE: Readonly<Record<Ack, readonly Ack[]>> = {
    queued: [],
    taken: ['queued'],
    answered: ['taken', 'queued'],
    failed: ['taken', 'queued'],
    joined: ['taken', 'queued'],
};

/** Set once the server turned out to offer apps no reactions at all: no more calls, one log line. */
const unsupported = processMemory.set<true>('ack.unsupported');

/** The bot's reaction on each open turn's trigger, as this process set it; `null`: none yet (a DM's quick turn). */
const shown = processMemory.map<string, Ack | null>('ack.shown');
/** When each entry was set: a turn that ended in another process leaves its entry here, dropped after a while. */
const setAt = processMemory.map<string, number>('ack.setAt');
const KEEP_MS = 6 * 3_600_000;

function remember(id: string, ack: Ack | null, now: number): void {
    shown.set(id, ack);
    // Moved to the end: the map stays in the order of the last set.
    setAt.delete(id);
    setAt.set(id, now);
    for (const [old, at] of setAt) {
        if (now - at <= KEEP_MS) {
            // Oldest first: the rest are younger.
            break;
        }
        setAt.delete(old);
        shown.delete(old);
    }
}

function forget(id: string): void {
    shown.delete(id);
    setAt.delete(id);
}

export interface AckPorts {
    config: { reactions: boolean };
    chat: Pick<LiveChatPort, 'react'>;
    log: Pick<LogPort, 'warn'>;
}

type AckTurn = Pick<TurnRecord, 'id' | 'roomId' | 'threadId' | 'cron' | 'privateTo' | 'kind' | 'question'>;

/**
 * Whether the turn's trigger gets reactions: `reactions` on, and a person's message asked it. A
 * retry's question keeps its first turn's reactions (the retried line and the new answer say enough).
 */
export function acknowledges(rec: AckTurn, ports: Pick<AckPorts, 'config'>): boolean {
    return ports.config.reactions && !rec.cron && !rec.privateTo && !rec.question;
}

/**
 * Shows `next` on the trigger in place of what was there. Resolves when the reaction calls have
 * returned, never with an error. `first`: the turn's first step, in the event that stored it
 * (nothing is on its question yet). A 1:1 DM's `taken` waits (see `lateTaken`) unless `now` is set.
 * `maybe`: what may be there instead of {@link MAYBE_THERE}'s guess (a merged follow-up's ↪️).
 * `last`: the turn's last reaction (a steered follow-up's ↪️), forgotten like ✅ and ❌.
 */
export async function ack(
    rec: AckTurn,
    next: Ack,
    ports: AckPorts,
    opts: { first?: boolean; now?: boolean; maybe?: readonly Ack[]; last?: boolean } = {},
): Promise<void> {
    if (!acknowledges(rec, ports) || unsupported.size > 0) {
        return;
    }
    if (opts.first && !shown.has(rec.id)) {
        remember(rec.id, null, Date.now());
    }
    const known = shown.has(rec.id);
    const before = shown.get(rec.id);
    if (before === next) {
        return;
    }
    const gone = known ? (before ? [before] : []) : (opts.maybe ?? MAYBE_THERE[next]);
    if (next === 'taken' && rec.kind === 'dm' && !opts.now) {
        // No 👀 yet (lateTaken): a ⏳ it may have had goes now.
        remember(rec.id, null, Date.now());
        return swap(rec, gone, undefined, ports);
    }
    if (next === 'answered' || next === 'failed' || opts.last) {
        forget(rec.id);
    } else {
        remember(rec.id, next, Date.now());
    }
    await swap(rec, gone, next, ports);
}

/** Removes `gone` and adds `next` on the question, side by side; a refusal is logged, never thrown. */
async function swap(rec: AckTurn, gone: readonly Ack[], next: Ack | undefined, ports: AckPorts): Promise<void> {
    const calls = gone.map((a) => ports.chat.react(rec.id, ACK_EMOJI[a], false));
    if (next) {
        calls.push(ports.chat.react(rec.id, ACK_EMOJI[next], true));
    }
    const failed = (await Promise.allSettled(calls)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed?.reason instanceof ReactionsUnsupported) {
        if (unsupported.size === 0) {
            unsupported.add(true);
            ports.log.warn(
                `This server's Apps-Engine cannot set reactions for apps (Apps-Engine 1.58 and 1.59, Rocket.Chat 7.13 to 8.0, never create the message updater; from 1.62 it works): the questions get no reactions until the server is updated. ${failed.reason.message}`,
            );
        }
        return;
    }
    if (failed) {
        const why = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
        ports.log.warn(`The reaction on ${describe(rec)} could not be ${next ? `set to ${ACK_EMOJI[next]}` : 'cleared'}: ${why}`);
    }
}

/** A 1:1 DM turn still running at its status message's moment gets its 👀 now (ack skipped it when it went). */
export async function lateTaken(rec: AckTurn, ports: AckPorts): Promise<void> {
    if (rec.kind === 'dm' && shown.get(rec.id) === null) {
        await ack(rec, 'taken', ports, { now: true });
    }
}
