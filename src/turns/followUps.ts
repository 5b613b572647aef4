import { NEW_MESSAGE_HEADER } from '../context/contextBlock';
import { chooseTransport, HermesCapabilities } from '../hermes/capabilities';
import { HermesConfig } from '../settings/config';
import { usageDay } from '../usage/usage';
import { ack } from './ack';
import { move } from './machine';
import { TickPorts } from './tickPorts';
import { comesBefore, describe, hermesFor, TurnRecord } from './turnRecord';

/*
 * busy_input_mode: what a person's message does while their turn of the same conversation runs
 * (a follow-up). `steer` hands its words to the running run (newer servers: POST
 * /v1/runs/{id}/steer) and it ends there, ↪️ on it; `merge` makes the follow-ups that came during
 * the run one next turn: the first of them carries the others' words, each as its own
 * `[New message]`, so their boundaries stay; `queue` answers each in turn. A steer Hermes refuses
 * (the run is ending, or waits for an approval) falls back to `merge`.
 *
 * Hermes's messaging gateway (gateway/run.py at 306e2d2, 5487–5600) steers, or queues each
 * follow-up as its own turn (#43066: it stopped merging texts into one message because that lost
 * their boundaries); the app's merge keeps them apart inside one turn.
 */
export type FollowUpMode = 'steer' | 'merge' | 'interrupt' | 'queue';

/** How soon a waiting turn looks again at a turn ahead of it that was being sent without its run on its record yet. */
const LOOK_AGAIN_MS = 500;

/** What the setting means with this server: `auto` steers where the run transport offers it, and merges elsewhere. */
export function followUpMode(config: Pick<HermesConfig, 'busyInputMode' | 'hermesTransport'>, caps: HermesCapabilities): FollowUpMode {
    const setting = config.busyInputMode;
    if (setting === 'queue' || setting === 'merge' || setting === 'interrupt') {
        return setting;
    }
    return caps.steer && chooseTransport(config.hermesTransport, caps) === 'runs' ? 'steer' : 'merge';
}

/**
 * A person's own message turn, whose words can join another turn: not a scheduled prompt, an
 * action, a retry or a private answer, and no files. A room thread's turn joins before its block
 * is read: only its new message goes (the thread's messages come with the turn that takes it in).
 */
export function joinable(rec: TurnRecord): rec is TurnRecord & { user: string } {
    return (
        typeof rec.user === 'string' &&
        !rec.cron &&
        !rec.privateTo &&
        !rec.question &&
        !rec.id.includes('.') &&
        !rec.files?.length &&
        !rec.contextFiles?.files.length
    );
}

/** The new message of a turn's text: what follows its `[New message]` line (a DM's text is all new). */
export function newMessageOf(user: string): string {
    const marker = `\n\n${NEW_MESSAGE_HEADER}\n`;
    const at = user.lastIndexOf(marker);
    return at === -1 ? user : user.slice(at + marker.length);
}

/**
 * A turn that must wait for its conversation, before its wait is written. A follow-up (a turn
 * ahead of it is at Hermes: its run named, or being sent) is noted on its record (`followUp`);
 * with steer, one whose only turn ahead is the same person's run goes into that run and ends here
 * (true: its receipt written, ↪️ on it). A turn ahead that is only claimed by its event's process
 * (a quick turn names its run on its record 0.1 s in) is looked at again 500 ms later: a waiting
 * turn has no ticks of its own.
 */
export async function beforeWait(rec: TurnRecord, ahead: TurnRecord[], ports: TickPorts): Promise<boolean> {
    const mode = joinable(rec) ? followUpMode(ports.config, await ports.capabilities()) : 'queue';
    if (mode === 'queue') {
        return false;
    }
    const target = ahead.length === 1 && ahead[0].askerId === rec.askerId ? ahead[0] : undefined;
    if (mode === 'steer' && target?.runId && (await steered(rec, target, ports))) {
        return true;
    }
    if (mode === 'interrupt' && target && (target.runId || target.phase === 'running')) {
        await interrupt(rec, target, ports);
    }
    if (!rec.followUp && ahead.some((o) => o.runId || o.phase === 'running')) {
        rec.followUp = true;
        if (rec.waiting === true) {
            // Already waiting (a second look): its wait writes nothing new, so this does.
            await ports.store.save(rec);
        }
    }
    const unnamed = ahead.some((o) => !o.runId && (o.phase === 'running' || o.owner?.fresh));
    if (unnamed && (!rec.followUp || ((mode === 'steer' || mode === 'interrupt') && target && !target.runId))) {
        await ports.schedule({ turnId: rec.id, chain: rec.chain, wake: true }, LOOK_AGAIN_MS);
    }
    return false;
}

/**
 * busy_input_mode interrupt: the run ahead is stopped and its question asked again with this one,
 * in this turn (its words first, each its own `[New message]`). The turn is written before the stop
 * is asked for: a process that dies between leaves the question asked twice, never lost.
 */
async function interrupt(rec: TurnRecord & { user: string }, target: TurnRecord, ports: TickPorts): Promise<void> {
    // Once: a later look (its wake-ups while the run stops) finds the stop asked for.
    const [whole, asked] = await Promise.all([ports.store.get(target.id), ports.store.stopRequest(target.id)]);
    if (asked || !whole || typeof whole.user !== 'string' || whole.phase === 'done' || whole.delivery) {
        return;
    }
    rec.user = withEarlier(rec.user, newMessageOf(whole.user));
    rec.followUp = true;
    await ports.store.save(rec);
    await ports.store.requestStop(target.id, rec.askerUsername);
    if (target.runId) {
        await hermesFor(rec, ports.hermes)
            .stopRun(target.runId)
            .catch((e: unknown) => ports.log.warn(`Stopping run ${target.runId} for a follow-up failed: ${e instanceof Error ? e.message : String(e)}`));
    }
    ports.log.info(`Turn ${describe(rec)} interrupts turn ${target.id}: its question is asked again with this one (busy_input_mode).`);
}

/** A turn's text with an earlier new message put before its own, each after its own `[New message]` line. */
export function withEarlier(user: string, earlier: string): string {
    const marker = `\n\n${NEW_MESSAGE_HEADER}\n`;
    const at = user.indexOf(marker);
    return at === -1 ? `${earlier}${marker}${user}` : `${user.slice(0, at)}${marker}${earlier}${user.slice(at)}`;
}

/** Hands the turn's new message to the run ahead; true when Hermes took it and the turn ended. */
async function steered(rec: TurnRecord & { user: string }, target: TurnRecord, ports: TickPorts): Promise<boolean> {
    const taken = await hermesFor(rec, ports.hermes)
        .steerRun(target.runId as string, newMessageOf(rec.user))
        .catch((e: unknown) => {
            ports.log.warn(`Steering ${describe(rec)} into run ${target.runId} failed: ${e instanceof Error ? e.message : String(e)}`);
            return false;
        });
    if (!taken) {
        ports.log.info(`Run ${target.runId} took no more input: ${describe(rec)} waits for it (merged with what follows).`);
        return false;
    }
    await ended(rec, 'joined', ports, { last: true });
    ports.log.info(`Turn ${describe(rec)} steered into run ${target.runId} of turn ${target.id}.`);
    return true;
}

/**
 * A follow-up about to be sent takes in the follow-ups right behind it: the same person's turns of
 * its conversation that wait for it, up to the first turn of someone else — what they sent during
 * the same run. Their words join its text and their ids its record (`merged`), removed when it has
 * answered. A turn whose text is not stored yet, or that has files, stays a turn of its own; so do
 * two questions sent before either went (a burst is not a follow-up).
 */
export async function mergeFollowUps(rec: TurnRecord, open: TurnRecord[], ports: TickPorts): Promise<void> {
    if (!rec.followUp || rec.merged || !joinable(rec) || followUpMode(ports.config, await ports.capabilities()) === 'queue') {
        return;
    }
    const behind = open.filter((o) => o.sessionKey === rec.sessionKey && o.id !== rec.id && comesBefore(rec, o)).sort((a, b) => (comesBefore(a, b) ? -1 : 1));
    const mine: TurnRecord[] = [];
    for (const o of behind) {
        if (o.askerId !== rec.askerId || !o.followUp || !o.waiting || o.runId || o.phase !== 'queued') {
            break;
        }
        mine.push(o);
    }
    if (mine.length === 0) {
        return;
    }
    const texts: string[] = [];
    const ids: string[] = [];
    for (const head of mine) {
        const whole = await ports.store.get(head.id);
        if (!whole || !joinable(whole)) {
            break;
        }
        texts.push(newMessageOf(whole.user));
        ids.push(whole.id);
    }
    if (ids.length === 0) {
        return;
    }
    rec.user = [rec.user, ...texts.map((text) => `${NEW_MESSAGE_HEADER}\n${text}`)].join('\n\n');
    rec.merged = ids;
    ports.log.info(`Turn ${describe(rec)} takes in the follow-ups ${ids.join(', ')} (busy_input_mode).`);
    await Promise.all(ids.map((id) => ack(joinedTurn(rec, id), 'joined', ports)));
}

/**
 * A turn with merged follow-ups has answered, or was stopped: they end with it, before its own
 * record goes, each with its message's receipt. A failed turn leaves them: each is then sent on its own.
 */
export async function endMerged(rec: TurnRecord, how: 'answered' | 'stopped' | 'failed', ports: TickPorts): Promise<void> {
    if (!rec.merged?.length || how === 'failed') {
        return;
    }
    // Their ↪️ may have been set by another process (the one that merged them).
    const maybe = ['joined', 'queued', 'taken'] as const;
    await Promise.all(rec.merged.map((id) => ended(joinedTurn(rec, id), how === 'answered' ? 'answered' : 'failed', ports, { maybe })));
}

/** A merged follow-up as far as its end needs it: the same place and person as the turn that took it in. */
function joinedTurn(rec: TurnRecord, id: string): TurnRecord {
    return { ...rec, id, merged: undefined, delivery: undefined, approval: undefined, waiting: true, phase: 'queued' };
}

/** A turn whose words went into another: its receipt (a usage row, no tokens), its reaction, its records gone. */
async function ended(rec: TurnRecord, reaction: 'joined' | 'answered' | 'failed', ports: TickPorts, how: Parameters<typeof ack>[3]): Promise<void> {
    move(rec, { kind: 'joined' });
    await Promise.all([
        ports.usage?.record(usageDay(ports.now(), ports.config.timezone), rec.askerId, rec.roomId, undefined, { receipt: rec.id, answered: false }),
        ack(rec, reaction, ports, how),
    ]);
    await ports.store.remove(rec.id, { stop: true, decisions: false });
}
