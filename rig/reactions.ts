import { canAccessRoom, hasPostReadonly, meteorError } from './rules';
import { RocketChatStore, StoredMessage, StoredRoom, StoredUser } from './store';

/**
 * The emoji the rig's server knows: Rocket.Chat refuses a reaction whose name is neither in its
 * emoji list (`emoji.list`, the JoyPixels short names) nor a custom emoji. A subset of that list:
 * the names apps and tests use, and a few common ones.
 */
const KNOWN_EMOJI = new Set([
    ':eyes:',
    ':hourglass_flowing_sand:',
    ':hourglass:',
    ':white_check_mark:',
    ':x:',
    ':arrow_right_hook:',
    ':thumbsup:',
    ':thumbsdown:',
    ':+1:',
    ':-1:',
    ':heart:',
    ':tada:',
    ':rocket:',
    ':smile:',
]);

/** A change of reactions the server made: what IPostMessageReacted carries. */
export interface ReactionChange {
    message: StoredMessage;
    user: StoredUser;
    reaction: string;
    isReacted: boolean;
}

/**
 * `AppMessageBridge.addReaction` / `removeReaction` (apps/meteor/app/apps/server/bridges/messages.ts):
 * a reaction not written `:name:` is refused before anything else ("Invalid reaction").
 */
export function assertBridgeReaction(reaction: string): void {
    if (!(reaction.startsWith(':') && reaction.endsWith(':'))) {
        throw new Error('Invalid reaction');
    }
}

/**
 * `executeSetReaction` then `setReaction` (apps/meteor/app/reactions/server/setReaction.ts): the
 * name is normalised to `:name:` and must be a known emoji; the user and the message must exist;
 * a reaction already in the state asked for changes nothing and fires no event (removing one the
 * user never gave is no error); the room must exist and the user must be able to access it; a
 * muted user, or anyone without `post-readonly` in a read-only room that does not allow
 * reactions, is refused. `shouldReact` undefined toggles (the client's click). Returns the change
 * made, for the caller to fire IPostMessageReacted with (the server does so without awaiting it).
 */
export function setReaction(store: RocketChatStore, userId: string, reactionIn: string, messageId: string, shouldReact?: boolean): ReactionChange | undefined {
    const reaction = `:${reactionIn.replace(/:/g, '')}:`;
    if (!KNOWN_EMOJI.has(reaction)) {
        throw meteorError('error-not-allowed', 'Invalid emoji provided.');
    }
    const user = store.users.get(userId);
    if (!user) {
        throw meteorError('error-invalid-user', 'Invalid user');
    }
    const message = store.messages.get(messageId);
    if (!message) {
        throw meteorError('error-not-allowed', 'Not allowed');
    }
    const already = Boolean(message.reactions?.[reaction]?.usernames.includes(user.username));
    const wanted = shouldReact ?? !already;
    if (already === wanted) {
        return undefined;
    }
    const room = store.rooms.get(message.rid);
    if (!room) {
        throw meteorError('error-not-allowed', 'Not allowed');
    }
    if (!canAccessRoom(room, user)) {
        throw meteorError('not-authorized', 'Not Authorized');
    }
    assertMayReact(room, user);
    const reactions = { ...(message.reactions ?? {}) };
    const usernames = (reactions[reaction]?.usernames ?? []).filter((u) => u !== user.username);
    if (wanted) {
        usernames.push(user.username);
    }
    if (usernames.length > 0) {
        reactions[reaction] = { usernames };
    } else {
        delete reactions[reaction];
    }
    message.reactions = Object.keys(reactions).length > 0 ? reactions : undefined;
    return { message, user, reaction, isReacted: wanted };
}

/** setReaction's room checks: muted users, and read-only rooms (unless `reactWhenReadOnly`, `post-readonly` or unmuted). */
function assertMayReact(room: StoredRoom, user: StoredUser): void {
    if ((room.muted ?? []).includes(user.username)) {
        throw meteorError('error-not-allowed', 'You_have_been_muted');
    }
    if (room.readOnly && !room.reactWhenReadOnly && !hasPostReadonly(room, user) && !(room.unmuted ?? []).includes(user.username)) {
        throw new Error("You can't send messages because the room is readonly.");
    }
}
