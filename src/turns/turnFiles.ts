import { HermesCapabilities } from '../hermes/capabilities';
import { ImagePart, takesImages } from '../hermes/client';
import { readAttachments } from '../files/attachments';
import { TickPorts } from './tickPorts';
import { describe, TurnRecord } from './turnRecord';

/** Hermes refuses bodies over 10,000,000 bytes; the turn's own text and history need room. */
const MAX_FILES_BYTES = 7_000_000;
/** Chat completions cut a text part at 65,536 code points without a word. */
const CHAT_TEXT_CHARS = 65_000;
const RUNS_TEXT_CHARS = 200_000;

/**
 * The trigger's uploads for Hermes, read when the turn is sent (never stored in the turn
 * record: images stay out of persistence). The files' text joins `user` once; the images are
 * read again on a later attempt. A file that cannot be read costs that file, never the turn.
 */
export async function turnImages(rec: TurnRecord, caps: HermesCapabilities, ports: TickPorts): Promise<ImagePart[] | undefined> {
    if (!rec.files?.length || !ports.readFile) {
        return undefined;
    }
    const c = ports.config;
    const attachments = await readAttachments(rec.files, ports.readFile, {
        maxImageBytes: c.maxImageMb * 1024 * 1024,
        maxTextFileBytes: c.maxTextFileKb * 1024,
        maxTotalBytes: MAX_FILES_BYTES - rec.user.length,
        maxTextChars: Math.max(0, (rec.transport === 'chat' ? CHAT_TEXT_CHARS : RUNS_TEXT_CHARS) - rec.user.length),
        imagesAccepted: takesImages(caps.version),
    });
    if (!rec.filesRead) {
        rec.filesRead = true;
        rec.user = attachments.text ? `${rec.user}\n${attachments.text}` : rec.user;
        if (attachments.notes.length > 0) {
            ports.log.info(
                `Files of ${describe(rec)} not sent whole: ${attachments.notes.length} (${attachments.notes.map((n) => n.replace(/^.*: /, '')).join('; ')}).`,
            );
        }
    }
    return attachments.images.length > 0 ? attachments.images.map((i) => ({ dataUrl: i.dataUrl })) : undefined;
}
