/*
 * Hermes's gateways turn `MEDIA:<absolute path>` tags in an answer into uploads and strip them
 * from the text (gateway/platforms/base.py MEDIA_TAG_CLEANUP_RE, v0.18.2). The api_server that
 * this app talks to serves no file (no route for one; /v1/runs and streamed chat completions
 * hand the tags over raw): the file is on Hermes's machine, out of reach. So the tags are kept
 * out of the posted answer, as a gateway would, and the answer says which files were left out.
 * Never fetched: a path or URL the model wrote is not an address the app asks.
 */

/** MEDIA_DELIVERY_EXTS of v0.18.2: only a path ending in one of these is a tag. */
const DELIVERABLE = [
    'png', 'jpg', 'jpeg', 'gif', 'webp', 'bmp', 'tiff', 'svg',
    'mp4', 'mov', 'avi', 'mkv', 'webm',
    'mp3', 'wav', 'ogg', 'opus', 'm4a', 'flac',
    'pdf', 'docx', 'doc', 'odt', 'rtf', 'txt', 'md', 'epub',
    'xlsx', 'xls', 'ods', 'csv', 'tsv', 'json', 'xml', 'yaml', 'yml',
    'pptx', 'ppt', 'odp', 'key',
    'zip', 'tar', 'gz', 'tgz', 'bz2', 'xz', '7z', 'rar', 'apk', 'ipa',
    'html', 'htm',
]; // prettier-ignore

// Longest first, so a shorter extension never matches as the prefix of a longer one.
const EXTENSIONS = [...DELIVERABLE].sort((a, b) => b.length - a.length).join('|');

/**
 * The gateway's pattern: an optional quote, `MEDIA:`, then a quoted path or an absolute one
 * (`/`, `~/`, `C:\`) that ends in a deliverable extension, followed by a space, a quote or
 * closing punctuation, or the end. One bound the gateway lacks: an unquoted path spans at most
 * 16 spaces, so an answer full of `MEDIA:` words costs linear time, not quadratic (the model's
 * text is not trusted to be kind).
 */
const MEDIA_TAG = new RegExp(
    '[`"\']?MEDIA:\\s*' +
        '(?<path>`[^`\\n]+`|"[^"\\n]+"|\'[^\'\\n]+\'|' +
        `(?:~/|/|[A-Za-z]:[/\\\\])\\S+(?:[^\\S\\n]+\\S+){0,16}?\\.(?:${EXTENSIONS}))` +
        '(?=[\\s`"\',;:)\\]}]|$)[`"\']?',
    'gi',
);

/** A path up to its first deliverable extension (the rest of a match that ran over two tags is another). */
const FIRST_FILE = new RegExp(`^.*?\\.(?:${EXTENSIONS})(?=[\\s,;:)\\]}'"\`]|$)`, 'i');

/** The gateway's delivery hints, meaningless here. */
const MARKERS = /\[\[(?:audio_as_voice|as_document)\]\]/g;

/**
 * Fenced blocks and inline code: a tag written there is shown, not taken (the gateway masks them
 * too). A backticked path right after `MEDIA:` is the tag's own quoting, not code.
 */
const CODE = /```[\s\S]*?(?:```|$)|(?<!MEDIA:[^\S\n]*)`[^`\n]+`/g;

export interface WithoutMedia {
    text: string;
    /** The file names (not their paths on Hermes's machine) of the tags taken out, in order. */
    files: string[];
}

/** The answer without its `MEDIA:` tags and delivery markers, and the names of the files they named. */
export function withoutMedia(answer: string): WithoutMedia {
    if (!answer.includes('MEDIA:') && !answer.includes('[[')) {
        return { text: answer, files: [] };
    }
    const files: string[] = [];
    let text = '';
    let from = 0;
    for (const code of answer.matchAll(CODE)) {
        const at = code.index ?? from;
        text += clean(answer.slice(from, at), files) + code[0];
        from = at + code[0].length;
    }
    text += clean(answer.slice(from), files);
    return { text: text.trim(), files };
}

function clean(prose: string, files: string[]): string {
    return prose
        .split('\n')
        .flatMap((line) => {
            const kept = withoutTags(line.replace(MARKERS, ''), files);
            // Nothing but a tag on its line: the line goes, not a blank in its place.
            return kept !== line && kept.trim() === '' ? [] : [kept];
        })
        .join('\n');
}

/** One line without its tags; the spaces before a tag go with it ("The chart: MEDIA:/tmp/c.png" leaves "The chart:"). */
function withoutTags(line: string, files: string[]): string {
    let kept = '';
    let from = 0;
    for (const tag of line.matchAll(MEDIA_TAG)) {
        const at = tag.index ?? from;
        kept += line.slice(from, at).trimEnd();
        from = at + tag[0].length;
        // Two tags on one line can be one match (the gateway's lazy path runs to the last
        // extension): each still names its file.
        const path = tag.groups?.path ?? '';
        files.push(...path.split(/[^\S\n]+MEDIA:[^\S\n]*/i).map((one) => fileName(one.match(FIRST_FILE)?.[0] ?? one)));
    }
    return kept + line.slice(from);
}

/** The last part of a path, without the opening quote a quoted tag keeps (its closing one is not taken). */
function fileName(path: string): string {
    const parts = path
        .replace(/^[`"']/, '')
        .trim()
        .split(/[/\\]/);
    return parts[parts.length - 1];
}
