import { CONTEXT_FILES_HEADER, NEW_MESSAGE_HEADER, RECENT_HEADER, ROOM_HEADER } from './contextBlock';

/** `[Rocket.Chat room_id: ` — what the first line of a turn with a block starts with. */
const ROOM_PREFIX = ROOM_HEADER('').slice(0, -1);

/**
 * For the one retry after Hermes refused a turn as too large: drops the recent-messages
 * block and keeps everything else — the room line, the asker line (the history tool needs
 * it) and the new message. The first column-0 `[Recent chat messages …]` and the first
 * blank line before `[New message]` are the app's: user text never reaches column 0 and
 * its blank lines are indented (see renderLine.ts), so markers in it cannot move the cut.
 * The files of the context go too (they end the text, after a column-0 header of the app's).
 */
export function trimContext(full: string): string {
    const files = full.indexOf(`\n${CONTEXT_FILES_HEADER}\n`);
    const user = files === -1 ? full : full.slice(0, files);
    if (!user.startsWith(ROOM_PREFIX)) {
        return user;
    }
    const recent = user.indexOf(`\n${RECENT_HEADER}\n`);
    const newMessage = user.indexOf(`\n\n${NEW_MESSAGE_HEADER}\n`);
    if (recent === -1 || newMessage === -1 || recent > newMessage) {
        return user;
    }
    return `${user.slice(0, recent)}${user.slice(newMessage)}`;
}
