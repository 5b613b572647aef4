import { HermesError } from './errors';

/*
 * What a turn's text and images become on the wire, whichever transport carries them: the cap
 * on an answer, and images as the one content shape both transports keep.
 */

/**
 * The longest answer the app keeps from one turn (chat content, run deltas, run output).
 * It is about 20 chat messages at Rocket.Chat's default size; past it an answer is cut and marked `truncated`, so the
 * turn can say so instead of flooding the room or the app's memory.
 */
export const MAX_ANSWER_CHARS = 100_000;

/** `text` cut to MAX_ANSWER_CHARS (never inside a surrogate pair); `truncated` when something was cut. */
export function clipAnswer(text: string): { text: string; truncated: boolean } {
    if (text.length <= MAX_ANSWER_CHARS) {
        return { text, truncated: false };
    }
    const highSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
    const end = highSurrogate(text.charCodeAt(MAX_ANSWER_CHARS - 1)) ? MAX_ANSWER_CHARS - 1 : MAX_ANSWER_CHARS;
    return { text: text.slice(0, end), truncated: true };
}

/** An image as a `data:image/(png|jpeg|gif|webp);base64,…` URL (src/files/attachments.ts makes them). */
export interface ImagePart {
    dataUrl: string;
}

/**
 * The image types, as data URLs, that every provider behind Hermes reads. Runs hand the content to the model unchecked
 * (a non-image data URL or a bare file path would reach it), so the client checks what Hermes's chat endpoint would.
 */
const IMAGE_DATA_URL = /^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/;

/**
 * Whether this Hermes reads image parts, by its /health version. Chat completions validate and keep them from v0.11.0
 * (2026-04-23, commit f683132); before, they flattened a user message to its text and dropped the images without a
 * word. Runs take the same parts in an `input` message list (checked on v0.18.2, which the app needs for runs anyway).
 * An unknown version (no `version` field, a `dev` build) counts as no: the caller names the images in the text instead
 * of losing them silently.
 */
export function takesImages(version: string | undefined): boolean {
    const m = /^(\d+)\.(\d+)\./.exec(version ?? '');
    return m !== null && (Number(m[1]) > 0 || Number(m[2]) >= 11);
}

/**
 * A user message with images, in the one shape both transports carry intact: OpenAI chat-completions parts. Hermes's
 * chat endpoint also takes Responses-style `input_text`/`input_image` and rewrites them to this shape, but runs pass
 * content to the model as sent, where a chat-completions provider refuses `input_text`, and the transcript keeps only
 * `text` parts. An image that is not a data URL of the four types is refused here, before anything is sent.
 */
export function userContent(text: string, images: ImagePart[]): Array<Record<string, unknown>> {
    const parts: Array<Record<string, unknown>> = text.length > 0 ? [{ type: 'text', text }] : [];
    for (const image of images) {
        if (!IMAGE_DATA_URL.test(image.dataUrl)) {
            throw new HermesError('rejected', 'an image is not a base64 data URL of a png, jpeg, gif or webp image');
        }
        parts.push({ type: 'image_url', image_url: { url: image.dataUrl } });
    }
    return parts;
}
