import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { Admission, InboundMessage } from '../../admission/admit';
import { PersonalText } from '../../i18n/messages';
import { RoomLookup } from '../../policy/roomPolicy';
import { Receipts } from '../adapters/receipts';
import { RecentlySeen } from '../../admission/recentlySeen';
import { takeMessage } from '../../intake/takeMessage';
import { tick } from '../../turns/tick';
import { Turn } from '../../turns/turn';
import { botPostingRefusal, roomHasBot } from '../adapters/membership';
import { AppState } from '../appState';
import { CallPorts } from '../callPorts';

/*
 * A message the admission let through, inside the intake: whether it is taken (the bot is a
 * member, the room is not off, automation or closed to the bot's posts, no receipt yet) and its
 * turn started, the turn's own reads beside those checks.
 */

/** The reads that decide whether the message is taken, and its turn started: inside the intake. */
export async function takeAdmitted(
    app: Pick<AppState, 'live' | 'serverInfo'>,
    seen: RecentlySeen,
    e: {
        message: IMessage;
        inbound: InboundMessage;
        room: RoomLookup | undefined;
        decision: Extract<Admission, { admit: true }>;
        call: CallPorts;
        read: IRead;
        bot: IUser;
        stored: () => void;
    },
): Promise<void> {
    const { message, inbound, room, decision, call, read, bot, stored } = e;
    const { config, log } = call;
    const receipts = call.receipts();
    // The persisted receipt is read while the membership is: one round trip for both.
    const taken = receipts.taken(inbound.id);
    taken.catch(() => undefined);
    const member = roomHasBot(read, message.room, bot.id);
    member.catch(() => undefined);
    const off = room?.kind === 'entry' && room.policy.mode === 'off';
    const automation = decision.kind === 'room' && Boolean(config?.automationRoomIds.includes(inbound.roomId));
    // A room the server refuses the bot's posts in (read-only, muted, encrypted): no turn it could not deliver.
    // No read, except the room's owners and moderators in a read-only room.
    const cannotPost = await botPostingRefusal(read, message.room, bot);
    // In-process first (a DM's two events arrive back to back), then the persisted receipt (replays, other instances, restarts).
    const admitted = (async () => {
        if (!(await member) || !seen.claim(inbound.id)) {
            return false;
        }
        // A refusal is the message's decision: its receipt says so, so a new process that looks
        // again at the minute before it started (missedMessages.ts) does not take it under
        // settings changed since (cluster.test.ts: an automation room switched back).
        const refused = async (told: Promise<void> | undefined) => {
            await Promise.all([told, receipts.record(inbound.id)]);
            return false;
        };
        if (off) {
            // Admins only: to anyone else a room switched off looks like a bot that is not there.
            const admin = call.config?.adminUserIds.includes(inbound.senderId);
            return refused(admin ? tellOnce(call, inbound, receipts, seen, 'room-off', (tr) => tr('notice_room-off')) : undefined);
        }
        if (automation) {
            return refused(tellOnce(call, inbound, receipts, seen, 'automation', (tr) => tr('notice_automation')));
        }
        if (cannotPost) {
            log.info(`Message ${inbound.id} in room ${inbound.roomId} not answered: the server refuses the bot's posts there (${cannotPost}).`);
            return refused(tellOnce(call, inbound, receipts, seen, 'cannot-post', (tr) => tr(`notice_cannot-post_${cannotPost}`)));
        }
        if (await taken) {
            log.debug(`Message ${inbound.id} was already taken as a turn.`);
            return false;
        }
        return true;
    })();
    admitted.catch(() => undefined);
    if (off || automation || cannotPost) {
        await admitted;
        return;
    }
    const turn: Turn = {
        message: inbound,
        kind: decision.kind,
        text: decision.text,
        createdAt: new Date(inbound.createdAt ?? Date.now()),
        postedAt: inbound.postedAt !== undefined ? new Date(inbound.postedAt) : undefined,
        roomName: message.room.slugifiedName,
        room,
    };
    // The turn's own reads (session, history) start now, beside the membership and receipt
    // reads; nothing is written or posted before `admitted` says yes (intake/takeMessage).
    await takeMessage(turn, {
        admitted,
        config,
        hermes: call.hermes(),
        bot: { id: bot.id, username: bot.username },
        chat: call.chat(message.room),
        history: call.history(),
        sessions: call.sessions(),
        turns: call.turns(),
        live: app.live,
        server: (fresh?: boolean) => app.serverInfo.get(read, fresh),
        // The turn's first step runs here, in the event, and while the turn is quick its next
        // steps too (turns/carryOn.ts): a turn Hermes answers within QUICK_MS needs no
        // scheduler job; a longer one is handed to its chain of ticks and the event returns.
        schedule: async (job) => {
            if (config && !job.wake) {
                await tick({ ...job, quick: true }, call.tick(config));
            } else {
                await call.schedule(job, 0);
            }
        },
        claim: () => receipts.record(inbound.id),
        stored,
        index: call.sessionIndex(),
        usage: call.usage(),
        commandExtras: config ? call.commandExtras(config, message.room) : undefined,
        unfollow: inbound.threadId ? () => call.follows().remove(inbound.threadId as string) : undefined,
        log,
        now: () => Date.now(),
    });
}

/**
 * A room the bot does not answer in (an `off` policy, an automation room): who mentions the
 * bot there hears why, privately, once (per room and person while the receipt lasts), so a
 * silent bot is not mistaken for a broken one.
 */
async function tellOnce(call: CallPorts, inbound: InboundMessage, receipts: Receipts, seen: RecentlySeen, why: string, text: PersonalText): Promise<void> {
    const marker = `${why}:${inbound.roomId}:${inbound.senderId}`;
    // In-process first (events of one process can overlap), then persisted (other instances, restarts).
    if (!seen.claim(marker) || (await receipts.taken(marker))) {
        return;
    }
    await receipts.record(marker);
    await call.chat().whisper(inbound.senderId, { roomId: inbound.roomId, threadId: inbound.threadId }, text);
}
