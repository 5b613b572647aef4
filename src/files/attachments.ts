import { CONTINUATION_INDENT, cutAtCodePoint, label, neutralise } from '../security/inertText';
import { inertReferences } from '../security/contextReferences';
import type { PostedFile } from '../context/contextMessage';
import { classifyFile, decodeText, ImageMime, sniffImage } from './fileKinds';

/** A file to read, with whose it is when that is not the asker's (a context file: `posted by alice at …`, written by the app). */
export type FileToRead = PostedFile & { owner?: string };

/** Reads a file's content by id (the engine's upload reader); it may throw. */
export type ReadFile = (fileId: string) => Promise<Uint8Array>;

export interface AttachmentLimits {
    /** `max_image_mb` in bytes. */
    maxImageBytes: number;
    /** `max_text_file_kb` in bytes. */
    maxTextFileBytes: number;
    /**
     * What all files of one message may add to the request body, in bytes as JSON carries them (data URLs plus
     * escaped text). Hermes refuses bodies over 10,000,000 bytes with 413, and the turn's own text and history need room.
     */
    maxTotalBytes: number;
    /**
     * What the files' text blocks may add to the user text, in UTF-16 units. Chat completions cut a text part (and a
     * string content) at 65,536 code points without a word, so a chat turn passes what its own text leaves of that;
     * runs have no such cap. Lines naming files that were not sent are not counted (each is a few hundred characters).
     */
    maxTextChars: number;
    /** The transport takes image parts (`takesImages` in hermes/client.ts); when false, images are named, not sent. */
    imagesAccepted: boolean;
    /** Whose total a file goes over, in the reason (`message's` unless said). */
    totalOf?: string;
}

interface AttachmentImage {
    /** The name as it appears in its `[image: …]` line. */
    name: string;
    /** What the bytes are (their signature), which may differ from the declared type. */
    mime: ImageMime;
    dataUrl: string;
}

export interface Attachments {
    /**
     * One block per file, in the order posted: `[image: name (type)]` for an image sent as a part (same order as
     * `images`), `[file: name (type)]` with the text in a fence, or a line saying why the file was not sent. Column 0
     * holds only these lines and the fences; every line of a file's text is indented. Empty without files.
     */
    text: string;
    images: AttachmentImage[];
    /** `name: reason` for each file Hermes did not get, for the app to log or tell the asker. */
    notes: string[];
    /** What the files sent add to the request body (bytes, as `maxTotalBytes` counts them) and to the text (as `maxTextChars`). */
    usedBytes: number;
    usedChars: number;
}

/** File names are other people's text and can be long; the line stays a line. */
const MAX_NAME_CHARS = 200;

const MB = 1024 * 1024;
const KB = 1024;

/**
 * What Hermes gets from the files of one message. Files are read one at a time, in order, so at most one file's bytes
 * are held beyond what is kept; a file that would push the total over `maxTotalBytes` is left out and later smaller
 * ones still fit. A file that cannot be read, or is not what it claims, costs that file only.
 */
export async function readAttachments(files: FileToRead[], read: ReadFile, limits: AttachmentLimits): Promise<Attachments> {
    const blocks: string[] = [];
    const images: AttachmentImage[] = [];
    const notes: string[] = [];
    let used = 0;
    let textUsed = 0;
    const room = () => Math.max(0, limits.maxTotalBytes - used);
    const textRoom = () => Math.max(0, limits.maxTextChars - textUsed);
    const totalReason = (needed: number) => `over the ${limits.totalOf ?? "message's"} total: ${formatSize(needed)} > ${formatSize(room())} left`;

    for (const file of files) {
        const name = cutAtCodePoint(label(file.name), MAX_NAME_CHARS);
        const type = cutAtCodePoint(label(file.type), MAX_NAME_CHARS);
        // The header's `name (type)`, and whose file it is when the app says so.
        const head = `${name} (${type})${file.owner ? `, ${file.owner}` : ''}`;
        const skip = (line: string, reason: string) => {
            blocks.push(line);
            notes.push(`${name}: ${reason}`);
        };
        const kind = classifyFile(file.name, file.type);

        if (kind.kind === 'other') {
            skip(`[file: ${head}, not a readable type]`, 'not a readable type');
            continue;
        }

        const limit = kind.kind === 'image' ? limits.maxImageBytes : limits.maxTextFileBytes;
        const notSent = (reason: string) =>
            kind.kind === 'image' ? skip(`[image: ${head}, not sent: ${reason}]`, reason) : skip(`[file: ${head}, ${reason}]`, reason);

        if (kind.kind === 'image' && !limits.imagesAccepted) {
            notSent('this Hermes does not take images');
            continue;
        }
        // The claimed size spares reading what would be refused anyway; the real length is checked again below.
        if (file.size !== undefined && file.size > limit) {
            notSent(`too large: ${formatSize(file.size)} > ${formatSize(limit)}`);
            continue;
        }
        if (kind.kind === 'image' && file.size !== undefined && dataUrlBytes(file.size) > room()) {
            notSent(totalReason(dataUrlBytes(file.size)));
            continue;
        }

        let bytes: Uint8Array;
        try {
            bytes = await read(file.id);
        } catch {
            notSent('could not be read');
            continue;
        }
        if (bytes.length > limit) {
            notSent(`too large: ${formatSize(bytes.length)} > ${formatSize(limit)}`);
            continue;
        }

        if (kind.kind === 'image') {
            const mime = sniffImage(bytes);
            if (mime === undefined) {
                notSent('not a png, jpeg, gif or webp image');
                continue;
            }
            const dataUrl = `data:${mime};base64,${base64(bytes)}`;
            if (dataUrl.length > room()) {
                notSent(totalReason(dataUrl.length));
                continue;
            }
            used += dataUrl.length;
            images.push({ name, mime, dataUrl });
            blocks.push(`[image: ${head}]`);
            continue;
        }

        const text = decodeText(bytes);
        if (text === undefined) {
            notSent('not text (binary content)');
            continue;
        }
        const block = fencedFile(head, kind.language, text);
        const cost = jsonBytes(block);
        if (cost > room()) {
            notSent(totalReason(cost));
            continue;
        }
        // The block and the line break that joins it.
        if (block.length + 1 > textRoom()) {
            notSent(`over the message's text limit: ${block.length + 1} > ${textRoom()} characters left`);
            continue;
        }
        used += cost;
        textUsed += block.length + 1;
        blocks.push(block);
    }
    return { text: blocks.join('\n'), images, notes, usedBytes: used, usedChars: textUsed };
}

/**
 * A file's text under its header line, in a fence no line of the text can close: one backtick longer than the longest
 * run of backticks in it (at least three). The text is cleaned like the room context (control and bidi characters
 * out, line breaks as \n), its `@file:`-style references made inert whatever the settings say (an inserted document
 * is never the asker's request), and every line indented, blank ones included, so column 0 holds only the app's
 * header and fences. Trailing line breaks are dropped: the closing fence ends the file.
 */
function fencedFile(head: string, language: string, raw: string): string {
    const text = inertReferences(neutralise(raw)).replace(/\s+$/, '');
    if (text.length === 0) {
        return `[file: ${head}, empty]`;
    }
    let longest = 0;
    for (const run of text.match(/`+/g) ?? []) {
        longest = Math.max(longest, run.length);
    }
    const fence = '`'.repeat(Math.max(3, longest + 1));
    const body = text
        .split('\n')
        .map((line) => `${CONTINUATION_INDENT}${line}`)
        .join('\n');
    return `[file: ${head}]\n${fence}${language}\n${body}\n${fence}`;
}

/** `12.3 MB`, `256 KB`, `900 bytes`: rounded up to a tenth, so a size over a whole-number limit never reads as equal to it. */
function formatSize(bytes: number): string {
    for (const [unit, scale] of [
        ['MB', MB],
        ['KB', KB],
    ] as const) {
        if (bytes >= scale) {
            return `${Math.ceil((bytes / scale) * 10) / 10} ${unit}`;
        }
    }
    return `${bytes} bytes`;
}

/** The length of `data:image/webp;base64,` plus the base64 of `size` bytes: the most an image of that size can cost. */
function dataUrlBytes(size: number): number {
    return 'data:image/webp;base64,'.length + Math.ceil(size / 3) * 4;
}

/** What a string adds to a JSON body: escaped as JSON.stringify does, counted in UTF-8 bytes, quotes left out. */
function jsonBytes(text: string): number {
    const escaped = JSON.stringify(text);
    let bytes = 0;
    for (let i = 1; i < escaped.length - 1; i++) {
        const code = escaped.charCodeAt(i);
        // A surrogate pair is one 4-byte character, counted 2 + 2 here.
        bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code >= 0xd800 && code <= 0xdfff ? 2 : 3;
    }
    return bytes;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const CODES = ALPHABET.split('').map((c) => c.charCodeAt(0));
const PAD = '='.charCodeAt(0);

/**
 * Standard base64 with padding. Written out rather than taken from Node's Buffer: this core runs in the Apps-Engine's
 * Deno sandbox as well as in tests, and TextDecoder is the one piece both surely have.
 */
function base64(bytes: Uint8Array): string {
    const out = new Uint8Array(Math.ceil(bytes.length / 3) * 4);
    let o = 0;
    for (let i = 0; i < bytes.length; i += 3) {
        const rest = bytes.length - i;
        const n = (bytes[i] << 16) | ((rest > 1 ? bytes[i + 1] : 0) << 8) | (rest > 2 ? bytes[i + 2] : 0);
        out[o++] = CODES[n >> 18];
        out[o++] = CODES[(n >> 12) & 63];
        out[o++] = rest > 1 ? CODES[(n >> 6) & 63] : PAD;
        out[o++] = rest > 2 ? CODES[n & 63] : PAD;
    }
    return new TextDecoder().decode(out);
}
