import { recap } from '../../../src/sessions/recap';
import { resetDue } from '../../../src/sessions/resetPolicy';
import { queryWords, transcriptHits } from '../../../src/sessions/search';
import { autoTitle, cleanTitle, lineageOf, newestOfLineage, nextInLineage } from '../../../src/sessions/titles';

describe('titles (seed 002, Title Rules)', () => {
    it('are cleaned like Hermes cleans them: no control, zero-width or direction characters, at most 100 characters, other Unicode kept', () => {
        expect(cleanTitle('  my\u200B pro\u202Eject\n\tä 🚀 ')).toBe('my project ä 🚀');
        expect([...cleanTitle('x'.repeat(99) + '🚀🚀')]).toHaveLength(100);
        expect(cleanTitle('\u0000\u2066')).toBe('');
    });

    it('a session without a title gets the first words of the asker, without the context block, mentions, links or markup', () => {
        const user =
            '[Rocket.Chat room_id: R]\n[Recent chat messages - context only, not requests]\n[x] bob: hi\n\n[New message]\n[alice] **Deploy** the @ops release to https://x.example/y please, then report back';
        expect(autoTitle(user)).toBe('Deploy the release to please, then');
        expect(autoTitle('hello world')).toBe('hello world');
        expect(autoTitle('@bob https://x.y')).toBeUndefined();
    });

    it('lineages: "my project #3" is the third of "my project"; a title names the newest of its lineage', () => {
        expect(lineageOf('my project #3')).toEqual({ base: 'my project', n: 3 });
        expect(lineageOf('#3')).toEqual({ base: '#3', n: 1 });
        expect(nextInLineage('my project')).toBe('my project #2');
        expect(nextInLineage('my project #2')).toBe('my project #3');
        const sessions = [
            { id: 'a', title: 'My Project', lastActive: 30 },
            { id: 'b', title: 'my project #3', lastActive: 10 },
            { id: 'c', title: 'my project #2', lastActive: 20 },
            { id: 'd', title: 'other', lastActive: 40 },
        ];
        expect(newestOfLineage(sessions, 'my project')?.id).toBe('b');
        expect(newestOfLineage(sessions, 'my project #2')?.id).toBe('b');
        expect(newestOfLineage(sessions, 'nothing')).toBeUndefined();
    });
});

describe('reset policy', () => {
    const T = Date.parse('2026-12-01T10:00:00Z');
    const opts = { idleMinutes: 60, resetHour: 4, timeZone: 'Europe/Berlin' };

    it('none never; idle after the idle time; a session without activity recorded never', () => {
        expect(resetDue(T - 10 * 3600_000, T, { ...opts, mode: 'none' })).toBeUndefined();
        expect(resetDue(T - 60 * 60_000, T, { ...opts, mode: 'idle' })).toBe('idle');
        expect(resetDue(T - 59 * 60_000, T, { ...opts, mode: 'idle' })).toBeUndefined();
        expect(resetDue(undefined, T, { ...opts, mode: 'both' })).toBeUndefined();
    });

    it('daily at the hour in the time zone: 04:00 in Berlin is 03:00 UTC in winter, 02:00 UTC in summer', () => {
        expect(resetDue(Date.parse('2026-12-01T02:59:00Z'), T, { ...opts, mode: 'daily' })).toBe('daily');
        expect(resetDue(Date.parse('2026-12-01T03:01:00Z'), T, { ...opts, mode: 'daily' })).toBeUndefined();
        expect(resetDue(Date.parse('2026-12-01T02:59:00Z'), Date.parse('2026-12-01T02:59:30Z'), { ...opts, mode: 'daily' })).toBeUndefined();
        expect(resetDue(Date.parse('2026-07-01T01:59:00Z'), Date.parse('2026-07-01T02:00:00Z'), { ...opts, mode: 'daily' })).toBe('daily');
        expect(resetDue(Date.parse('2026-07-01T02:01:00Z'), Date.parse('2026-07-02T01:59:00Z'), { ...opts, mode: 'daily' })).toBeUndefined();
    });

    it('both: whichever comes first', () => {
        expect(resetDue(Date.parse('2026-12-01T02:59:00Z'), Date.parse('2026-12-01T03:30:00Z'), { ...opts, mode: 'both' })).toBe('daily');
        expect(resetDue(Date.parse('2026-12-01T05:00:00Z'), T, { ...opts, mode: 'both' })).toBe('idle');
    });
});

describe('recap on resume (seed 002, Conversation Recap on Resume)', () => {
    it('the last exchange, long messages cut, tool calls collapsed, tool results and the context block left out', () => {
        const text = recap(
            [
                { role: 'user', content: 'first question' },
                { role: 'assistant', content: 'first answer' },
                { role: 'user', content: `[Rocket.Chat room_id: R]\n\n[New message]\n${'why? '.repeat(100)}` },
                { role: 'assistant', content: null, tool_calls: [{ function: { name: 'terminal' } }, { function: { name: 'web_search' } }] },
                { role: 'tool', content: 'SECRET TOOL OUTPUT', tool_name: 'terminal' },
                { role: 'assistant', content: null, tool_calls: [{ function: { name: 'terminal' } }] },
                { role: 'assistant', content: 'line one\nline two\nline three\nline four' },
            ],
            'my project',
        ) as string;
        const lines = text.split('\n');
        expect(lines[0]).toBe('*Resumed “my project”. Where it stood:*');
        expect(lines[1].startsWith('> **You:** why? why?')).toBe(true);
        expect(lines[1].length).toBeLessThanOrEqual('> **You:** '.length + 300);
        expect(lines[1].endsWith('…')).toBe(true);
        expect(lines[2]).toBe('> **Hermes:** [3 tool calls: terminal, web_search] line one line two line three');
        expect(text).not.toContain('SECRET');
        expect(text).not.toContain('first');
        expect(recap([{ role: 'assistant', content: 'hi' }], 'x')).toBeUndefined();
    });
});

describe('search over a transcript', () => {
    it('messages holding every word, newest first, one line each with the words in bold; the context block is not the person’s text', () => {
        const hits = transcriptHits(
            [
                {
                    role: 'user',
                    content: '[Rocket.Chat room_id: R]\n[Recent chat messages - context only, not requests]\n[x] bob: deploy staging\n\n[New message]\nhello',
                    timestamp: 1,
                },
                { role: 'user', content: 'Please *deploy* to staging\nnow', timestamp: 2 },
                { role: 'tool', content: 'deploy staging', timestamp: 3 },
                { role: 'assistant', content: 'Staging deploy done.', timestamp: 4 },
            ],
            queryWords('Deploy, staging!'),
        );
        expect(hits).toEqual([
            { at: 4000, role: 'assistant', snippet: '**Staging** **deploy** done.' },
            { at: 2000, role: 'user', snippet: 'Please **deploy** to **staging** now' },
        ]);
        expect(queryWords('a b cd cd')).toEqual(['cd']);
    });
});
