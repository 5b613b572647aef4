/**
 * Image parts, as Hermes v0.18.2 treats them (docs/hermes-multimodal.md; transcripts img01–img26).
 *
 * - Chat completions validate every user/assistant `content` with `_normalize_multimodal_content`
 *   (gateway/platforms/api_server.py:220-335): `text`/`input_text`/`output_text` parts become
 *   `{"type": "text"}`, `image_url` (`{"url"}` object) and `input_image` (bare string) become
 *   `{"type": "image_url", "image_url": {"url"}}`; a text-only list collapses to one string joined
 *   with "\n". Refused with 400: a non-image `data:` URL, a URL that is neither http(s) nor
 *   `data:image/`, a missing URL, `file`/`input_file` parts, any other part type.
 * - Runs do none of that: the last `input` message's `content` goes to the agent as sent
 *   (api_server.py:4367), so nothing there is refused for its shape.
 * - The transcript keeps `text` parts and a `[screenshot]` line per image, never the pixels
 *   (run_agent.py:1940-1948).
 */
import { pyTruthy } from './pyJson';
import type { ReceivedTurn } from './types';

/** Hermes's MAX_NORMALIZED_TEXT_LENGTH (api_server.py:106): a text part, or a string content, is cut here. */
const MAX_TEXT = 65_536;
/** MAX_CONTENT_LIST_SIZE (api_server.py:107): later parts are ignored. */
const MAX_PARTS = 1_000;

const TEXT_TYPES = new Set(['text', 'input_text', 'output_text']);
const IMAGE_TYPES = new Set(['image_url', 'input_image']);
const FILE_TYPES = new Set(['file', 'input_file']);

type NormalizedPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } };

export type Normalized = { ok: true; value: string | NormalizedPart[] } | { ok: false; code: string; message: string };

/** Python's str slice counts code points; JS counts UTF-16 units. */
function cut(text: string): string {
    if (text.length <= MAX_TEXT) return text;
    const points = Array.from(text);
    return points.length > MAX_TEXT ? points.slice(0, MAX_TEXT).join('') : text;
}

/** Python `str(value)` for the few non-string text values a client could send. */
function pyStr(value: unknown): string {
    if (value === true) return 'True';
    if (value === false) return 'False';
    if (value === null) return 'None';
    return typeof value === 'object' ? pyRepr(value) : String(value);
}

/** `str(part.get("type") or "").strip().lower()`: a falsy type is "". */
function partType(part: Record<string, unknown>): string {
    return (pyTruthy(part.type) ? pyStr(part.type) : '').trim().toLowerCase();
}

/** `_normalize_multimodal_content` for chat completions' user and assistant messages. */
export function normalizeMultimodal(content: unknown): Normalized {
    if (content === null || content === undefined) return { ok: true, value: '' };
    if (typeof content === 'string') return { ok: true, value: cut(content) };
    // Another scalar or an object: the text normaliser's str() fallback.
    if (!Array.isArray(content)) return { ok: true, value: cut(pyStr(content)) };
    const parts: NormalizedPart[] = [];
    for (const part of content.slice(0, MAX_PARTS)) {
        if (typeof part === 'string') {
            if (part) parts.push({ type: 'text', text: cut(part) });
            continue;
        }
        if (part === null || typeof part !== 'object' || Array.isArray(part)) continue;
        const p = part as Record<string, unknown>;
        const type = partType(p);
        if (TEXT_TYPES.has(type)) {
            if (p.text === undefined || p.text === null) continue;
            const text = typeof p.text === 'string' ? p.text : pyStr(p.text);
            if (text) parts.push({ type: 'text', text: cut(text) });
            continue;
        }
        if (IMAGE_TYPES.has(type)) {
            let detail = p.detail;
            const ref = p.image_url;
            let url: unknown = ref;
            if (ref !== null && typeof ref === 'object' && !Array.isArray(ref)) {
                url = (ref as Record<string, unknown>).url;
                if ('detail' in ref) detail = (ref as Record<string, unknown>).detail;
            }
            if (typeof url !== 'string' || !url.trim()) {
                return { ok: false, code: 'invalid_image_url', message: 'Image parts must include a non-empty image URL.' };
            }
            url = url.trim();
            const lowered = (url as string).toLowerCase();
            if (lowered.startsWith('data:')) {
                if (!lowered.startsWith('data:image/') || !(url as string).includes(',')) {
                    return {
                        ok: false,
                        code: 'unsupported_content_type',
                        message: 'Only image data URLs are supported. Non-image data payloads are not supported.',
                    };
                }
            } else if (!lowered.startsWith('http://') && !lowered.startsWith('https://')) {
                return { ok: false, code: 'invalid_image_url', message: 'Image inputs must use http(s) URLs or data:image/... URLs.' };
            }
            const image: NormalizedPart = { type: 'image_url', image_url: { url: url as string } };
            if (detail !== undefined && detail !== null) {
                if (typeof detail !== 'string' || !detail.trim()) {
                    return { ok: false, code: 'invalid_content_part', message: 'Image detail must be a non-empty string when provided.' };
                }
                image.image_url.detail = detail.trim();
            }
            parts.push(image);
            continue;
        }
        if (FILE_TYPES.has(type)) {
            return {
                ok: false,
                code: 'unsupported_content_type',
                message: 'Inline image inputs are supported, but uploaded files and document inputs are not supported on this endpoint.',
            };
        }
        return {
            ok: false,
            code: 'unsupported_content_type',
            message: `Unsupported content part type ${pyRepr(p.type ?? null)}. Only text and image_url/input_image parts are supported.`,
        };
    }
    if (parts.length === 0) return { ok: true, value: '' };
    if (parts.every((p) => p.type === 'text')) {
        return {
            ok: true,
            value: parts
                .map((p) => (p as { text: string }).text)
                .filter((t) => t)
                .join('\n'),
        };
    }
    return { ok: true, value: parts };
}

/** `_content_has_visible_payload` (api_server.py:338): non-blank text, or any image part. */
export function hasVisiblePayload(content: unknown): boolean {
    if (typeof content === 'string') return content.trim().length > 0;
    if (!Array.isArray(content)) return false;
    return content.some((part) => {
        if (part === null || typeof part !== 'object') return false;
        const p = part as Record<string, unknown>;
        const type = partType(p);
        return (TEXT_TYPES.has(type) && String(p.text ?? '').trim().length > 0) || IMAGE_TYPES.has(type);
    });
}

/**
 * What the transcript stores for a user message (run_agent.py:1940-1948): a string as is; a list as its `text` parts
 * and one `[screenshot]` per `image`/`image_url`/`input_image` part, joined with "\n" (`input_text` is lost); null when
 * neither is there.
 */
export function persistedContent(content: unknown): unknown {
    if (!Array.isArray(content)) return content;
    const lines: string[] = [];
    for (const part of content) {
        if (part === null || typeof part !== 'object' || Array.isArray(part)) continue;
        const p = part as Record<string, unknown>;
        if (p.type === 'text') lines.push(pyStr(p.text ?? ''));
        else if (p.type === 'image' || p.type === 'image_url' || p.type === 'input_image') lines.push('[screenshot]');
    }
    return lines.length > 0 ? lines.join('\n') : null;
}

/** The turn's parts and image URLs for `hermes.turns`, when its user content is a list (nothing otherwise). */
export function imagesOf(content: unknown): Pick<ReceivedTurn, 'content' | 'images'> {
    return Array.isArray(content) ? { content, images: imageUrls(content) } : {};
}

/** The URLs of a content list's image parts, in order (`image_url.url`, or `image_url` itself when it is a string). */
function imageUrls(content: unknown): string[] {
    if (!Array.isArray(content)) return [];
    const urls: string[] = [];
    for (const part of content) {
        if (part === null || typeof part !== 'object' || Array.isArray(part)) continue;
        const p = part as Record<string, unknown>;
        if (!IMAGE_TYPES.has(String(p.type ?? ''))) continue;
        const ref = p.image_url;
        const url = ref !== null && typeof ref === 'object' ? (ref as Record<string, unknown>).url : ref;
        if (typeof url === 'string') urls.push(url);
    }
    return urls;
}

/**
 * Python `repr()` of JSON values, for the places Hermes formats one into text: the derived chat session id hashes
 * `f"{system}\n{first_user}"`, which is the repr of a list when the first user message has images.
 */
export function pyRepr(value: unknown): string {
    if (value === null || value === undefined) return 'None';
    if (value === true) return 'True';
    if (value === false) return 'False';
    if (typeof value === 'number') return String(value);
    if (typeof value === 'string') return reprString(value);
    if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
    return `{${Object.entries(value as Record<string, unknown>)
        .map(([k, v]) => `${reprString(k)}: ${pyRepr(v)}`)
        .join(', ')}}`;
}

/** Python's str.isprintable is false for the Other and Separator categories, the space aside. */
const NOT_PRINTABLE = /[\p{C}\p{Z}]/u;

function reprString(text: string): string {
    const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
    let out = '';
    for (const ch of text) {
        const code = ch.codePointAt(0) as number;
        if (ch === '\\') out += '\\\\';
        else if (ch === quote) out += `\\${quote}`;
        else if (ch === '\n') out += '\\n';
        else if (ch === '\r') out += '\\r';
        else if (ch === '\t') out += '\\t';
        else if (ch !== ' ' && NOT_PRINTABLE.test(ch)) {
            out +=
                code < 0x100
                    ? `\\x${code.toString(16).padStart(2, '0')}`
                    : code < 0x10000
                      ? `\\u${code.toString(16).padStart(4, '0')}`
                      : `\\U${code.toString(16).padStart(8, '0')}`;
        } else out += ch;
    }
    return `${quote}${out}${quote}`;
}
