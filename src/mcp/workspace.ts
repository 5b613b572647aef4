import { LogPort } from '../security/safeLog';

/*
 * What the MCP tools read the workspace through (engine/adapters/workspaceReader.ts implements
 * it on the engine), and the bounds of their reads.
 */

export interface WorkspaceMessage {
    id: string;
    roomId: string;
    threadId?: string;
    author: string;
    createdAt: Date;
    text: string;
    isSystem: boolean;
}

export interface WorkspaceRoom {
    id: string;
    /** The room's name (absent for a DM). */
    name?: string;
    type: string;
}

/** Messages a page of the room reader holds (the engine's window: newest first). */
export const PAGE = 100;
/** How far a read scans back for `before`, and a search in each room: pages of PAGE messages. */
export const READ_PAGES = 5;
export const SEARCH_PAGES = 3;
/** A search looks in at most this many rooms (the person's rooms with the bot, as the server lists them). */
export const SEARCH_ROOMS = 20;

/** The person an asker token names, and the conversation it was given in. */
export interface TokenAsker {
    userId: string;
    roomId: string;
    /** The thread of that conversation, when it is one. */
    threadId?: string;
}

export interface WorkspacePort {
    /** The person a token names, when it verifies (HMAC, expiry) and is its conversation's newest; else why not. */
    asker: (token: string) => Promise<({ ok: true } & TokenAsker) | { ok: false; reason: string }>;
    /** Ids of the rooms the person and the bot are both members of now. */
    sharedRoomIds: (userId: string) => Promise<string[]>;
    room: (roomId: string) => Promise<WorkspaceRoom | undefined>;
    /** Page `page` (0: newest) of a room's messages, newest first. */
    roomPage: (roomId: string, page: number) => Promise<WorkspaceMessage[]>;
    /** A thread's messages, oldest first, its root first; undefined when there is no such thread. */
    thread: (threadId: string) => Promise<{ roomId: string; messages: WorkspaceMessage[] } | undefined>;
    /** A person by username (`who_is`): never their email; undefined when there is no such user. */
    user: (username: string) => Promise<{ id: string; username: string; name?: string; isBot: boolean } | undefined>;
    /** Ids of the rooms a person is a member of. */
    memberRoomIds: (userId: string) => Promise<string[]>;
    /** The web client's link to a message, when the server has a Site_Url. */
    link: (room: WorkspaceRoom, messageId: string) => string | undefined;
    log: LogPort;
}
