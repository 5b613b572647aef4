import { questionText } from '../admission/admit';
import { policyForRoom } from '../policy/roomPolicy';
import { SessionRecord } from '../sessions/sessionRecord';
import { TickPorts } from './tickPorts';
import { Turn, turnSystemText } from './turn';
import { TurnRecord } from './turnRecord';
import { buildUserText } from './userText';

/**
 * A turn stored from its message event is written as its head alone: its text stays in that
 * call's memory until the turn's next save writes it (a quick turn ends before one, one call
 * less). If that process dies first, whoever carries the turn on builds the text again as the
 * event did: the question read by id, the context from the room's history before it, the room's
 * instruction from the settings. False when the question can no longer be read (deleted): the
 * asker is told the turn was lost.
 */
export async function rebuildText(rec: TurnRecord, session: SessionRecord, ports: TickPorts): Promise<boolean> {
    if (rec.cron || rec.privateTo || rec.offerPost) {
        // Scheduled prompts and message actions are written with their text, which no message holds.
        return false;
    }
    const m = await ports.history.message(rec.id);
    if (!m || m.isSystem || !ports.botUsername) {
        return false;
    }
    const bot = { id: ports.botId, username: ports.botUsername };
    const text = questionText(rec.kind, m.text, bot.username);
    if (!text) {
        return false;
    }
    const room = policyForRoom(ports.config, rec.roomId, rec.kind === 'dm');
    const turn: Turn = {
        message: {
            id: rec.id,
            roomId: rec.roomId,
            roomType: rec.roomType,
            senderId: rec.askerId,
            senderUsername: rec.askerUsername,
            text: m.text,
            threadId: m.threadId,
            isSystem: false,
            edited: false,
            createdAt: rec.createdAt,
            postedAt: rec.postedAt,
            files: rec.files,
        },
        kind: rec.kind,
        text,
        createdAt: new Date(rec.createdAt),
        postedAt: rec.postedAt !== undefined ? new Date(rec.postedAt) : undefined,
        roomName: rec.roomName,
        room,
    };
    const { siteUrl } = await ports.server();
    const built = await buildUserText({ turn, config: ports.config, bot, session, history: ports.history, siteUrl, log: ports.log, now: ports.now });
    rec.user = built.text;
    rec.contextFiles = rec.contextFiles ?? built.contextFiles;
    rec.system = turnSystemText(turn);
    rec.recap = session.recap;
    return true;
}
