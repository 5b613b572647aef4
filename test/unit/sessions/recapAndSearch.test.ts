import { TranscriptMessage } from '../../../src/hermes/sessionsApi';
import { personText, recap } from '../../../src/sessions/recap';
import { queryWords, transcriptHits } from '../../../src/sessions/search';
import { distinctNewestFirst, OwnedSession } from '../../../src/sessions/sessionIndex';

/** The recap on resume, the transcript search and the session list's rows, with every text written out. */

const user = (content: string | null, timestamp?: number): TranscriptMessage => ({ role: 'user', content, timestamp });
const assistant = (content: string | null, tools: string[] = []): TranscriptMessage => ({
    role: 'assistant',
    content,
    tool_calls: tools.length ? tools.map((name) => (name ? { function: { name } } : { function: {} })) : undefined,
});

describe('recap', () => {
    it('no exchange yet (nothing from the person but blanks): none', () => {
        expect(recap([], 'T')).toBeUndefined();
        expect(recap([user('   '), user(null), assistant('hello')], 'T')).toBeUndefined();
    });

    it("the last person's message and the last agent text after it, tools collapsed in order of first use", () => {
        const messages = [
            user('first question'),
            assistant('first answer'),
            user('  second   question\nwith a break  '),
            assistant(null, ['terminal', 'web_search']),
            { role: 'tool', content: 'tool output' },
            assistant('', ['terminal', '']),
            assistant('the final answer'),
            assistant('   '),
        ];
        expect(recap(messages, 'Plan')).toBe(
            [
                '*Resumed “Plan”. Where it stood:*',
                '> **You:** second question with a break',
                '> **Hermes:** [4 tool calls: terminal, web_search, tool] the final answer',
            ].join('\n'),
        );
    });

    it('a person message with no answer yet has no Hermes line; tools alone make one', () => {
        expect(recap([user('only me')], 'T')).toBe('*Resumed “T”. Where it stood:*\n> **You:** only me');
        expect(recap([user('q'), assistant(null, ['terminal'])], 'T')).toBe(
            '*Resumed “T”. Where it stood:*\n> **You:** q\n> **Hermes:** [1 tool calls: terminal]',
        );
    });

    it('cuts the person at 300 characters and the agent at 3 lines and 200 characters, with …', () => {
        const long = 'a'.repeat(350);
        const lines = ['one', 'two', 'three', 'four'].join('\n');
        const out = recap([user(long), assistant(lines)], 'T') as string;
        expect(out.split('\n')[1]).toBe(`> **You:** ${'a'.repeat(299)}…`);
        expect(out.split('\n')[2]).toBe('> **Hermes:** one two three');
        const wide = recap([user('q'), assistant('b'.repeat(201))], 'T') as string;
        expect(wide.split('\n')[2]).toBe(`> **Hermes:** ${'b'.repeat(199)}…`);
        const exact = recap([user('c'.repeat(300)), assistant('d'.repeat(200))], 'T') as string;
        expect(exact.split('\n').slice(1)).toEqual([`> **You:** ${'c'.repeat(300)}`, `> **Hermes:** ${'d'.repeat(200)}`]);
    });

    it("personText drops the app's context block, reply pointer and speaker tag, and only at the start", () => {
        expect(personText('[Rocket.Chat room]\nold\n[New message]\n[Replying to @bob: hi]\n[alice] my words')).toBe('my words');
        expect(personText('plain words [alice] inside')).toBe('plain words [alice] inside');
        expect(personText('text [Replying to x]\nmore')).toBe('text [Replying to x]\nmore');
        expect(personText(`[${'n'.repeat(81)}] too long a tag`)).toBe(`[${'n'.repeat(81)}] too long a tag`);
    });
});

describe('transcript search', () => {
    it('query words: lower-cased, split on anything but letters, digits, _ and -, two characters or more, eight at most, once each', () => {
        expect(queryWords('Deploy, the  deploy-plan! a Ö_1 x')).toEqual(['deploy', 'the', 'deploy-plan', 'ö_1']);
        expect(queryWords('a1 b2 c3 d4 e5 f6 g7 h8 i9')).toEqual(['a1', 'b2', 'c3', 'd4', 'e5', 'f6', 'g7', 'h8']);
        expect(queryWords('')).toEqual([]);
    });

    it('messages with every word, newest first, person and agent text only, as bold one-line snippets', () => {
        const hits = transcriptHits(
            [
                user('[Rocket.Chat room]\nbudget plan from the room\n[New message]\nthe *budget* for Q3', 10),
                { role: 'tool', content: 'budget q3 tool' },
                { role: 'system', content: 'budget q3' },
                assistant('Q3 budget:\nfinal | ok'),
                assistant(null),
                user('budget only'),
            ],
            ['budget', 'q3'],
        );
        expect(hits).toEqual([
            { at: undefined, role: 'assistant', snippet: '**Q3** **budget**: final ok' },
            { at: 10_000, role: 'user', snippet: 'the **budget** for **Q3**' },
        ]);
        expect(transcriptHits([user('anything')], [])).toEqual([]);
    });

    it('a snippet is 70 characters before the first word and 140 after it, … where cut; longer words bold first', () => {
        const before = 'x'.repeat(100);
        const after = 'y'.repeat(200);
        const [hit] = transcriptHits([user(`${before} deploy-plan ${after}`)], ['deploy', 'deploy-plan']);
        expect(hit.snippet).toBe(`…${'x'.repeat(69)} **deploy-plan** ${'y'.repeat(128)}…`);
        const [short] = transcriptHits([user('deploy now')], ['now', 'deploy']);
        expect(short.snippet).toBe('**deploy** **now**');
        const [special] = transcriptHits([user('cost is a+b (q3)')], ['a+b']);
        expect(special.snippet).toBe('cost is **a+b** (q3)');
    });
});

describe('the session list: one row per session', () => {
    const e = (sessionId: string, startedAt: number, autoTitle?: string): OwnedSession => ({
        sessionId,
        key: 'k',
        roomId: 'R',
        kind: 'room',
        startedAt,
        autoTitle,
    });

    it('keeps the earliest start of each session with the first title seen, newest session first', () => {
        expect(distinctNewestFirst([e('A', 5, 'later'), e('B', 3), e('A', 2), e('C', 9, 'c'), e('A', 7, 'other')])).toEqual([
            e('C', 9, 'c'),
            e('B', 3),
            e('A', 2, 'later'),
        ]);
        expect(distinctNewestFirst([e('A', 2, 'first'), e('A', 2, 'same start')])).toEqual([e('A', 2, 'first')]);
    });
});
