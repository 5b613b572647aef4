import { ConversationKind } from '../admission/admit';

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

/** How a room's instruction (room_policies `prompt=…`) reaches Hermes, on every kind of turn (a scheduled prompt's too). */
export function roomInstructionLine(instruction: string): string {
    return `The workspace admins set this instruction for this room: ${instruction}`;
}
