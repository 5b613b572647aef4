import { label } from '../security/inertText';

/*
 * How a scheduled prompt's run shows in the room: Hermes's own cron framing (a header with the
 * job's name, `[SILENT]` for nothing to post) and the name as plain text. The turn's delivery
 * and the cron commands both use it, so it lives in delivery/, below both.
 */

/** What a run's answer that should post nothing is, exactly (Hermes's own cron convention). */
export const SILENT = '[SILENT]';

/** The header every delivery starts with (Hermes's own cron framing); the name as plain text. */
export function deliveryHeader(name: string): string {
    return `[Cron delivery: ${plainName(name)}]`;
}

/** Zero-width space: invisible, but no user or room name can start right after it. */
const ZWSP = '\u200B';

/**
 * A job's name as plain text wherever it is shown (the public header of every delivery, `cron
 * list`, replies): the creator chose it, and as raw Markdown `@all` or `@here` notified the whole
 * room under the bot's name, `#room` linked elsewhere and `*`, `~`, `` ` ``, `||`, `<url|text>`
 * restyled the header. One line without brackets (no `[text](link)`), Hermes references inert
 * (label); `@` and `#` get a zero-width space after them (Rocket.Chat's mention rules, server and
 * parser, need a name character right after); an underscore becomes a hyphen (`daily-report`:
 * whether the parser reads `_` as italics depends on the letters around it); the other characters
 * it reads as emphasis, code, spoilers, `<…>` links and KaTeX are dropped. Applied when shown, so
 * jobs stored before are shown the same way; applied twice, it gives the same text.
 */
export function plainName(name: string): string {
    const plain = label(name)
        .replace(/([@＠#＃])(?!\u200B)/g, `$1${ZWSP}`)
        .replace(/_/g, '-')
        .replace(/[*~`|<>\\$]/g, '')
        .replace(/\s+/g, ' ')
        .trim();
    return plain || 'job';
}
