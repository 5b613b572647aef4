/* A message that opens no turn is answered where it was asked: a command, an approval's yes or no, a notice. */

import { isPrivateCommand, parseTextCommand } from '../admission/textCommand';
import { textDecision } from '../approvals/approvalPolicy';
import { DecidePorts, decideApproval, pendingApproval } from '../approvals/decide';
import { runCommand } from '../commands/runCommand';
import { deliver } from '../delivery/deliver';
import { BotMessageKind } from '../delivery/messageKind';
import { conversationLink, firstMessagePrefix } from '../delivery/quote';
import { Reply, StartOutcome, StartPorts } from '../turns/startPorts';
import { Turn, describeTurn } from '../turns/turn';
import { IntakeReady } from './intakePorts';

/** `yes`/`no` (and `/approve`, `/deny`) while an approval is pending in this conversation. */
export async function answerDecision(turn: Turn, key: string, ports: IntakeReady): Promise<StartOutcome | undefined> {
    const decision = textDecision(turn.text);
    const pending = decision ? await pendingApproval(ports.turns, key) : undefined;
    if (!decision || !pending) {
        return undefined;
    }
    const decidePorts: DecidePorts = { config: ports.config, hermes: ports.hermes, store: ports.turns, chat: ports.chat, log: ports.log };
    const result = await decideApproval(pending, { id: turn.message.senderId, username: turn.message.senderUsername }, decision, decidePorts);
    if (result !== 'decided') {
        const why = result === 'not-yours' ? 'approval_not_yours' : result === 'not-shown-whole' ? 'approval_not_shown_whole' : 'approval_no_longer_pending';
        await ports.chat.whisper(turn.message.senderId, { roomId: turn.message.roomId, threadId: turn.message.threadId }, (tr) => tr(why));
    }
    return { kind: 'command', name: `approval:${decision}` };
}

/** `@bot /new`, `!new` in a DM, …: the one command runner, answered in place. */
export async function answerCommand(turn: Turn, key: string, ports: IntakeReady, reply: Reply): Promise<StartOutcome | undefined> {
    const command = parseTextCommand(turn.text);
    if (!command) {
        return undefined;
    }
    const m = turn.message;
    const who = { id: m.senderId, username: m.senderUsername };
    const { siteUrl } = await ports.server();
    // A command may wait on Hermes (a session list, a search): not in the intake's place.
    ports.stored?.();
    const answer = await runCommand(command, who, key, {
        config: ports.config,
        hermes: ports.hermes,
        sessions: ports.sessions,
        turns: ports.turns,
        live: ports.live,
        log: ports.log,
        botUsername: ports.bot.username,
        room: turn.room,
        unfollow: ports.unfollow,
        index: ports.index,
        usage: ports.usage,
        ...ports.commandExtras,
        scope: { roomId: m.roomId, roomType: m.roomType, roomName: turn.roomName, threadId: m.threadId, kind: turn.kind },
        link: (entry) => conversationLink(siteUrl, entry),
        // A turn waiting behind another has no ticks: wake it so it sees the stop now.
        wake: (rec) => ports.schedule({ turnId: rec.id, chain: rec.chain, wake: true }),
        // A private reply is read by the asker alone: in their language; in the room, the server's.
        language: isPrivateCommand(command) ? m.senderLanguage : undefined,
    });
    // An empty reply: the command's own message said it (a background task's public "started").
    if (answer.text && isPrivateCommand(command)) {
        // About the asker's own sessions: nobody else in the room sees it.
        await ports.chat.whisper(m.senderId, { roomId: m.roomId, threadId: m.threadId }, answer.text);
    } else if (answer.text) {
        await reply(answer.text, answer.kind);
    }
    return { kind: 'command', name: command.name };
}

/** Command answers and notices go where the answer would: in the thread, or quoting the question. */
export async function replyInPlace(turn: Turn, ports: StartPorts, text: string, kind: BotMessageKind): Promise<void> {
    const server = await ports.server();
    const m = turn.message;
    const quote = firstMessagePrefix(
        {
            kind: turn.kind,
            threadId: m.threadId,
            roomType: m.roomType,
            roomId: m.roomId,
            roomName: turn.roomName,
            messageId: m.id,
            askerUsername: m.senderUsername,
        },
        server,
    );
    await deliver(
        {
            target: { roomId: m.roomId, threadId: m.threadId },
            text,
            kind,
            maxMessageSize: server.maxMessageSize,
            freshMaxMessageSize: async () => (await ports.server(true)).maxMessageSize,
            firstPrefix: quote,
        },
        ports.chat,
        ports.log,
        describeTurn(turn),
    );
}
