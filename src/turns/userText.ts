import { renderWindow, roomTurnText, triggerText } from '../context/contextBlock';
import { quotedFor, stripQuoteLinks } from '../context/replyPointer';
import { askerLine, askerToken } from '../security/askerToken';
import { ContextMessage } from '../context/contextMessage';
import { HistoryPort } from '../context/historyPort';
import { isContextWorthy, selectWindow, windowSettled, WindowOptions } from '../context/window';
import { LogPort } from '../security/safeLog';
import { HermesConfig } from '../settings/config';
import { SessionRecord } from '../sessions/sessionRecord';
import { ContextFiles, pickContextFiles } from '../files/contextFiles';
import { describeTurn, Turn, turnIsShared } from './turn';

/** Messages read at most to find where a room window starts (5 pages of getMessages). */
const MAX_SCAN = 500;
/**
 * A window holds at most history_max_messages: the first read asks for that many and this
 * many more (the trigger, messages posted since, the app's own notices), so it settles in one
 * read as before without asking for a whole page of 100.
 */
const FIRST_PAGE_SLACK = 10;

export interface UserTextInput {
    turn: Turn;
    config: HermesConfig;
    bot: { id: string; username: string };
    /** A DM's context depends on it (its first turn only); a room's does not, so it may still be on its way. */
    session: SessionRecord | Promise<SessionRecord>;
    history: HistoryPort;
    /** Rocket.Chat's Site_Url: only message links to this server are quotes. */
    siteUrl: string;
    log: LogPort;
    now: () => number;
}

/** The user turn's text, and the files of its context to send with it (context_files; undefined when off or none). */
export interface UserText {
    text: string;
    contextFiles?: ContextFiles;
}

/** The lines of a context block and the messages they render (the newest ones of the window). */
interface Block {
    lines: string[];
    messages: ContextMessage[];
}

/**
 * The text Hermes receives as the user turn.
 * - Room: the room context block, then `[New message]` and the trigger. A room thread's
 *   block is added when the turn reaches Hermes (turns/threadContext.ts).
 * - 1:1 DM: the bare text; its first turn may be seeded with earlier DM messages
 *   (dm_seed_messages), and a DM thread's first turn carries the thread so far, while the
 *   bot has not written in it.
 * In shared sessions the trigger carries the speaker as `[name] `. A message that quotes
 * another gets a `[Replying to …]` line right before it (context/replyPointer.ts).
 * If history cannot be read, the turn goes on without a block and the log says so once.
 * With context_files, the files of the block's messages and of the quoted message are picked
 * (not read: turns/turnFiles.ts reads them when the turn is sent).
 */
export async function buildUserText(input: UserTextInput): Promise<UserText> {
    const { turn, config } = input;
    // Shared sessions name the speaker; the app writes that label itself (see triggerText).
    const speaker = turnIsShared(turn, config) ? turn.message.senderUsername : undefined;
    const allowReferences = config.allowContextReferences;
    // With an asker key every turn names its asker, right after the room line (DMs included, for the history tool).
    const headerLines = config.askerKey
        ? [askerLine(askerToken(config.askerKey, turn.message.senderId, turn.message.roomId, Math.floor(input.now() / 1000)))]
        : [];
    let block: Block | undefined;
    try {
        block = turn.kind === 'room' ? await roomLines(input) : await dmLines(input);
    } catch (error) {
        input.log.warn(
            `Room history for ${describeTurn(turn)} could not be read, answering without context: ${error instanceof Error ? error.message : String(error)}`,
        );
        block = undefined;
    }
    const quoted = await quotedFor({
        text: turn.text,
        siteUrl: input.siteUrl,
        roomId: turn.message.roomId,
        askerId: turn.message.senderId,
        botId: input.bot.id,
        read: (id) => input.history.message(id),
        log: (line) => input.log.debug(line),
    });
    const pointer = quoted?.line;
    const contextFiles =
        config.contextFiles > 0
            ? pickContextFiles({
                  messages: block?.messages ?? [],
                  quoted: quoted?.target,
                  max: config.contextFiles,
                  botId: input.bot.id,
                  exclude: turn.message.files,
              })
            : undefined;
    // The quote link is how the person pointed at the message; Hermes gets the pointer line instead.
    const trigger = stripQuoteLinks(turn.text);
    if (block === undefined && headerLines.length === 0) {
        const bare = triggerText(trigger, { allowReferences, speaker });
        return { text: pointer ? `${pointer}\n${bare}` : bare, contextFiles };
    }
    const text = roomTurnText({ roomId: turn.message.roomId, lines: block?.lines ?? [], trigger, pointer, headerLines, allowReferences, speaker });
    return { text, contextFiles };
}

/** The window rendered, with the messages that made it into the block (renderWindow drops the oldest first). */
function rendered(window: ContextMessage[], input: UserTextInput): Block {
    const lines = renderWindow(window, renderOpts(input));
    return { lines, messages: window.slice(window.length - lines.length) };
}

function renderOpts(input: UserTextInput) {
    return { timeZone: input.config.timezone, botId: input.bot.id, allowedUserIds: input.config.allowedUserIds };
}

async function roomLines(input: UserTextInput): Promise<Block> {
    const { turn, config, bot } = input;
    if (turn.message.threadId) {
        // A thread's block is read when the turn reaches Hermes, from its session's frontier (turns/threadContext.ts).
        return { lines: [], messages: [] };
    }
    const before = { id: turn.message.id, createdAt: turn.createdAt };
    const opts: WindowOptions = {
        askerId: turn.message.senderId,
        botId: bot.id,
        botUsername: bot.username,
        perPerson: !turnIsShared(turn, config),
        min: config.historyMinMessages,
        max: config.historyMaxMessages,
    };
    const history = await input.history.mainChannel(turn.message.roomId, before, (h) => windowSettled(h, opts), MAX_SCAN, opts.max + FIRST_PAGE_SLACK);
    return rendered(selectWindow(history, opts), input);
}

/** DMs carry context only on a session's first turn; otherwise Hermes already holds it. */
async function dmLines(input: UserTextInput): Promise<Block | undefined> {
    const { turn, config, bot } = input;
    const session = await input.session;
    if (session.turns > 0) {
        return undefined;
    }
    const before = { id: turn.message.id, createdAt: turn.createdAt };
    let seed: ContextMessage[];
    if (turn.message.threadId) {
        const thread = await input.history.thread(turn.message.threadId, before);
        // The root is usually the bot's own message; a reply of the bot means the thread already has a session.
        if (thread.some((m) => m.senderId === bot.id && m.id !== turn.message.threadId)) {
            return undefined;
        }
        seed = thread.filter((m) => isContextWorthy(m, bot.id));
    } else {
        if (config.dmSeedMessages === 0) {
            return undefined;
        }
        const history = await input.history.mainChannel(turn.message.roomId, before, (h) => h.length >= config.dmSeedMessages, config.dmSeedMessages);
        seed = history.filter((m) => isContextWorthy(m, bot.id)).slice(-config.dmSeedMessages);
    }
    return seed.length > 0 ? rendered(seed, input) : undefined;
}
