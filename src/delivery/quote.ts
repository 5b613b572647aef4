/** Where Rocket.Chat serves a room in the web client, by room type. */
function roomPath(roomType: string, roomId: string, roomName?: string): string {
    if (roomType === 'd') {
        return `direct/${encodeURIComponent(roomId)}`;
    }
    const name = encodeURIComponent(roomName || roomId);
    return roomType === 'p' ? `group/${name}` : `channel/${name}`;
}

/**
 * The prefix of the first answer message in a room's main channel: a message-link quote of
 * the question (Rocket.Chat renders a link to a message on its own server as a quote) and a
 * mention of the asker, so they are notified and everyone sees what is being answered.
 */
export function quotePrefix(input: { siteUrl: string; roomType: string; roomId: string; roomName?: string; messageId: string; askerUsername: string }): string {
    return `[ ](${messageLink(input.siteUrl, input, input.messageId)}) @${input.askerUsername} `;
}

/** The web client's address of a message: its room, scrolled to it. */
export function messageLink(siteUrl: string, place: { roomType: string; roomId: string; roomName?: string }, messageId: string): string {
    return `${siteUrl.replace(/\/+$/, '')}/${roomPath(place.roomType, place.roomId, place.roomName)}?msg=${encodeURIComponent(messageId)}`;
}

/** What the first message of an answer starts with: a quote and mention in a room's main channel, nothing elsewhere. */
export function firstMessagePrefix(
    place: { kind: 'dm' | 'room'; threadId?: string; roomType: string; roomId: string; roomName?: string; messageId: string; askerUsername: string },
    server: { siteUrl: string },
): string | undefined {
    if (place.kind !== 'room' || place.threadId) {
        return undefined;
    }
    // Without Site_Url a link would not render as a quote; the mention alone still notifies the asker.
    return server.siteUrl ? quotePrefix({ ...place, siteUrl: server.siteUrl }) : `@${place.askerUsername} `;
}

/** The web client's address of a conversation: its room, or its thread. Undefined without Site_Url. */
export function conversationLink(siteUrl: string, place: { roomType?: string; roomId: string; roomName?: string; threadId?: string }): string | undefined {
    if (!siteUrl) {
        return undefined;
    }
    const room = `${siteUrl.replace(/\/+$/, '')}/${roomPath(place.roomType ?? 'c', place.roomId, place.roomName)}`;
    return place.threadId ? `${room}/thread/${encodeURIComponent(place.threadId)}` : room;
}
