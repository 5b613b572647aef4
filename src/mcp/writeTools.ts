import { z } from '../generated/zodBundle';
import { LogPort } from '../security/safeLog';
import { ToolDefinition, ToolOutcome } from './mcpServer';
import { asker, ASKER_PROPERTY, roomId } from './readCatalog';
import { TokenAsker } from './workspace';
import { isPending, MAX_PENDING_PER_TOKEN, WRITE_MAX_CHARS, WRITE_TTL_MS, WriteRequest, WriteTarget } from './writeRequest';

/*
 * The MCP write tools (issue 37 §4, setting `mcp_write_tools`, off by default): the model asks
 * to post a message or schedule a prompt in a room, and the tool only *proposes* it. The person
 * the asker token names is shown the target and the exact text in their conversation and
 * decides with a button (mcp/approveWrite.ts); the tool returns at once, nothing is done before.
 */

const threadId = roomId;

export const WRITE_ARGS = {
    post_message: z.object({ asker, room_id: roomId.optional(), thread_id: threadId.optional(), text: z.string().trim().min(1).max(WRITE_MAX_CHARS) }).strict(),
    schedule_prompt: z
        .object({
            asker,
            room_id: roomId.optional(),
            thread_id: threadId.optional(),
            schedule: z.string().trim().min(1).max(200),
            prompt: z.string().trim().min(1).max(WRITE_MAX_CHARS),
        })
        .strict(),
};

export type WriteToolName = keyof typeof WRITE_ARGS;

const WHERE = {
    room_id: { type: 'string', description: 'A room id from list_rooms (default: the room the question was asked in).' },
    thread_id: { type: 'string', description: "A thread's root message id in that room: post in that thread." },
};
const AFTER =
    'Nothing happens until the person who asked approves it with a button in their conversation: the tool only proposes it and returns at once. ' +
    'Tell them it awaits their approval; do not call it again for the same thing.';

export const WRITE_TOOLS: ToolDefinition[] = [
    {
        name: 'post_message',
        title: 'Post a message',
        description: `Proposes a message for the bot to post in a room (or thread) the person who asked may post in. ${AFTER}`,
        inputSchema: {
            type: 'object',
            properties: { asker: ASKER_PROPERTY, ...WHERE, text: { type: 'string', minLength: 1, maxLength: WRITE_MAX_CHARS } },
            required: ['asker', 'text'],
            additionalProperties: false,
        },
    },
    {
        name: 'schedule_prompt',
        title: 'Schedule a prompt',
        description:
            'Proposes a scheduled prompt in a room, as `/hermes cron add` makes one: `schedule` in its words ' +
            `("0 9 * * 1-5", "every 30m", "every day 09:00", "at 2026-12-24 09:00"), \`prompt\` what Hermes is asked each time. ${AFTER}`,
        inputSchema: {
            type: 'object',
            properties: {
                asker: ASKER_PROPERTY,
                ...WHERE,
                schedule: { type: 'string', minLength: 1, maxLength: 200 },
                prompt: { type: 'string', minLength: 1, maxLength: WRITE_MAX_CHARS },
            },
            required: ['asker', 'schedule', 'prompt'],
            additionalProperties: false,
        },
    },
];

export interface WritePort {
    /** The place, when the person may have the bot act there now (the rules of `/hermes cron add --to`); else why not, for the log. */
    target: (userId: string, roomId: string, threadId?: string) => Promise<{ ok: true; target: WriteTarget; username: string } | { ok: false; reason: string }>;
    /** `/hermes cron add`'s checks for this person's job there, nothing saved: why not, told to the model, or undefined. */
    scheduleRefusal: (who: { id: string; username: string }, target: WriteTarget, schedule: string, prompt: string) => Promise<string | undefined>;
    /** The requests proposed with this asker token (pending or not). */
    proposedWith: (token: string) => Promise<WriteRequest[]>;
    /** Keeps the request (under the token's digest) and shows its approval in the conversation; false when the server refused that post. */
    propose: (rec: WriteRequest, token: string) => Promise<boolean>;
    newId: () => string;
    now: () => number;
    log: LogPort;
}

/** Proposes what the model asked, for the person the token named; returns without waiting for them. */
export async function writeTool(name: WriteToolName, data: unknown, who: TokenAsker & { token: string }, ports: WritePort): Promise<ToolOutcome> {
    const args = data as { room_id?: string; thread_id?: string; text?: string; schedule?: string; prompt?: string };
    const waiting = (await ports.proposedWith(who.token)).filter((r) => isPending(r, ports.now())).length;
    if (waiting >= MAX_PENDING_PER_TOKEN) {
        ports.log.warn(`MCP ${name} refused for user ${who.userId}: ${waiting} requests of this turn already await approval.`);
        return { kind: 'error', text: `Not done: ${waiting} requests already await the approval of the person who asked. Wait for their decision.` };
    }
    const roomId = args.room_id ?? who.roomId;
    const place = await ports.target(who.userId, roomId, args.thread_id);
    if (!place.ok) {
        ports.log.warn(`MCP ${name} in room ${roomId}${args.thread_id ? ` thread ${args.thread_id}` : ''} refused for user ${who.userId}: ${place.reason}.`);
        return { kind: 'error', text: 'Not allowed: the person who asked cannot have the bot post there.' };
    }
    const text = name === 'post_message' ? (args.text as string) : (args.prompt as string);
    if (name === 'schedule_prompt') {
        const refusal = await ports.scheduleRefusal({ id: who.userId, username: place.username }, place.target, args.schedule as string, text);
        if (refusal) {
            ports.log.info(`MCP schedule_prompt in room ${roomId} refused for user ${who.userId}: the cron checks.`);
            return { kind: 'error', text: refusal };
        }
    }
    const rec: WriteRequest = {
        id: ports.newId(),
        kind: name === 'post_message' ? 'post' : 'schedule',
        askerId: who.userId,
        askerUsername: place.username,
        conversation: { roomId: who.roomId, threadId: who.threadId },
        target: place.target,
        text,
        schedule: name === 'schedule_prompt' ? args.schedule : undefined,
        createdAt: ports.now(),
        state: 'pending',
    };
    if (!(await ports.propose(rec, who.token))) {
        ports.log.warn(`MCP ${name} for user ${who.userId}: the approval could not be posted in room ${who.roomId}.`);
        return { kind: 'error', text: 'The approval could not be shown in the conversation: nothing was done.' };
    }
    ports.log.info(`MCP ${name}: request ${rec.id} for room ${roomId} awaits the approval of user ${who.userId}.`);
    return {
        kind: 'ok',
        text:
            `Awaiting approval: @${place.username} was shown the ${rec.kind === 'post' ? 'message' : 'scheduled prompt'} with Approve and Decline buttons ` +
            `(request ${rec.id}, expires in ${WRITE_TTL_MS / 60_000} minutes). Nothing is done until they approve.`,
        structured: { request_id: rec.id, status: 'awaiting_approval', room_id: roomId },
    };
}
