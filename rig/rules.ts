import { RocketChatStore, StoredAttachment, StoredRoom, StoredUser } from './store';

/**
 * The checks Rocket.Chat runs on a message an app posts or edits, transcribed from its
 * server code so the rig refuses what the server refuses, with the same error text. Each
 * function names the file it follows.
 */

/**
 * `new Meteor.Error(error, reason)`: its message is `reason [error]`, which is what an app
 * sees when a bridge call fails with it.
 */
export function meteorError(error: string, reason?: string): Error {
    const e = new Error(reason ? `${reason} [${error}]` : `[${error}]`) as Error & { error: string; reason?: string };
    e.error = error;
    e.reason = reason;
    return e;
}

/**
 * apps/meteor/app/lib/server/lib/validateCustomMessageFields.ts: refused unless the setting
 * is exactly `true`; the schema is parsed on every call (an empty setting throws JSON.parse's
 * SyntaxError, as on the server) and compiled by ajv with `type: 'object'` and
 * `additionalProperties: false` forced.
 *
 * The rig checks the part of JSON Schema that decides which fields may exist and of what
 * kind: top-level property names (additionalProperties: false), `required`, and each listed
 * property's `type` and `enum`. Keywords it does not implement (patternProperties, nested
 * schemas, formats) never let a field through that `properties` does not list, so the rig
 * is at worst stricter than ajv, never kinder.
 */
export function validateCustomMessageFields(customFields: Record<string, unknown>, enabled: unknown, schemaText: unknown): void {
    if (enabled !== true) {
        throw new Error('Custom fields not enabled');
    }
    const schema = JSON.parse(String(schemaText)) as {
        type?: string;
        properties?: Record<string, { type?: string | string[]; enum?: unknown[] }>;
        required?: string[];
    };
    if (schema.type && schema.type !== 'object') {
        throw new Error('Invalid custom fields config');
    }
    if (typeof customFields !== 'object' || customFields === null || Array.isArray(customFields)) {
        throw new Error('Invalid custom fields');
    }
    const properties = schema.properties ?? {};
    for (const [name, value] of Object.entries(customFields)) {
        const rule = Object.prototype.hasOwnProperty.call(properties, name) ? properties[name] : undefined;
        if (!rule || !matchesType(value, rule.type) || (rule.enum && !rule.enum.some((v) => v === value))) {
            throw new Error('Invalid custom fields');
        }
    }
    for (const name of schema.required ?? []) {
        if (!(name in customFields)) {
            throw new Error('Invalid custom fields');
        }
    }
}

function matchesType(value: unknown, type: string | string[] | undefined): boolean {
    if (type === undefined) {
        return true;
    }
    const types = Array.isArray(type) ? type : [type];
    return types.some((t) => {
        switch (t) {
            case 'string':
                return typeof value === 'string';
            case 'number':
                return typeof value === 'number' && Number.isFinite(value);
            case 'integer':
                return Number.isInteger(value);
            case 'boolean':
                return typeof value === 'boolean';
            case 'null':
                return value === null;
            case 'array':
                return Array.isArray(value);
            case 'object':
                return typeof value === 'object' && value !== null && !Array.isArray(value);
            default:
                return false;
        }
    });
}

/**
 * apps/meteor/app/authorization/server/functions/canSendMessage.ts
 * (validateRoomMessagePermissionsAsync): app users (`type: 'app'`) skip the room-access check
 * entirely, in every room type; other users need canAccessRoom (public channels are open to
 * anyone with `view-c-room`, private groups and direct rooms need a subscription). A read-only
 * room refuses anyone without `post-readonly` (admin, owner, moderator; the room's creator is
 * its owner) unless listed in its `unmuted`, app users included; a blocked direct room
 * (`room_is_blocked`) and a room that lists the user in `muted` refuse too.
 */
export function canSendMessage(store: RocketChatStore, rid: string, user: StoredUser): StoredRoom {
    const room = store.rooms.get(rid);
    if (!room) {
        throw new Error('error-invalid-room');
    }
    if (user.type !== 'app' && !canAccessRoom(room, user)) {
        throw new Error('error-not-allowed');
    }
    // A direct room is the only one whose directives allow BLOCK; the blocker's and the blocked's subscriptions both say so.
    if (room.type === 'd' && room.blocked && room.members.has(user.id)) {
        throw new Error('room_is_blocked');
    }
    // Unless a moderator unmuted the user in the read-only room.
    if (room.readOnly && !hasPostReadonly(room, user) && !(room.unmuted ?? []).includes(user.username)) {
        throw new Error("You can't send messages because the room is readonly.");
    }
    if ((room.muted ?? []).includes(user.username)) {
        throw new Error('You_have_been_muted');
    }
    return room;
}

/**
 * executeSendMessage (apps/meteor/app/lib/server/methods/sendMessage.ts), after
 * canSendMessageAsync: an encrypted room refuses a message that is not `t: 'e2e'` while
 * E2E_Enable is on and E2E_Allow_Unencrypted_Messages off.
 */
export function assertEncryptionAllows(store: RocketChatStore, room: StoredRoom, type: string | undefined): void {
    if (room.encrypted && store.flag('E2E_Enable') && !store.flag('E2E_Allow_Unencrypted_Messages') && type !== 'e2e') {
        throw meteorError('error-not-allowed', 'Not allowed to send un-encrypted messages in an encrypted room');
    }
}

/** canAccessRoom for the rig's rooms: public channels are open to every user, other rooms to their members. */
export function canAccessRoom(room: StoredRoom, user: StoredUser): boolean {
    if (room.type === 'c') {
        return true;
    }
    return room.members.has(user.id);
}

export function hasPostReadonly(room: StoredRoom, user: StoredUser): boolean {
    const global = ['admin', 'owner', 'moderator'];
    if (user.roles.some((r) => global.includes(r))) {
        return true;
    }
    // The creator holds the room's `owner` role on their subscription, for as long as they are a member.
    return room.creatorId === user.id && room.members.has(user.id);
}

/** `validFullURLParam` in apps/meteor/app/lib/server/functions/sendMessage.ts. */
function checkFullUrl(field: string, value: unknown): void {
    if (typeof value !== 'string') {
        throw new Error(`Match error: Expected string in field ${field}`);
    }
    // isURL: /^(https?:\/\/|data:)/; uploads are linked under FileUpload.getPath() ('/file-upload/').
    if ((!/^(https?:\/\/|data:)/.test(value) && !value.startsWith('/file-upload/')) || /^javascript:/i.test(value)) {
        throw new Error('Invalid href value provided');
    }
}

const ATTACHMENT_URLS = ['thumb_url', 'message_link', 'author_link', 'author_icon', 'title_link', 'image_url', 'audio_url', 'video_url'];
const ATTACHMENT_TYPES: Record<string, (v: unknown) => boolean> = {
    color: (v) => typeof v === 'string',
    text: (v) => typeof v === 'string',
    ts: (v) => typeof v === 'string' || typeof v === 'number',
    button_alignment: (v) => typeof v === 'string',
    actions: Array.isArray,
    collapsed: (v) => typeof v === 'boolean',
    author_name: (v) => typeof v === 'string',
    title: (v) => typeof v === 'string',
    title_link_download: (v) => typeof v === 'boolean',
    image_dimensions: (v) => typeof v === 'object',
    image_preview: (v) => typeof v === 'string',
    image_type: (v) => typeof v === 'string',
    image_size: (v) => typeof v === 'number',
    audio_type: (v) => typeof v === 'string',
    audio_size: (v) => typeof v === 'number',
    video_type: (v) => typeof v === 'string',
    video_size: (v) => typeof v === 'number',
    fields: Array.isArray,
};

/** validateAttachment (apps/meteor/app/lib/server/functions/sendMessage.ts), run on create only. */
export function validateAttachments(attachments: StoredAttachment[]): void {
    for (const a of attachments) {
        for (const [field, ok] of Object.entries(ATTACHMENT_TYPES)) {
            if (a[field] != null && !ok(a[field])) {
                throw new Error(`Match error: Expected ${field} of another type`);
            }
        }
        for (const field of ATTACHMENT_URLS) {
            if (a[field] != null) {
                checkFullUrl(field, a[field]);
            }
        }
        for (const f of a.fields ?? []) {
            if (!f.value || !f.title) {
                throw new Error('Invalid attachment field, title and value is required');
            }
        }
        for (const action of (a.actions ?? []) as Array<Record<string, unknown>>) {
            for (const field of ['url', 'image_url']) {
                if (action[field] != null) {
                    checkFullUrl(field, action[field]);
                }
            }
        }
    }
}

/**
 * fileUploadIsValidContentTypeFromSettings (apps/meteor/app/utils/lib/restrictions.ts): a type on
 * the blacklist is refused; with a whitelist (not '' or '*') only listed types pass; 'image/*'
 * style entries match a whole group.
 */
export function fileUploadIsValidContentType(type: string | undefined, whiteList: string, blackList: string): boolean {
    const list = (value: string) => (value ? value.split(',').map((item) => item.trim()) : undefined);
    const black = list(blackList);
    const white = !whiteList || whiteList === '*' ? undefined : list(whiteList);
    const onList = (t: string | undefined, l: string[] | undefined) =>
        Boolean(t && l && (l.includes(t) || l.filter((item) => item.indexOf('/*') > 0).includes(t.replace(/(\/.*)$/, '/*'))));
    if (black && type && onList(type, black)) {
        return false;
    }
    return white ? onList(type, white) : true;
}

/**
 * The Uploads store's filter (apps/meteor/server/ufs/ufs-filter.ts check) with
 * FileUpload.validateFileUpload as its onCheck (apps/meteor/app/file-upload/server/lib/FileUpload.ts):
 * an empty file is too small; no room or no access fails the filter; then the upload settings,
 * each with its own Meteor error.
 */
export function validateFileUpload(store: RocketChatStore, file: { rid: string; userId: string; size: number; type?: string }): void {
    const room = store.rooms.get(file.rid);
    const user = store.users.get(file.userId);
    const passes = Boolean(room) && (user?.type === 'app' || Boolean(room && user && canAccessRoom(room, user)));
    if (passes) {
        if (store.serverSettings.get('FileUpload_Enabled') !== true) {
            throw meteorError('error-file-upload-disabled', 'File upload is disabled');
        }
        if (store.serverSettings.get('FileUpload_Enabled_Direct') !== true && room?.type === 'd') {
            throw meteorError('error-direct-message-file-upload-not-allowed', 'File sharing not allowed in direct messages');
        }
        const max = Number(store.serverSettings.get('FileUpload_MaxFileSize'));
        if (max > -1 && file.size > max) {
            throw meteorError('error-file-too-large', `File exceeds allowed size of ${max} bytes`);
        }
        const ok = fileUploadIsValidContentType(
            file.type,
            String(store.serverSettings.get('FileUpload_MediaTypeWhiteList') ?? ''),
            String(store.serverSettings.get('FileUpload_MediaTypeBlackList') ?? ''),
        );
        if (!ok) {
            throw meteorError('error-invalid-file-type', 'File type is not accepted.');
        }
    }
    if (!passes) {
        throw meteorError('invalid-file', 'File does not match filter');
    }
    if (file.size <= 0) {
        throw meteorError('file-too-small', `File size (size = ${file.size}) is too small (min = 1)`);
    }
}
