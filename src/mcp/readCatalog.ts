import { z } from '../generated/zodBundle';
import { ToolDefinition } from './mcpServer';
import { PAGE, SEARCH_PAGES, SEARCH_ROOMS } from './workspace';

/*
 * The read tools as the model sees them (`tools/list`) and the arguments each accepts: the
 * schema the client is shown and the zod check the call meets say the same thing.
 */

export const asker = z.string().min(1).max(300);
export const roomId = z.string().regex(/^[A-Za-z0-9]{1,64}$/);
const limit = z.number().int().min(1).max(50).default(20);

export const READ_ARGS = {
    list_rooms: z.object({ asker }).strict(),
    read_messages: z
        .object({
            asker,
            room_id: roomId.optional(),
            thread_id: roomId.optional(),
            /** A message id or an ISO time: only messages before it. */
            before: z.string().min(1).max(64).optional(),
            limit,
        })
        .strict(),
    search_messages: z.object({ asker, query: z.string().min(2).max(200), room_id: roomId.optional(), limit }).strict(),
    who_is: z
        .object({
            asker,
            username: z
                .string()
                .regex(/^@?[\w.-]{1,64}$/)
                .transform((u) => u.replace(/^@/, '')),
        })
        .strict(),
};

export type ReadToolName = keyof typeof READ_ARGS;

export const ASKER_PROPERTY = { type: 'string', description: 'The token of the [Rocket.Chat asker: …] line of the message you are answering, verbatim.' };
const ROOM_PROPERTY = { type: 'string', description: 'A room id from list_rooms (default: the room the question was asked in).' };
const LIMIT_PROPERTY = { type: 'integer', minimum: 1, maximum: 50, default: 20 };

export const READ_TOOLS: ToolDefinition[] = [
    {
        name: 'list_rooms',
        title: 'List rooms',
        description: 'The Rocket.Chat rooms the person who asked shares with the bot (their DM with the bot included): ids, names and types.',
        inputSchema: { type: 'object', properties: { asker: ASKER_PROPERTY }, required: ['asker'], additionalProperties: false },
    },
    {
        name: 'read_messages',
        title: 'Read messages',
        description:
            'Messages of a room or a thread the person who asked may read, oldest first, each with its author, time and permalink. ' +
            '`before` (a message id or an ISO time) reads further back.',
        inputSchema: {
            type: 'object',
            properties: {
                asker: ASKER_PROPERTY,
                room_id: ROOM_PROPERTY,
                thread_id: { type: 'string', description: "A thread's root message id: that thread's messages." },
                before: { type: 'string', description: 'Only messages before this message id or ISO 8601 time.' },
                limit: LIMIT_PROPERTY,
            },
            required: ['asker'],
            additionalProperties: false,
        },
    },
    {
        name: 'search_messages',
        title: 'Search messages',
        description:
            `Messages containing the words (case-insensitive), newest first, across the rooms the person who asked shares with the bot (or one room). ` +
            `Looks at the last ${SEARCH_PAGES * PAGE} messages of each of up to ${SEARCH_ROOMS} rooms and says how far it looked.`,
        inputSchema: {
            type: 'object',
            properties: { asker: ASKER_PROPERTY, query: { type: 'string', minLength: 2, maxLength: 200 }, room_id: ROOM_PROPERTY, limit: LIMIT_PROPERTY },
            required: ['asker', 'query'],
            additionalProperties: false,
        },
    },
    {
        name: 'who_is',
        title: 'Who is',
        description:
            'Who a mentioned person is: their username, display name and whether they are a bot. Only people who share a room with the person who asked and the bot; never an email.',
        inputSchema: {
            type: 'object',
            properties: { asker: ASKER_PROPERTY, username: { type: 'string', description: 'The username, with or without its @.' } },
            required: ['asker', 'username'],
            additionalProperties: false,
        },
    },
];
