import { randomBytes } from 'crypto';
import type { RigServer } from './server';
import { canAccessRoom, canSendMessage, meteorError, validateFileUpload } from './rules';
import { randomId, StoredAttachment, StoredFile, StoredMessage, StoredRoom, StoredUpload, StoredUser } from './store';

/**
 * A person's upload the way the web client makes it and the server handles it:
 * `POST rooms.media/:rid` (the store's filter, the insert, the image's `identify`, the
 * `/file-upload/` path) then `POST rooms.mediaConfirm/:rid/:fileId` with `{ msg, tmid, description }`
 * → sendFileMessage → parseMultipleFilesIntoMessageAttachments → executeSendMessage
 * (apps/meteor/app/api/server/v1/rooms.ts, apps/meteor/app/file-upload/server/lib/FileUpload.ts,
 * apps/meteor/server/ufs/ufs-store.ts, apps/meteor/app/file-upload/server/methods/sendFileMessage.ts).
 */
export interface UploadInput {
    name: string;
    /** The MIME type the browser reports for the file. */
    type: string;
    content: Buffer;
    /** Posts the file message in this thread. */
    tmid?: string;
    /** The message text typed with the file (`msg`). */
    text?: string;
    /** The file's description (the upload dialog's field): stored on the upload and its attachment. */
    description?: string;
}

/** FileUpload.getPath: uploads are linked under `/file-upload/<id>/<name>`. */
function fileUploadPath(id: string, name: string): string {
    return `/file-upload/${id}/${encodeURI(name)}`;
}

/** isImagePreviewSupported (sendFileMessage.ts): only these image types get an image attachment. */
function isImagePreviewSupported(type: string): boolean {
    return ['image/bmp', 'image/x-windows-bmp', 'image/jpeg', 'image/pjpeg', 'image/png', 'image/gif', 'image/webp', 'image/svg+xml'].includes(type);
}

/** lib/utils/getFileExtension.ts: the last dot-part upper-cased, 'file' without one. */
function getFileExtension(fileName?: string): string {
    if (!fileName) {
        return 'file';
    }
    const arr = fileName.split('.');
    if (arr.length < 2 || (arr[0] === '' && arr.length === 2)) {
        return 'file';
    }
    return arr.pop()?.toLocaleUpperCase() || 'file';
}

/**
 * uploadsOnValidate reads images of these types with sharp: `identify = { format, size }`. The rig
 * reads the size from the file header (PNG, GIF, JPEG, WebP); for BMP or an unreadable header it
 * leaves `identify` out.
 */
function identifyImage(type: string, content: Buffer): StoredUpload['identify'] | undefined {
    if (!/^image\/((x-windows-)?bmp|p?jpeg|png|gif|webp)$/.test(type)) {
        return undefined;
    }
    const size = imageSize(content);
    return size ? { format: size.format, size: { width: size.width, height: size.height } } : undefined;
}

function imageSize(b: Buffer): { format: string; width: number; height: number } | undefined {
    if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47) {
        return { format: 'png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
    }
    if (b.length >= 10 && b.toString('ascii', 0, 3) === 'GIF') {
        return { format: 'gif', width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
    }
    if (b.length >= 30 && b.toString('ascii', 0, 4) === 'RIFF' && b.toString('ascii', 8, 12) === 'WEBP') {
        const chunk = b.toString('ascii', 12, 16);
        if (chunk === 'VP8X') {
            return { format: 'webp', width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
        }
        if (chunk === 'VP8L') {
            const bits = b.readUInt32LE(21);
            return { format: 'webp', width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
        }
        if (chunk === 'VP8 ') {
            return { format: 'webp', width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
        }
    }
    if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
        let i = 2;
        while (i + 9 < b.length) {
            if (b[i] !== 0xff) {
                return undefined;
            }
            const marker = b[i + 1];
            if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
                return { format: 'jpeg', height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
            }
            i += 2 + b.readUInt16BE(i + 2);
        }
    }
    return undefined;
}

/** Store.generateToken: ten hex digits, each randomly upper- or lower-case. */
function ufsToken(): string {
    return [...randomBytes(10)].map((byte) => (byte & 0x0f).toString(16)[byte & 0x10 ? 'toUpperCase' : 'toLowerCase']()).join('');
}

/**
 * FileUploadClass.insert: the filter, then the store's create (`store` = the storage type's
 * `<type>:Uploads` handler) and write (complete, etag, `/ufs/` path and url, token, uploadedAt,
 * size), uploadsOnValidate's `identify` for images.
 */
function insertUpload(server: RigServer, details: Omit<StoredUpload, keyof StoreFields> & Partial<StoreFields>, content: Buffer): StoredUpload {
    const { store } = server;
    validateFileUpload(store, { rid: details.rid, userId: details.userId, size: details.size, type: details.type });
    const id = randomId();
    const storeName = `${String(store.serverSettings.get('FileUpload_Storage_Type'))}:Uploads`;
    const root = String(store.serverSettings.get('Site_Url') ?? '').replace(/\/+$/, '');
    const identify = identifyImage(details.type, content);
    const now = store.nextDate();
    const doc: StoredUpload = {
        ...details,
        _id: id,
        store: storeName,
        _updatedAt: now,
        ...(identify ? { identify } : {}),
        complete: true,
        etag: randomId(),
        path: encodeURI(`/ufs/${storeName}/${id}/${details.name}`),
        progress: 1,
        size: content.length,
        token: ufsToken(),
        uploading: false,
        uploadedAt: now,
        url: encodeURI(`${root}/ufs/${storeName}/${id}/${details.name}`),
    };
    store.uploads.set(id, doc);
    store.uploadContents.set(id, Buffer.from(content));
    return doc;
}

type StoreFields = Pick<
    StoredUpload,
    '_id' | 'store' | '_updatedAt' | 'complete' | 'etag' | 'path' | 'progress' | 'token' | 'uploading' | 'uploadedAt' | 'url'
>;

/**
 * rooms.media then rooms.mediaConfirm as one person's upload; resolves with the upload
 * document and the file message once the message's events were dispatched.
 */
export async function uploadAsUser(
    server: RigServer,
    user: StoredUser,
    room: StoredRoom,
    input: UploadInput,
): Promise<{ upload: StoredUpload; thumbnail?: StoredUpload; message: StoredMessage }> {
    const { store } = server;
    const size = (settingOf: string) => Number(store.serverSettings.get(settingOf));
    if (server.strict && !canAccessRoom(room, user)) {
        throw meteorError('error-not-allowed', 'rooms.media: forbidden (403)');
    }
    // rooms.media: the multipart file, stored as a temporary upload, its path set to /file-upload/.
    const upload = insertUpload(server, { name: input.name, size: input.content.length, type: input.type, rid: room.id, userId: user.id }, input.content);
    upload.path = fileUploadPath(upload._id, upload.name);
    // rooms.mediaConfirm: the description is checked against Message_MaxAllowedSize and moved onto the file.
    if ((input.description?.length ?? 0) > size('Message_MaxAllowedSize')) {
        throw meteorError('error-message-size-exceeded');
    }
    if (input.description !== undefined) {
        upload.description = input.description;
    }
    // sendFileMessage → parseMultipleFilesIntoMessageAttachments.
    const fileUrl = fileUploadPath(upload._id, upload.name);
    const files: StoredFile[] = [
        { _id: upload._id, name: upload.name, type: upload.type || 'file', size: upload.size || 0, format: upload.identify?.format || '' },
    ];
    let attachment: StoredAttachment;
    let thumbnail: StoredUpload | undefined;
    const common = { title: upload.name, type: 'file', description: upload.description, title_link: fileUrl, title_link_download: true };
    if (/^image\/.+/.test(upload.type) && isImagePreviewSupported(upload.type)) {
        attachment = { ...common, image_url: fileUrl, image_type: upload.type, image_size: upload.size, fileId: upload._id };
        if (upload.identify?.size) {
            attachment.image_dimensions = upload.identify.size;
        }
        thumbnail = makeThumbnail(server, upload, input.content);
        if (thumbnail) {
            attachment.image_url = fileUploadPath(thumbnail._id, upload.name);
            attachment.image_type = thumbnail.type;
            attachment.image_dimensions = thumbnail.identify?.size;
            files.push({
                _id: thumbnail._id,
                name: thumbnail.name,
                type: thumbnail.type || 'file',
                size: thumbnail.size || 0,
                format: thumbnail.identify?.format || '',
                typeGroup: thumbnail.typeGroup || '',
            });
        }
    } else if (/^audio\/.+/.test(upload.type)) {
        attachment = { ...common, audio_url: fileUrl, audio_type: upload.type, audio_size: upload.size, fileId: upload._id };
    } else if (/^video\/.+/.test(upload.type)) {
        attachment = { ...common, video_url: fileUrl, video_type: upload.type, video_size: upload.size, fileId: upload._id };
    } else {
        attachment = { ...common, format: getFileExtension(upload.name), size: upload.size, fileId: upload._id };
    }
    if (attachment.description === undefined) {
        delete attachment.description;
    }
    // executeSendMessage as the user: threads, size, thread root, canSendMessage.
    const text = input.text ?? '';
    let tmid = input.tmid;
    let rid = room.id;
    if (server.strict) {
        if (tmid && !store.flag('Threads_enabled')) {
            throw meteorError('error-not-allowed', 'not-allowed');
        }
        server.assertMessageSize(text);
        if (tmid) {
            const parent = store.messages.get(tmid);
            tmid = parent?.tmid || tmid;
            rid = parent?.rid ?? rid;
        }
        canSendMessage(store, rid, user);
    }
    const message = store.postMessage({
        rid,
        senderId: user.id,
        text,
        tmid,
        groupable: false,
        file: files[0],
        files,
        attachments: [attachment],
    });
    await server.emitPosted(message);
    return { upload, thumbnail, message };
}

/**
 * FileUpload.createImageThumbnail + uploadImageThumbnail: with thumbnails on, an image not
 * known to fit below Message_Attachments_Thumbnails_Width × _Height gets a `thumb-<name>`
 * upload (typeGroup 'thumb', originalFileId) resized to fit inside that box. The rig computes
 * the box but keeps the original bytes (it has no image library).
 */
function makeThumbnail(server: RigServer, upload: StoredUpload, content: Buffer): StoredUpload | undefined {
    const { store } = server;
    if (!store.flag('Message_Attachments_Thumbnails_Enabled')) {
        return undefined;
    }
    const maxW = Number(store.serverSettings.get('Message_Attachments_Thumbnails_Width'));
    const maxH = Number(store.serverSettings.get('Message_Attachments_Thumbnails_Height'));
    const size = upload.identify?.size;
    if (size && size.height < maxH && size.width < maxW) {
        return undefined;
    }
    if (!size || !upload.identify) {
        // sharp would read the image here; the rig cannot, so it makes no thumbnail.
        return undefined;
    }
    const scale = Math.min(maxW / size.width, maxH / size.height);
    const box = { width: Math.max(1, Math.round(size.width * scale)), height: Math.max(1, Math.round(size.height * scale)) };
    const format = upload.identify.format;
    const thumb = insertUpload(
        server,
        {
            name: `thumb-${upload.name}`,
            size: content.length,
            type: `image/${format}`,
            originalFileId: upload._id,
            typeGroup: 'thumb',
            rid: upload.rid,
            userId: upload.userId,
        },
        content,
    );
    thumb.identify = { format, size: box };
    return thumb;
}

/**
 * FileUpload.getBuffer: the handler named by the document's `store` (an error without one, or
 * with a name no handler has), then the file with that `_id` copied out of it.
 */
export async function readUploadBuffer(server: RigServer, file: { _id?: string; store?: string } | undefined): Promise<Buffer> {
    const storeName = file?.store;
    if (!storeName) {
        throw new Error('Empty Upload handler does not exists');
    }
    const handlers = ['GridFS', 'AmazonS3', 'GoogleCloudStorage', 'Webdav', 'FileSystem'].map((type) => `${type}:Uploads`);
    if (!handlers.includes(storeName)) {
        throw new Error('Store is invalid');
    }
    const content = file?._id ? server.store.uploadContents.get(file._id) : undefined;
    if (!content) {
        throw new Error(`FileNotFound: file ${file?._id} was not found`);
    }
    return Buffer.from(content);
}
