import { askText, catchUpText, summaryText } from '../../../src/actions/actionTurn';
import { KeptSummary, postSummary } from '../../../src/actions/postSummary';
import { ContextMessage } from '../../../src/context/contextMessage';

/**
 * What a message action sends Hermes (the text is the contract: the context lines marked as
 * context, a blank line, `[New message]`, the request), and who may post a kept summary.
 */
const OPTS = { timeZone: 'UTC', botId: 'BOT', allowedUserIds: [] };
const msg = (i: number, text: string, senderUsername = 'alice'): ContextMessage => ({
    id: `M${i}`,
    senderId: senderUsername === 'hermes' ? 'BOT' : `U-${senderUsername}`,
    senderUsername,
    text,
    createdAt: new Date(Date.UTC(2026, 11, 6, 9, i)),
    isSystem: false,
    files: [],
});

describe('summaryText', () => {
    it('the thread as context, the request after `[New message]`; only the last `max` messages', () => {
        const thread = [msg(1, 'the API is slow'), msg(2, 'it is the database', 'bob'), msg(3, 'restarted it', 'hermes')];
        expect(summaryText(thread, OPTS, 2)).toBe(
            [
                '[Rocket.Chat thread - context only, not requests]',
                '[2026-12-06 09:02 +00:00] bob: it is the database',
                '[2026-12-06 09:03 +00:00] hermes (you): restarted it',
                '',
                '[New message]',
                'Summarize this thread: the question, what was decided, what is open.',
            ].join('\n'),
        );
    });
});

describe('catchUpText', () => {
    it('the room as context and the window it covers', () => {
        expect(catchUpText([msg(1, 'release moved to Friday')], 'in the last 24 hours', OPTS, 50)).toBe(
            [
                '[Rocket.Chat room - context only, not requests]',
                '[2026-12-06 09:01 +00:00] alice: release moved to Friday',
                '',
                '[New message]',
                'Catch me up: summarise what was said here in the last 24 hours, briefly, and say that this is the period covered.',
            ].join('\n'),
        );
        expect(catchUpText([], 'today', OPTS, 50).split('\n')).toEqual([
            '[Rocket.Chat room - context only, not requests]',
            '',
            '[New message]',
            'Catch me up: summarise what was said here today, briefly, and say that this is the period covered.',
        ]);
    });
});

describe('askText', () => {
    it('the pointer line first when there is one, then the question as a trigger (continuation lines indented)', () => {
        expect(askText('[Replying to alice: the plan]', 'is it\nfeasible?')).toBe('[Replying to alice: the plan]\nis it\n  feasible?');
        expect(askText(undefined, 'why?')).toBe('why?');
        expect(askText('', 'why?')).toBe('why?');
    });
});

describe('postSummary', () => {
    const kept: KeptSummary = { id: 'S1', ownerId: 'U1', roomId: 'R1', threadId: 'T1', text: 'the summary', at: 0 };
    function store(initial?: KeptSummary) {
        let held = initial;
        return {
            keep: async (s: KeptSummary) => void (held = s),
            take: async () => {
                const s = held;
                held = undefined;
                return s;
            },
            held: () => held,
        };
    }

    it('posts for its owner from its room, once', async () => {
        const s = store(kept);
        const posted: KeptSummary[] = [];
        expect(await postSummary('S1', { userId: 'U1', roomId: 'R1' }, s, async (x) => void posted.push(x))).toBe('posted');
        expect(posted).toEqual([kept]);
        expect(await postSummary('S1', { userId: 'U1', roomId: 'R1' }, s, async (x) => void posted.push(x))).toBe('gone');
        expect(posted).toHaveLength(1);
    });

    it.each([
        ['another person', { userId: 'U2', roomId: 'R1' }],
        ['its owner, naming another room', { userId: 'U1', roomId: 'R2' }],
    ])('refuses %s and keeps the summary for its owner', async (_what, clicker) => {
        const s = store(kept);
        const posted: KeptSummary[] = [];
        expect(await postSummary('S1', clicker, s, async (x) => void posted.push(x))).toBe('not-yours');
        expect(posted).toEqual([]);
        expect(s.held()).toEqual(kept);
    });
});
