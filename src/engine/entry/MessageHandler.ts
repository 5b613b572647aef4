import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { admit, conversationKind, InboundMessage } from '../../admission/admit';
import { followedFor, FollowMode } from '../../follow/threadFollow';
import { policyForRoom } from '../../policy/roomPolicy';
import { RecentlySeen } from '../../admission/recentlySeen';
import { isVisibleNow } from '../../delivery/visibility';
import { toInbound } from '../adapters/inbound';
import { AppState } from '../appState';
import { CallPorts } from '../callPorts';
import { Gate } from './gate';
import { missedIn, MissedMessage } from './missedMessages';
import { takeAdmitted } from './admittedMessage';

/** A message's place in line (turns/placeOrder.ts): its room, or its thread. One key for events and missed messages alike. */
function placeOf(m: { roomId: string; threadId?: string }): string {
    return `${m.roomId}:${m.threadId ?? ''}`;
}

/** A direct room whose members could not be read counts as a group DM: room rules, never the looser DM ones. */
const UNKNOWN_MEMBERS = 3;

/**
 * The message events (`IPostMessageSent`, `IPostMessageSentToBot`): guards first (cheapest
 * checks before any read), one membership read for rooms, the persisted receipt so a
 * message is taken once ever, then the turn is stored and its first step started.
 */
export class MessageHandler {
    private readonly seen = new RecentlySeen();

    constructor(
        private readonly app: AppState,
        private readonly gate: Gate,
    ) {}

    /**
     * The engine asks before every message event (`checkPostMessageSent`/`Updated`); an app
     * without the method costs a "method not found" line in the log per message. Answering it
     * also spares the call for the bot's own messages and edits (its status message edits),
     * which are never turns: one round trip fewer for each.
     */
    public async worthHandling(message: IMessage, read: IRead): Promise<boolean> {
        const bot = await this.app.botUser(read);
        return !bot || message.sender?.id !== bot.id;
    }

    /** A message without a mention in a thread the bot follows (thread_follow): one read, only when the setting is on. */
    private async followed(call: CallPorts, mode: FollowMode, inbound: InboundMessage): Promise<boolean> {
        if (mode === 'off' || !inbound.threadId) {
            return false;
        }
        return followedFor(mode, await call.follows().askers(inbound.threadId), inbound.senderId);
    }

    /** `logger` is the engine's logger of this call: entries reach the admin log when the call returns. */
    public async handle(message: IMessage, read: IRead, persistence: IPersistence, modify: IModify, logger: ILogger): Promise<void> {
        if (!message.id) {
            return;
        }
        // In a process that has just started, the room's messages whose events died with the one
        // before it take their places in line first (missedFirst.ts); this call carries them to the end.
        const a = { read, persistence, modify, logger };
        const missed: Array<Promise<void>> = [];
        const room = message.room;
        const first = room?.id
            ? this.app.missedFirst.before(
                  room,
                  Date.now(),
                  (window) => this.missedInLine(room.id, message.id as string, window, missed, a),
                  message.createdAt ? new Date(message.createdAt).getTime() : undefined,
              )
            : undefined;
        if (first) {
            await first;
        }
        await Promise.all([this.take(message, toInbound(message), read, persistence, modify, logger), ...missed]);
    }

    /**
     * Messages whose events died with an earlier process (missedMessages.ts), oldest first: each
     * takes its place in its room's line now, without an await between them, then is read whole
     * and taken as its event would have been. One promise per message.
     */
    public takeMissed(missed: MissedMessage[], a: { read: IRead; persistence: IPersistence; modify: IModify; logger: ILogger }): Array<Promise<void>> {
        const placed = missed.map((m) => ({ id: m.id, inLine: this.app.placeOrder.arrive(placeOf(m)) }));
        return placed.map(async ({ id, inLine }) => {
            try {
                const message = await a.read
                    .getMessageReader()
                    .getById(id)
                    .catch(() => undefined);
                if (message?.id) {
                    await this.takeInLine(message, toInbound(message), inLine, a.read, a.persistence, a.modify, a.logger);
                }
            } finally {
                inLine.done();
            }
        });
    }

    /** Reads the room's missed messages of `window` and puts each in the room's line, oldest first; their handling joins `missed`. */
    private async missedInLine(
        roomId: string,
        current: string,
        window: { since: number; until: number },
        missed: Array<Promise<void>>,
        a: { read: IRead; persistence: IPersistence; modify: IModify; logger: ILogger },
    ): Promise<void> {
        const bot = await this.app.botUser(a.read);
        if (!bot) {
            return;
        }
        const found = (await missedIn(a.read, [roomId], bot.id, window)).filter((m) => m.id !== current);
        missed.push(...this.takeMissed(found, a));
    }

    /**
     * `IPostMessageUpdated`: a person who forgot the mention and adds it by editing expects an
     * answer. The edit counts as a question asked at the edit's time; everything else is the
     * posted path's (admission, allowlist, membership, the receipt: a message that already
     * was a turn, queued, running or answered, opens no second one). The bot's own edits
     * (status messages, every 2 s), system edits and someone else's edit of a message open nothing.
     */
    public async handleEdit(message: IMessage, read: IRead, persistence: IPersistence, modify: IModify, logger: ILogger): Promise<void> {
        const edit = editOf(message);
        if (!message.id || !edit) {
            return;
        }
        // Most updates are the app's own (status messages): turned away before any other read.
        if (edit.senderId === (await this.app.botUser(read))?.id) {
            return;
        }
        await this.take(message, edit, read, persistence, modify, logger);
    }

    private async take(message: IMessage, received: InboundMessage, read: IRead, persistence: IPersistence, modify: IModify, logger: ILogger): Promise<void> {
        // In line before the first await: turns of one room or thread are stored in the order their events came.
        const inLine = this.app.placeOrder.arrive(placeOf(received));
        try {
            await this.takeInLine(message, received, inLine, read, persistence, modify, logger);
        } finally {
            inLine.done();
        }
    }

    private async takeInLine(
        message: IMessage,
        received: InboundMessage,
        inLine: { ready: Promise<void>; done: () => void },
        read: IRead,
        persistence: IPersistence,
        modify: IModify,
        logger: ILogger,
    ): Promise<void> {
        const call = await this.gate.event({ read, modify, persistence, logger });
        const { bot, config, log } = call;
        if (!bot) {
            return;
        }
        const inbound = await withRoomFacts(received, read);
        // A 1:1 DM is not a room here; a thread follows its room.
        const room = config ? policyForRoom(config, inbound.roomId, conversationKind(inbound) === 'dm') : undefined;
        const opts = {
            allowedUserIds: config?.allowedUserIds ?? [],
            ignoreSenders: config?.ignoreSenders ?? [],
            maxAgeSeconds: config?.maxMessageAgeSeconds ?? 120,
            addressed: room?.kind === 'entry' && room.policy.mode === 'free',
        };
        let decision = admit(inbound, bot, opts);
        if (!decision.admit && decision.reason === 'no-mention' && config && (await this.followed(call, config.threadFollow, inbound))) {
            decision = admit(inbound, bot, { ...opts, addressed: true });
        }
        if (!decision.admit) {
            if (decision.reason === 'not-allowed' || decision.reason === 'too-old') {
                log.debug(
                    `Ignored message ${inbound.id}: ${decision.reason === 'too-old' ? 'older than max_message_age_seconds' : `sender ${inbound.senderId} is not in allowed_user_ids`}.`,
                );
            }
            return;
        }
        if (this.seen.has(inbound.id)) {
            // Taken here already: a DM's second event (the engine fires it once the first's handler
            // returned, the quick turn answered) or an edit of a message that was a turn. No read.
            return;
        }
        // A burst's events read and store a few at a time (turns/intakeGate.ts); each gives its
        // place back once its turn is stored, and at the latest when it returns.
        await inLine.ready;
        const leave = await this.app.intake.enter();
        const stored = () => {
            leave();
            inLine.done();
        };
        try {
            await takeAdmitted(this.app, this.seen, { message, inbound, room, decision, call, read, bot, stored });
        } finally {
            leave();
        }
    }
}

/**
 * An edit as a question: asked when it was edited, by the sender themselves, of a message
 * people can still see. Undefined for anything that is no person's edit of their own message.
 */
function editOf(message: IMessage): InboundMessage | undefined {
    const inbound = toInbound(message);
    const editedAt = message.editedAt ? new Date(message.editedAt).getTime() : NaN;
    if (!Number.isFinite(editedAt) || message.editor?.id !== inbound.senderId || !isVisibleNow(message as never)) {
        return undefined;
    }
    return { ...inbound, edited: false, createdAt: editedAt, postedAt: inbound.createdAt };
}

/**
 * A direct room's member count decides between DM and room rules. The event's room carries
 * it; if it does not, read the room once, and if that fails too, fail closed: room rules (a
 * mention is needed, "always" is never offered); the next message reads again.
 */
async function withRoomFacts(inbound: InboundMessage, read: IRead): Promise<InboundMessage> {
    if (inbound.roomType !== 'd' || inbound.directMemberCount !== undefined) {
        return inbound;
    }
    try {
        const room = await read.getRoomReader().getById(inbound.roomId);
        return { ...inbound, directMemberCount: room?.userIds?.length || UNKNOWN_MEMBERS };
    } catch {
        return { ...inbound, directMemberCount: UNKNOWN_MEMBERS };
    }
}
