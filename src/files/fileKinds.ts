/**
 * What a file posted in Rocket.Chat is, for Hermes: an image it can look at, text it can read, or something it only hears
 * about. The declared type comes from the uploader's browser and the name from the uploader, so neither is trusted alone:
 * a claimed image is checked by its first bytes, claimed text by decoding it (see attachments.ts).
 */

/** The image types Hermes's providers take as a `data:` URL (OpenAI, Anthropic, Gemini all read these four). */
export type ImageMime = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export type FileKind = { kind: 'image' } | { kind: 'text'; language: string } | { kind: 'other' };

const IMAGE_MIMES = new Map<string, ImageMime>([
    ['image/png', 'image/png'],
    ['image/jpeg', 'image/jpeg'],
    // Old browsers and some mail clients still label JPEGs these ways.
    ['image/jpg', 'image/jpeg'],
    ['image/pjpeg', 'image/jpeg'],
    ['image/gif', 'image/gif'],
    ['image/webp', 'image/webp'],
]);

const IMAGE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp']);

/**
 * Text-like extensions and the fence info string each gets. Source code is recognised by extension only: browsers label
 * it every which way (`.ts` arrives as `video/mp2t`, `.py` as `text/x-python` or nothing), and the content check decides
 * in the end anyway.
 */
const TEXT_EXTENSIONS = new Map<string, string>([
    ['txt', 'text'],
    ['text', 'text'],
    ['md', 'markdown'],
    ['markdown', 'markdown'],
    ['rst', 'rst'],
    ['adoc', 'asciidoc'],
    ['csv', 'csv'],
    ['tsv', 'tsv'],
    ['json', 'json'],
    ['jsonl', 'json'],
    ['ndjson', 'json'],
    ['yaml', 'yaml'],
    ['yml', 'yaml'],
    ['xml', 'xml'],
    ['svg', 'xml'],
    ['log', 'text'],
    ['ini', 'ini'],
    ['cfg', 'ini'],
    ['conf', 'text'],
    ['toml', 'toml'],
    ['properties', 'properties'],
    ['env', 'text'],
    ['diff', 'diff'],
    ['patch', 'diff'],
    ['tex', 'latex'],
    ['html', 'html'],
    ['htm', 'html'],
    ['css', 'css'],
    ['scss', 'scss'],
    ['less', 'less'],
    ['js', 'javascript'],
    ['mjs', 'javascript'],
    ['cjs', 'javascript'],
    ['jsx', 'jsx'],
    ['ts', 'typescript'],
    ['tsx', 'tsx'],
    ['vue', 'vue'],
    ['svelte', 'svelte'],
    ['py', 'python'],
    ['rb', 'ruby'],
    ['go', 'go'],
    ['rs', 'rust'],
    ['java', 'java'],
    ['kt', 'kotlin'],
    ['kts', 'kotlin'],
    ['scala', 'scala'],
    ['groovy', 'groovy'],
    ['gradle', 'groovy'],
    ['c', 'c'],
    ['h', 'c'],
    ['cc', 'cpp'],
    ['cpp', 'cpp'],
    ['cxx', 'cpp'],
    ['hpp', 'cpp'],
    ['cs', 'csharp'],
    ['php', 'php'],
    ['swift', 'swift'],
    ['m', 'objectivec'],
    ['dart', 'dart'],
    ['lua', 'lua'],
    ['pl', 'perl'],
    ['r', 'r'],
    ['jl', 'julia'],
    ['ex', 'elixir'],
    ['exs', 'elixir'],
    ['erl', 'erlang'],
    ['hs', 'haskell'],
    ['clj', 'clojure'],
    ['ml', 'ocaml'],
    ['sql', 'sql'],
    ['sh', 'bash'],
    ['bash', 'bash'],
    ['zsh', 'bash'],
    ['fish', 'fish'],
    ['ps1', 'powershell'],
    ['bat', 'batch'],
    ['cmd', 'batch'],
    ['tf', 'hcl'],
    ['hcl', 'hcl'],
    ['proto', 'protobuf'],
    ['graphql', 'graphql'],
    ['gql', 'graphql'],
    ['dockerfile', 'dockerfile'],
    ['makefile', 'makefile'],
]);

/** Declared types that say "text" whatever the name; the value is the fence info string when the name has no known extension. */
const TEXT_MIMES = new Map<string, string>([
    ['text/csv', 'csv'],
    ['text/tab-separated-values', 'tsv'],
    ['text/markdown', 'markdown'],
    ['text/x-markdown', 'markdown'],
    ['text/html', 'html'],
    ['text/css', 'css'],
    ['text/xml', 'xml'],
    ['text/yaml', 'yaml'],
    ['text/x-yaml', 'yaml'],
    ['application/json', 'json'],
    ['application/x-ndjson', 'json'],
    ['application/xml', 'xml'],
    ['application/yaml', 'yaml'],
    ['application/x-yaml', 'yaml'],
    ['application/toml', 'toml'],
    ['application/sql', 'sql'],
    ['application/x-sql', 'sql'],
    ['application/javascript', 'javascript'],
    ['application/x-javascript', 'javascript'],
    ['application/typescript', 'typescript'],
    ['application/x-sh', 'bash'],
    ['application/x-shellscript', 'bash'],
    ['image/svg+xml', 'xml'],
]);

/** Types that carry no information about the content: the name decides. */
const GENERIC_MIMES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown']);

/** `image/png; charset=x` → `image/png`. */
function baseMime(mime: string): string {
    return mime.split(';')[0].trim().toLowerCase();
}

/** The last extension, lower case; a dot-less name like `Dockerfile` or `Makefile` is its own extension. */
function extensionOf(name: string): string {
    const base = name.trim().split(/[\\/]/).pop() ?? '';
    const dot = base.lastIndexOf('.');
    return (dot === -1 ? base : base.slice(dot + 1)).toLowerCase();
}

export function classifyFile(name: string, mime: string): FileKind {
    const type = baseMime(mime);
    const ext = extensionOf(name);
    if (IMAGE_MIMES.has(type) || (GENERIC_MIMES.has(type) && IMAGE_EXTENSIONS.has(ext))) {
        return { kind: 'image' };
    }
    const byExtension = TEXT_EXTENSIONS.get(ext);
    // A textual name wins over any non-image type: the content check (binary detection) is what keeps a real video out.
    if (byExtension !== undefined) {
        return { kind: 'text', language: byExtension };
    }
    const byMime = TEXT_MIMES.get(type) ?? (type.startsWith('text/') || type.endsWith('+json') || type.endsWith('+xml') ? 'text' : undefined);
    return byMime === undefined ? { kind: 'other' } : { kind: 'text', language: byMime };
}

/**
 * The image type the bytes really are, from their signature; undefined for anything else. The data URL is labelled with
 * this, never with the declared type: a provider rejects an image whose label and bytes disagree.
 */
export function sniffImage(bytes: Uint8Array): ImageMime | undefined {
    const starts = (sig: number[], at = 0) => bytes.length >= at + sig.length && sig.every((b, i) => bytes[at + i] === b);
    if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) {
        return 'image/png';
    }
    if (starts([0xff, 0xd8, 0xff])) {
        return 'image/jpeg';
    }
    if (starts([0x47, 0x49, 0x46, 0x38]) && (starts([0x37, 0x61], 4) || starts([0x39, 0x61], 4))) {
        return 'image/gif';
    }
    if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) {
        return 'image/webp';
    }
    return undefined;
}

/**
 * The bytes as text, or undefined when they are not text: a NUL byte (no text format uses one; nearly every binary
 * format has one early on, UTF-16 text too) or invalid UTF-8. The decoder drops a leading byte-order mark.
 */
export function decodeText(bytes: Uint8Array): string | undefined {
    if (bytes.includes(0)) {
        return undefined;
    }
    try {
        // Made per call: the packager's check (rc-apps) loads this module where TextDecoder is undefined.
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
        return undefined;
    }
}
