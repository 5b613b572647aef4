import { CONTEXT_FILES_HEADER } from '../context/contextBlock';
import { HermesCapabilities } from '../hermes/capabilities';
import { ImagePart, takesImages } from '../hermes/content';
import { AttachmentLimits, Attachments, readAttachments } from '../files/attachments';
import { notTriedLine, ownerOf } from '../files/contextFiles';
import { TickPorts } from './tickPorts';
import { describe, TurnRecord } from './turnRecord';

/** Hermes refuses bodies over 10,000,000 bytes; the turn's own text and history need room. */
const MAX_FILES_BYTES = 7_000_000;
/** What the context's files (context_files) may add to the request, out of what the trigger's files leave of MAX_FILES_BYTES. */
const MAX_CONTEXT_FILES_BYTES = 3_000_000;
/** Chat completions cut a text part at 65,536 code points without a word. */
const CHAT_TEXT_CHARS = 65_000;
const RUNS_TEXT_CHARS = 200_000;

const NONE: Attachments = { text: '', images: [], notes: [], usedBytes: 0, usedChars: 0 };

/**
 * The trigger's uploads for Hermes, and the context's files (context_files), read when the turn
 * is sent (never stored in the turn record: images stay out of persistence). One upload read per
 * file tried, none for a turn without files. The files' text joins `user` once; the images are
 * read again on a later attempt. A file that cannot be read costs that file, never the turn.
 * The trigger's files come first and the context's get what they leave, at most 3 MB together;
 * the retry after Hermes refused the turn as too large sends none of the context's.
 */
export async function turnImages(rec: TurnRecord, caps: HermesCapabilities, ports: TickPorts): Promise<ImagePart[] | undefined> {
    const context = rec.trimmed ? undefined : rec.contextFiles;
    if ((!rec.files?.length && !context) || !ports.readFile) {
        return undefined;
    }
    const c = ports.config;
    const textCap = rec.transport === 'chat' ? CHAT_TEXT_CHARS : RUNS_TEXT_CHARS;
    const limits: AttachmentLimits = {
        maxImageBytes: c.maxImageMb * 1024 * 1024,
        maxTextFileBytes: c.maxTextFileKb * 1024,
        maxTotalBytes: MAX_FILES_BYTES - rec.user.length,
        maxTextChars: Math.max(0, textCap - rec.user.length),
        imagesAccepted: takesImages(caps.version),
    };
    const own = rec.files?.length ? await readAttachments(rec.files, ports.readFile, limits) : NONE;
    const theirs =
        context && context.files.length > 0
            ? await readAttachments(
                  context.files.map((f) => ({ ...f, owner: ownerOf(f, c.timezone) })),
                  ports.readFile,
                  {
                      ...limits,
                      maxTotalBytes: Math.min(MAX_CONTEXT_FILES_BYTES, limits.maxTotalBytes - own.usedBytes),
                      // The header line and the line break before it.
                      maxTextChars: Math.max(0, limits.maxTextChars - own.usedChars - CONTEXT_FILES_HEADER.length - 1),
                      totalOf: "context's",
                  },
              )
            : NONE;
    if (!rec.filesRead) {
        rec.filesRead = true;
        const section = context ? [theirs.text, notTriedLine(context)].filter((s): s is string => Boolean(s)) : [];
        rec.user = [rec.user, ...(own.text ? [own.text] : []), ...(section.length > 0 ? [CONTEXT_FILES_HEADER, ...section] : [])].join('\n');
        for (const [whose, notes] of [
            ['Files', own.notes],
            ['Context files', theirs.notes],
        ] as const) {
            if (notes.length > 0) {
                ports.log.info(`${whose} of ${describe(rec)} not sent whole: ${notes.length} (${notes.map((n) => n.replace(/^.*: /, '')).join('; ')}).`);
            }
        }
    }
    const images = [...own.images, ...theirs.images];
    return images.length > 0 ? images.map((i) => ({ dataUrl: i.dataUrl })) : undefined;
}
