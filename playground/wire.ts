/**
 * What the page receives: messages, private (ephemeral) messages, rooms and people as plain
 * JSON, with times in milliseconds. The page renders these and nothing else of the rig.
 */
import type { Rig, StoredMessage, StoredRoom, StoredUser } from '../rig';
import type { Ephemeral } from '../rig/server';

export interface WireMessage {
    id: string;
    rid: string;
    tmid?: string;
    tshow?: boolean;
    /** System type; 'rm' is a deletion stub. */
    t?: string;
    text: string;
    blocks?: unknown[];
    attachments?: unknown[];
    sender: { id: string; username: string; name: string; type: string };
    createdAt: number;
    editedAt?: number;
    /** Only this user sees it (an ephemeral notification from the app). */
    privateTo?: string;
    /** Reactions by emoji name (`:eyes:`), with who gave each. */
    reactions?: Record<string, { usernames: string[] }>;
}

export function personJson(user: StoredUser | undefined): WireMessage['sender'] {
    return { id: user?.id ?? '', username: user?.username ?? 'unknown', name: user?.name ?? '', type: user?.type ?? 'user' };
}

export function messageJson(rig: Rig, m: StoredMessage): WireMessage {
    return {
        id: m.id,
        rid: m.rid,
        tmid: m.tmid,
        tshow: m.tshow,
        t: m.t,
        text: m.text,
        blocks: m.blocks,
        attachments: m.attachments,
        sender: personJson(rig.server.store.users.get(m.senderId)),
        createdAt: m.createdAt.getTime(),
        editedAt: m.editedAt?.getTime(),
        reactions: m.reactions,
    };
}

/** Ephemerals have no id on the server; their place in the rig's list is stable (it only grows). */
export function ephemeralId(index: number): string {
    return `ephemeral-${index}`;
}

export function ephemeralJson(rig: Rig, e: Ephemeral, index: number): WireMessage {
    return {
        id: ephemeralId(index),
        rid: e.roomId,
        tmid: e.tmid,
        text: e.text,
        blocks: e.blocks,
        sender: personJson(rig.bot),
        createdAt: e.at,
        privateTo: e.userId,
    };
}

/** A message people see in the room: edit-history copies are not messages. */
export function isVisible(m: StoredMessage): boolean {
    return !m._hidden;
}

export function roomJson(rig: Rig, room: StoredRoom) {
    const members = [...room.members].map((id) => rig.server.store.users.get(id)?.username ?? id);
    return { id: room.id, type: room.type, name: room.name ?? '', members };
}

/** Every visible message of the rooms `user` is in, and the private messages to them, oldest first. */
export function messagesFor(rig: Rig, user: StoredUser): WireMessage[] {
    const out: WireMessage[] = [];
    for (const room of rig.server.store.rooms.values()) {
        if (room.members.has(user.id)) {
            out.push(...(rig.server.store.roomMessages.get(room.id) ?? []).filter(isVisible).map((m) => messageJson(rig, m)));
        }
    }
    rig.server.ephemerals.forEach((e, i) => {
        if (e.userId === user.id) {
            out.push(ephemeralJson(rig, e, i));
        }
    });
    return out.sort((a, b) => a.createdAt - b.createdAt);
}
