import { exchangeCommand, ExchangeCommandPorts } from '../../../src/commands/exchangeCommands';
import { HermesClient } from '../../../src/hermes/client';
import { Exchange, inputPrint, TranscriptRow } from '../../../src/sessions/exchanges';
import { freshRecord } from '../../../src/sessions/sessionRecord';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { MemorySessions } from '../../support/turnPorts';

/*
 * The rules of `/hermes retry` and `undo` over in-memory ports; what Hermes then receives is
 * shown end to end in test/e2e/retryUndo.test.ts.
 */
const KEY = 'agent:main:rocketchat:dm:R1';
const alice = { id: 'U1', username: 'alice' };
const bob = { id: 'U2', username: 'bob' };
const session = freshRecord(KEY);

const transcript: TranscriptRow[] = [
    { id: 1, role: 'user', content: 'first' },
    { id: 2, role: 'assistant', content: 'one' },
    { id: 3, role: 'user', content: 'second' },
    { id: 4, role: 'assistant', content: 'two' },
];

function exchange(over: Partial<Exchange> = {}): Exchange {
    return {
        key: KEY,
        receipt: 'M2',
        question: 'M2',
        askerId: alice.id,
        askerUsername: alice.username,
        roomId: 'R1',
        answers: ['A2', 'A2b'],
        sessionId: session.sessionId,
        print: inputPrint('second'),
        at: 2,
        ...over,
    };
}

function world(
    over: { exchanges?: Exchange[]; open?: TurnRecord[]; rows?: TranscriptRow[]; caps?: { runs: boolean; runsLoadHistory: boolean }; ask?: boolean } = {},
) {
    const sessions = new MemorySessions();
    const calls: string[] = [];
    const lines: string[] = [];
    const ports: ExchangeCommandPorts = {
        config: { adminUserIds: ['ADMIN'], hermesTransport: 'auto', retryOldAnswer: 'edit' },
        hermes: {
            sessionMessages: async (id: string) => {
                calls.push(`transcript ${id}`);
                return over.rows ?? transcript;
            },
        } as unknown as HermesClient,
        capabilities: async () => ({ runs: true, runsLoadHistory: false, ...over.caps }),
        sessions,
        turns: { openInSession: async (key: string) => (over.open ?? []).filter((r) => r.sessionKey === key) },
        exchanges: {
            list: async () => over.exchanges ?? [exchange()],
            markUndone: async (key, receipt) => void calls.push(`undone ${key} ${receipt}`),
        },
        replace: async (_x, id, text) => void calls.push(text === undefined ? `remove ${id}` : `edit ${id}: ${text}`),
        mark: async (_x, id, line) => void calls.push(`mark ${id}: ${line}`),
        linkTo: async (x) => `https://chat.example/direct/R1?msg=${x.question}`,
        ask: async (x, input, callerId) => {
            calls.push(`ask ${x.receipt} "${input}" for ${callerId}`);
            return over.ask ?? true;
        },
        log: { info: (l: string) => lines.push(l), warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l) } as never,
    };
    return { ports, sessions, calls, lines };
}

describe('retry', () => {
    it('leaves the exchange out, edits the first answer part into the retried line, removes the rest and asks the same text again', async () => {
        const w = world();
        expect(await exchangeCommand('retry', alice, KEY, w.ports)).toBe(':repeat: Asking the last question again; Hermes no longer has the previous answer.');
        expect(w.sessions.records.get(KEY)?.cut).toEqual({ sessionId: session.sessionId, ranges: [[3, 4]] });
        expect(w.calls).toEqual([
            `transcript ${session.sessionId}`,
            `undone ${KEY} M2`,
            'edit A2: :repeat: _Retried by @alice: [the question](https://chat.example/direct/R1?msg=M2) was asked again._',
            'remove A2b',
            'ask M2 "second" for U1',
        ]);
        expect(w.lines).toEqual([`retry by U1 in ${KEY}: exchange of turn M2 left out (rows 3–4).`]);
    });

    it('with retry_old_answer remove, removes every part; without a link, says it plainly', async () => {
        const w = world();
        w.ports.config = { ...w.ports.config, retryOldAnswer: 'remove' };
        await exchangeCommand('retry', alice, KEY, w.ports);
        expect(w.calls.filter((c) => c.startsWith('remove') || c.startsWith('edit'))).toEqual(['remove A2', 'remove A2b']);
        const plain = world();
        plain.ports.linkTo = async () => undefined;
        await exchangeCommand('retry', alice, KEY, plain.ports);
        expect(plain.calls).toContain('edit A2: :repeat: _Retried by @alice: the question was asked again._');
    });

    it('keeps a thread frontier (the question goes again with its block) and says so when the new turn was refused', async () => {
        const w = world({ ask: false });
        await w.sessions.save({ ...session, frontier: { at: 5, id: 'T', held: [] } });
        expect(await exchangeCommand('retry', alice, KEY, w.ports)).toBe(
            'The last exchange was taken out of the conversation, but the question could not be asked again (you were told why).',
        );
        expect(w.sessions.records.get(KEY)?.frontier).toEqual({ at: 5, id: 'T', held: [] });
    });

    it("an admin may retry what someone else asked; the new turn is still the asker's, the refusal text the caller's", async () => {
        const w = world();
        expect(await exchangeCommand('retry', { id: 'ADMIN', username: 'root' }, KEY, w.ports)).toMatch(/^:repeat: Asking/);
        expect(w.calls).toContain('ask M2 "second" for ADMIN');
        expect(w.calls.find((c) => c.startsWith('edit'))).toContain('Retried by @root');
    });
});

describe('undo', () => {
    it('leaves the exchange out, forgets the thread frontier and marks the first answer part', async () => {
        const w = world();
        await w.sessions.save({ ...session, frontier: { at: 5, id: 'T', held: [] } });
        expect(await exchangeCommand('undo', alice, KEY, w.ports)).toBe(
            ':leftwards_arrow_with_hook: Undone: Hermes no longer has the last exchange of this conversation.',
        );
        const saved = w.sessions.records.get(KEY);
        expect(saved?.cut?.ranges).toEqual([[3, 4]]);
        expect(saved?.frontier).toBeUndefined();
        expect(w.calls.slice(1)).toEqual([`undone ${KEY} M2`, 'mark A2: :leftwards_arrow_with_hook: _Undone by @alice: Hermes no longer has this exchange._']);
    });

    it('reads the transcript without the exchanges already left out', async () => {
        const w = world({ exchanges: [exchange({ print: inputPrint('first'), receipt: 'M1', answers: ['A1'] })] });
        await w.sessions.save({ ...session, cut: { sessionId: session.sessionId, ranges: [[3, 4]] } });
        await exchangeCommand('undo', alice, KEY, w.ports);
        expect(w.sessions.records.get(KEY)?.cut?.ranges).toEqual([
            [3, 4],
            [1, 2],
        ]);
    });
});

describe('refusals, each changing nothing', () => {
    const refusals: Array<[string, Parameters<typeof world>[0], { id: string; username: string }, string, string]> = [
        [
            'a server whose runs load their own history',
            { caps: { runs: true, runsLoadHistory: true } },
            alice,
            'Retry and undo are not available with this Hermes server: it keeps the conversation history itself and offers no way to take an exchange out of it.',
            'exchange_unsupported',
        ],
        [
            'a server with chat completions only',
            { caps: { runs: false, runsLoadHistory: false } },
            alice,
            'Retry and undo are not available with this Hermes server: it keeps the conversation history itself and offers no way to take an exchange out of it.',
            'exchange_unsupported',
        ],
        [
            'a turn of the conversation open',
            { open: [{ sessionKey: KEY } as TurnRecord] },
            alice,
            'Hermes is still working on a message here. Wait for the answer (or use `/hermes stop`), then try again.',
            'exchange_busy',
        ],
        ['no exchange', { exchanges: [] }, alice, 'There is no answered exchange in this conversation to retry or undo.', 'exchange_none'],
        [
            'only an exchange of the session before /new',
            { exchanges: [exchange({ sessionId: 'rc_old_g0' })] },
            alice,
            'There is no answered exchange in this conversation to retry or undo.',
            'exchange_none',
        ],
        ['someone else asked it', {}, bob, 'Only @alice, who asked it, or an admin can retry or undo the last exchange here.', 'exchange_not_yours'],
        [
            'Hermes no longer holds it as sent',
            { rows: transcript.slice(0, 2) },
            alice,
            'Hermes no longer holds the last exchange as it was sent (it may have condensed the conversation), so nothing was changed.',
            'exchange_gone',
        ],
    ];

    it.each(refusals)('%s', async (_what, over, who, text, reason) => {
        for (const verb of ['retry', 'undo'] as const) {
            const w = world(over);
            expect(await exchangeCommand(verb, who, KEY, w.ports)).toBe(text);
            expect(w.sessions.records.size).toBe(0);
            expect(w.calls.filter((c) => !c.startsWith('transcript'))).toEqual([]);
            expect(w.lines).toEqual([`${verb} by ${who.id} in ${KEY} refused (${reason}).`]);
        }
    });

    it('the transport setting chat refuses even where runs are offered', async () => {
        const w = world();
        w.ports.config = { ...w.ports.config, hermesTransport: 'chat' };
        expect(await exchangeCommand('undo', alice, KEY, w.ports)).toMatch(/^Retry and undo are not available/);
    });

    it('a session with as many exchanges left out as it may hold', async () => {
        const w = world();
        const ranges = Array.from({ length: 100 }, (_, i) => [100 + i, 100 + i] as [number, number]);
        await w.sessions.save({ ...session, cut: { sessionId: session.sessionId, ranges } });
        expect(await exchangeCommand('undo', alice, KEY, w.ports)).toBe(
            'Too many exchanges of this conversation were undone. Start a new conversation with `/hermes new`.',
        );
        expect(w.sessions.records.get(KEY)?.cut?.ranges).toHaveLength(100);
        expect(w.calls.filter((c) => !c.startsWith('transcript'))).toEqual([]);
    });

    it("answers in the caller's language; the lines in the room are in the server's", async () => {
        const w = world();
        w.ports.language = 'de';
        expect(await exchangeCommand('undo', alice, KEY, w.ports)).toMatch(/^:leftwards_arrow_with_hook: Rückgängig gemacht/);
        expect(w.calls.find((c) => c.startsWith('mark'))).toContain('Undone by @alice');
    });
});
