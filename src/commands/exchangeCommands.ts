import { chooseTransport, HermesCapabilities } from '../hermes/capabilities';
import { HermesClient } from '../hermes/client';
import { MessageKey, translator } from '../i18n/messages';
import { LogPort } from '../security/safeLog';
import { cutOut, Exchange, ExchangePort, findExchange, withoutCuts } from '../sessions/exchanges';
import { SessionPort } from '../sessions/sessionRecord';
import { HermesConfig } from '../settings/config';
import { TurnStore } from '../turns/turnStore';

/*
 * `/hermes retry` and `/hermes undo`: the conversation's last answered exchange leaves what
 * Hermes is sent as history (sessions/exchanges.ts), its answer is marked in the room, and a
 * retry asks the same text again as a new turn of the conversation. Only its asker or an admin
 * may, and never while a turn of the conversation is open (its history is being read).
 */

export interface ExchangeCommandPorts {
    config: Pick<HermesConfig, 'adminUserIds' | 'hermesTransport' | 'retryOldAnswer'>;
    /** The client of the conversation's profile (its transcript lives there). */
    hermes: HermesClient;
    capabilities: () => Promise<HermesCapabilities>;
    sessions: SessionPort;
    turns: Pick<TurnStore, 'openInSession'>;
    exchanges: ExchangePort;
    /** Edits one of the bot's messages of the exchange (in its room) to `text`; `undefined` removes it. Never throws for a message gone. */
    replace: (exchange: Exchange, messageId: string, text: string | undefined) => Promise<void>;
    /** Puts a line above one of the bot's messages of the exchange, keeping its text. */
    mark: (exchange: Exchange, messageId: string, line: string) => Promise<void>;
    /** A link to the question's message, when the server has a Site_Url. */
    linkTo: (exchange: Exchange) => Promise<string | undefined>;
    /** Starts the retry's turn: false when it was refused (the caller was told why). */
    ask: (exchange: Exchange, input: string, callerId: string) => Promise<boolean>;
    log: LogPort;
    /** The caller's language: the reply is theirs alone. */
    language?: string;
}

/** What the engine supplies (engine/exchangePorts.ts); the command's runner adds the rest. */
export type ExchangeEnginePorts = Pick<ExchangeCommandPorts, 'capabilities' | 'exchanges' | 'replace' | 'mark' | 'linkTo' | 'ask'>;

type Verb = 'retry' | 'undo';

/** Runs `retry` or `undo` for `who` in the conversation `key`; the reply is the caller's. */
export async function exchangeCommand(verb: Verb, who: { id: string; username: string }, key: string, ports: ExchangeCommandPorts): Promise<string> {
    const t = translator(ports.language);
    const refused = (reason: MessageKey, params?: Record<string, string>) => {
        ports.log.info(`${verb} by ${who.id} in ${key} refused (${reason}).`);
        return t(reason, params);
    };
    const caps = await ports.capabilities();
    if (caps.runsLoadHistory || chooseTransport(ports.config.hermesTransport, caps) !== 'runs') {
        // Hermes loads this history itself: v0.18.2 has no route that leaves an exchange out of it.
        return refused('exchange_unsupported');
    }
    const [open, session, exchanges] = await Promise.all([ports.turns.openInSession(key), ports.sessions.get(key), ports.exchanges.list(key)]);
    if (open.length > 0) {
        return refused('exchange_busy');
    }
    const last = exchanges.find((x) => x.sessionId === session.sessionId);
    if (!last) {
        return refused('exchange_none');
    }
    if (last.askerId !== who.id && !ports.config.adminUserIds.includes(who.id)) {
        return refused('exchange_not_yours', { user: last.askerUsername });
    }
    const rows = withoutCuts(await ports.hermes.sessionMessages(session.sessionId), session.cut, session.sessionId);
    const found = findExchange(rows, last.print);
    if (!found) {
        return refused('exchange_gone');
    }
    const cut = cutOut(session, found.range);
    if (!cut) {
        return refused('exchange_limit');
    }
    // An undone thread exchange took the thread's messages it was sent with: the next turn sends the thread again.
    await ports.sessions.save(verb === 'undo' ? { ...cut, frontier: undefined } : cut);
    await ports.exchanges.markUndone(key, last.receipt);
    ports.log.info(`${verb} by ${who.id} in ${key}: exchange of turn ${last.receipt} left out (rows ${found.range[0]}–${found.range[1]}).`);
    const room = translator();
    if (verb === 'undo') {
        await ports.mark(last, last.answers[0], room('answer_undone', { user: who.username }));
        return t('command_undo_done');
    }
    const link = await ports.linkTo(last);
    const line = link ? room('answer_retried_link', { user: who.username, link }) : room('answer_retried', { user: who.username });
    const [first, ...rest] = last.answers;
    await Promise.all([
        ports.replace(last, first, ports.config.retryOldAnswer === 'remove' ? undefined : line),
        ...rest.map((id) => ports.replace(last, id, undefined)),
    ]);
    return (await ports.ask(last, found.input, who.id)) ? t('command_retry_started') : t('command_retry_refused');
}
