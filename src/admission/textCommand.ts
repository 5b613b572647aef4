import { USER_COMMANDS } from '../settings/definitions';

/** The commands a person can type after a mention (`@hermes /new`) or at the start of a DM. */
const NAMES = [...USER_COMMANDS, 'sethome', 'automation'] as const;
export type TextCommandName = (typeof NAMES)[number];

export type TextCommand = { kind: 'known'; name: TextCommandName; args: string } | { kind: 'unknown'; name: string };

const KNOWN: ReadonlySet<string> = new Set(NAMES);

/** Answers about a person's own things (sessions, jobs, usage) or admin changes: always private, however the command was typed. */
const PRIVATE: ReadonlySet<string> = new Set(['title', 'sessions', 'resume', 'search', 'cron', 'sethome', 'automation', 'usage']);

/**
 * Reads a command from the start of a turn's text. `/new` is the documented form; `!new` is
 * the fallback for DMs, where Rocket.Chat clients take a leading `/` as their own slash
 * command and may never send the message.
 */
export function parseTextCommand(text: string): TextCommand | undefined {
    const match = /^[/!]([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
    if (!match) {
        return undefined;
    }
    const name = match[1].toLowerCase();
    if (KNOWN.has(name)) {
        return { kind: 'known', name: name as TextCommandName, args: (match[2] ?? '').trim() };
    }
    // `!` followed by an unknown word is ordinary text ("!important"); `/word` is a command attempt.
    return text.trim().startsWith('/') ? { kind: 'unknown', name } : undefined;
}

/** See PRIVATE. */
export function isPrivateCommand(command: TextCommand): boolean {
    return command.kind === 'known' && PRIVATE.has(command.name);
}

export function isSessionReset(command: TextCommand | undefined): boolean {
    return command?.kind === 'known' && (command.name === 'new' || command.name === 'reset');
}

/** Default deny: ordinary users run only what command_allowlist names; admins run every command. */
export function commandAllowed(name: TextCommandName, userId: string, config: { commandAllowlist: string[]; adminUserIds: string[] }): boolean {
    return config.adminUserIds.includes(userId) || config.commandAllowlist.includes(name);
}

/** Commands that only show the caller something: a member of a read-only room may run them too. */
const SHOWS_ONLY: ReadonlySet<string> = new Set(['status', 'help', 'sessions', 'search', 'usage']);

/**
 * What a command needs in its room (security/access.ts): `read` when it only shows the caller
 * something, `post` when it changes the conversation (new, stop, resume, a title set, a job)
 * or a setting. An unknown or missing command only shows its usage.
 */
export function commandNeed(command: TextCommand | undefined): 'read' | 'post' {
    if (!command || command.kind === 'unknown' || SHOWS_ONLY.has(command.name)) {
        return 'read';
    }
    const args = command.args.trim();
    if ((command.name === 'title' && !args) || (command.name === 'cron' && /^(list)?$/i.test(args))) {
        return 'read';
    }
    return 'post';
}

/**
 * The slash command's arguments as one line again, for the same parser as `@bot /…` text.
 * Rocket.Chat has already split what was typed (apps/meteor/lib/utils/parseParameters.ts): a
 * quoted span became one argument without its quotes. `cron` reads quotes (`--name "Daily
 * standup"`) and a `background` prompt's quotes are its words: there an argument with a space (or
 * an empty one) was quoted and gets its quotes back (the kind it holds none of; one with both
 * kinds goes bare). Everywhere else the quotes
 * only grouped words, as the server meant: `/hermes title "Q3 plan"` titles the session `Q3 plan`.
 */
export function argumentsLine(name: string, args: string[]): string {
    if (name !== 'cron' && name !== 'background') {
        return args.join(' ');
    }
    return args
        .map((arg) => {
            if (arg && !/\s/.test(arg)) {
                return arg;
            }
            if (!arg.includes('"')) {
                return `"${arg}"`;
            }
            return arg.includes("'") ? arg : `'${arg}'`;
        })
        .join(' ');
}
