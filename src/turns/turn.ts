import { ConversationKind, InboundMessage } from '../admission/admit';
import { RoomLookup } from '../policy/roomPolicy';
import { TurnAsk } from '../admission/turnAdmission';
import { HermesConfig } from '../settings/config';
import { isSharedSession, sessionKey, SessionKeyOptions, SessionScope } from '../sessions/sessionKey';

/** One admitted message on its way to Hermes. */
export interface Turn {
    message: InboundMessage;
    kind: ConversationKind;
    /** The asker's text with the bot's mention removed. */
    text: string;
    /** When the question was asked: the message's time, or its edit's. */
    createdAt: Date;
    /** A turn opened by an edit: when the message was posted. */
    postedAt?: Date;
    roomName?: string;
    /** What the room's policy gives this turn (room_policies); absent: the default. */
    room?: RoomLookup;
}

export function keyOptions(config: Pick<HermesConfig, 'groupSessionsPerUser' | 'threadSessionsPerUser'>): SessionKeyOptions {
    return { groupSessionsPerUser: config.groupSessionsPerUser, threadSessionsPerUser: config.threadSessionsPerUser };
}

function scopeOf(turn: Turn): SessionScope {
    return {
        chatType: turn.kind === 'dm' ? 'dm' : 'channel',
        roomId: turn.message.roomId,
        threadId: turn.message.threadId,
        userId: turn.message.senderId,
        profile: turn.room?.kind === 'entry' ? turn.room.policy.profile : undefined,
    };
}

export function turnSessionKey(turn: Turn, config: Pick<HermesConfig, 'groupSessionsPerUser' | 'threadSessionsPerUser'>): string {
    return sessionKey(scopeOf(turn), keyOptions(config));
}

export function turnIsShared(turn: Turn, config: Pick<HermesConfig, 'groupSessionsPerUser' | 'threadSessionsPerUser'>): boolean {
    return isSharedSession(scopeOf(turn), keyOptions(config));
}

/** Ids only: what the log may say about a turn. */
export function describeTurn(turn: Turn): string {
    const m = turn.message;
    return `message ${m.id} in room ${m.roomId}${m.threadId ? ` thread ${m.threadId}` : ''}`;
}

/** The system text of a turn from a message: where it comes from, who asks, the room's instruction (startTurn, and rebuildText for a turn stored without it). */
export function turnSystemText(turn: Turn): string {
    return systemText({
        kind: turn.kind,
        roomId: turn.message.roomId,
        roomName: turn.roomName,
        threadId: turn.message.threadId,
        askerUsername: turn.message.senderUsername,
        roomInstruction: turn.room?.kind === 'entry' ? turn.room.policy.prompt : undefined,
    });
}

/** The message's turn as the admission sees it: the room's policy as its event looked it up. */
export function askOf(turn: Turn): TurnAsk {
    const m = turn.message;
    return {
        source: 'message',
        asker: { id: m.senderId, username: m.senderUsername },
        room: { id: m.roomId, type: m.roomType, directMemberCount: m.directMemberCount },
        policy: turn.room,
    };
}

export interface SystemTextInput {
    kind: ConversationKind;
    roomId: string;
    roomName?: string;
    threadId?: string;
    askerUsername: string;
    /** The room's instruction from room_policies (`prompt=…`), written by an admin. */
    roomInstruction?: string;
}

/**
 * The system message for every turn. The api_server tells the model "plain text, no
 * markdown", which is wrong for Rocket.Chat, so this says otherwise; it also names where the
 * turn comes from, since the api_server carries no chat metadata of its own.
 */
export function systemText(input: SystemTextInput): string {
    const where =
        input.kind === 'dm'
            ? 'a private 1:1 direct message'
            : `the Rocket.Chat room ${input.roomName ? `#${input.roomName} ` : ''}(room id ${input.roomId})${input.threadId ? `, in a thread (thread id ${input.threadId})` : ''}`;
    const lines = [
        `You are Hermes, an AI agent who is a member of a Rocket.Chat workspace. This message reaches you through ${where}, from @${input.askerUsername}.`,
        'Rocket.Chat renders Markdown: use it where it helps (code blocks with a language, lists, **bold**, links). Keep answers concise; other people may be reading.',
    ];
    if (input.roomInstruction) {
        lines.push(roomInstructionLine(input.roomInstruction));
    }
    return lines.join('\n');
}

/** With the MCP server on (mcp_enabled), Hermes is told to cite what its workspace tools read (issue 37 §3). */
export const CITE_LINE = 'When you use messages read with the Rocket.Chat workspace tools, cite each one by its permalink.';

/** The instructions a turn is sent with: its system text, and the citation rule while the MCP server is on. */
export function instructionsFor(system: string, config: { mcpEnabled: boolean }): string {
    return config.mcpEnabled ? `${system}\n${CITE_LINE}` : system;
}

/** How a room's instruction (room_policies `prompt=…`) reaches Hermes, on every kind of turn (a scheduled prompt's too). */
export function roomInstructionLine(instruction: string): string {
    return `The workspace admins set this instruction for this room: ${instruction}`;
}
