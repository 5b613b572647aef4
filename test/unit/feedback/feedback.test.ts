import { EngineFeedback } from '../../../src/engine/adapters/engineFeedback';
import { EngineUsage } from '../../../src/engine/adapters/engineUsage';
import { FeedbackPort, takeReaction, voteOf, Vote } from '../../../src/feedback/feedback';
import { oneLine, ownDownVote, parseWhyViewId, saveWhy, whyModal, whyPrompt, whyViewId, WHY_MAX } from '../../../src/feedback/why';
import { translator } from '../../../src/i18n/messages';
import { MemoryPersistence } from '../../support/memoryPersistence';

/** 👍 / 👎 on the bot's answers (feedback/): what counts as a vote, one per person and answer, and where it is kept. */
const BOT = 'BOT';
const NOW = 1_800_000_000_000;

function store(): { db: MemoryPersistence; feedback: EngineFeedback; usage: EngineUsage } {
    const db = new MemoryPersistence();
    return { db, feedback: new EngineFeedback(db.read, db.write), usage: new EngineUsage(db.read, db.write) };
}

/** A finished turn whose answer is message A1 (and A2), as the turn's end records it. */
async function answered(usage: EngineUsage): Promise<void> {
    await usage.record(
        '2027-01-15',
        'ALICE',
        'R1',
        { in: 10, out: 5 },
        { receipt: 'Q1', answered: true, answers: ['A1', 'A2'], sessionId: 'S1', runId: 'run_1' },
    );
}

const event = (over: Partial<Parameters<typeof takeReaction>[0]> = {}) => ({
    reaction: ':thumbsup:',
    isReacted: true,
    messageId: 'A1',
    senderId: BOT,
    marked: false,
    userId: 'BOB',
    ...over,
});

describe('what is a vote', () => {
    it('👍 and 👎 under their Rocket.Chat names and aliases; nothing else', () => {
        expect([':thumbsup:', ':+1:', ':thumbsdown:', ':-1:', ':eyes:', ':white_check_mark:', 'thumbsup', ''].map(voteOf)).toEqual([
            'up',
            'up',
            'down',
            'down',
            undefined,
            undefined,
            undefined,
            undefined,
        ]);
    });

    it('only a person’s 👍 / 👎 on an answer of the bot’s, and only answers of a turn; every other reaction reads nothing', async () => {
        const { db, feedback, usage } = store();
        await answered(usage);
        db.resetCalls();
        const ports = { botId: BOT, feedback, now: () => NOW };
        expect(await takeReaction(event({ reaction: ':eyes:' }), ports)).toBe('ignored');
        expect(await takeReaction(event({ userId: BOT }), ports)).toBe('ignored');
        expect(await takeReaction(event({ senderId: 'ALICE' }), ports)).toBe('ignored');
        expect(await takeReaction(event({ marked: true }), ports)).toBe('ignored');
        expect(db.calls).toEqual([]);
        // A message of the bot's that no turn lists as its answer (older than votes, a scheduled run's).
        expect(await takeReaction(event({ messageId: 'OTHER' }), ports)).toBe('ignored');
        expect(db.withAssociation('hermes-vote:')).toEqual([]);
    });
});

describe('one vote per person and answer', () => {
    it('recorded with the turn; the same again changes nothing; the other one replaces it; taking the other back leaves it; taking it back removes it', async () => {
        const { feedback, usage } = store();
        await answered(usage);
        const asked: Vote[] = [];
        const ports = { botId: BOT, feedback, now: () => NOW, askWhy: async (v: Vote) => void asked.push(v) };
        expect(await takeReaction(event(), ports)).toBe('recorded');
        expect(await feedback.current('A1', 'BOB')).toEqual({
            answerId: 'A1',
            turnId: 'Q1',
            userId: 'BOB',
            roomId: 'R1',
            vote: 'up',
            at: NOW,
            sessionId: 'S1',
            runId: 'run_1',
        });
        expect(await takeReaction(event(), ports)).toBe('ignored');
        expect(asked).toEqual([]);
        expect(await takeReaction(event({ reaction: ':-1:' }), { ...ports, now: () => NOW + 1 })).toBe('recorded');
        expect(asked.map((v) => [v.userId, v.vote])).toEqual([['BOB', 'down']]);
        expect(await takeReaction(event({ isReacted: false }), ports)).toBe('ignored');
        expect((await feedback.current('A1', 'BOB'))?.vote).toBe('down');
        // The second part of the same answer is a vote of its own.
        expect(await takeReaction(event({ messageId: 'A2' }), ports)).toBe('recorded');
        expect(await takeReaction(event({ reaction: ':thumbsdown:', isReacted: false }), ports)).toBe('withdrawn');
        expect(await feedback.current('A1', 'BOB')).toBeUndefined();
        expect((await feedback.current('A2', 'BOB'))?.vote).toBe('up');
    });

    it('counts a person’s newest vote per answer once (two instances may both have written one), by room or everywhere, from `since`', async () => {
        const { db, feedback } = store();
        const vote = (over: Partial<Vote>): Vote => ({ answerId: 'A1', turnId: 'Q1', userId: 'BOB', roomId: 'R1', vote: 'up', at: Date.now(), ...over });
        await feedback.put(vote({}));
        await feedback.put(vote({ userId: 'CAROL', vote: 'down' }));
        await feedback.put(vote({ answerId: 'B1', roomId: 'R2', userId: 'DAN', vote: 'down' }));
        await feedback.put(vote({ answerId: 'OLD', userId: 'EVE', at: Date.now() - 40 * 86_400_000 }));
        // A second record for Bob on A1, newer and the other way: what an interleaved change leaves.
        db.duplicate('hermes-vote:A1:BOB', { vote: 'down', at: Date.now() + 1 });
        const since = Date.now() - 30 * 86_400_000;
        expect(await feedback.counts(since, { roomId: 'R1' })).toEqual({ up: 0, down: 2 });
        expect(await feedback.counts(since, {})).toEqual({ up: 0, down: 3 });
        expect((await feedback.current('A1', 'BOB'))?.vote).toBe('down');
        await feedback.clear('A1', 'BOB');
        expect(await feedback.counts(since, { roomId: 'R1' })).toEqual({ up: 0, down: 1 });
    });
});

describe('the why after a 👎', () => {
    const port = (vote?: Partial<Vote>): Pick<FeedbackPort, 'current'> => ({
        current: async () => (vote ? ({ answerId: 'A1', turnId: 'Q1', userId: 'BOB', roomId: 'R1', vote: 'down', at: NOW, ...vote } as Vote) : undefined),
    });

    it('answers only the caller’s own 👎 on that answer in the room the request was admitted for', async () => {
        expect(await ownDownVote(port({}), 'A1', 'BOB', 'R1')).toMatchObject({ vote: 'down' });
        expect(await ownDownVote(port({ vote: 'up' }), 'A1', 'BOB', 'R1')).toBeUndefined();
        expect(await ownDownVote(port({}), 'A1', 'BOB', 'R2')).toBeUndefined();
        expect(await ownDownVote(port(), 'A1', 'BOB', 'R1')).toBeUndefined();
    });

    it('names the room and answer in its view id, and reads back only well-formed ids', () => {
        expect(parseWhyViewId(whyViewId('R1', 'A1'))).toEqual({ roomId: 'R1', answerId: 'A1' });
        expect(whyModal('R1', 'A1', translator('de')).id).toBe('hermes-feedback|R1|A1');
        for (const bad of [
            'hermes-feedback|R1|',
            'hermes-feedback|R1',
            'hermes-ask|R1|A1',
            'hermes-feedback|R 1|A1',
            'x-hermes-feedback|R1|A1',
            'hermes-feedback|R1|A1|x',
            `hermes-feedback|R1|${'x'.repeat(65)}`,
            undefined,
        ]) {
            expect(parseWhyViewId(bad)).toBeUndefined();
        }
        const prompt = whyPrompt('A1', translator('fr'));
        expect(prompt.buttons).toEqual([{ actionId: 'hermes-feedback-why', label: 'Dire pourquoi', value: 'A1' }]);
    });

    it('is a form of one single-line field whose answer the submit reads as state.why.why', () => {
        const modal = whyModal('R1', 'A1', translator('en'));
        expect(modal).toEqual({
            id: 'hermes-feedback|R1|A1',
            type: 'modal',
            title: { type: 'plain_text', text: 'What was wrong?', emoji: true },
            blocks: [
                {
                    type: 'input',
                    blockId: 'why',
                    label: { type: 'plain_text', text: 'One line about this answer', emoji: true },
                    element: { type: 'plain_text_input', actionId: 'why', multiline: false, maxLength: WHY_MAX },
                },
            ],
            submit: {
                type: 'button',
                actionId: 'submit',
                text: { type: 'plain_text', text: 'Send', emoji: true },
                style: 'primary',
                blockId: 'submit',
                appId: '',
            },
        });
        expect(whyPrompt('A1', translator('en')).text).toBe('Thanks for the 👎. What was wrong with this answer? One line helps.');
    });

    it('stores the line beside the vote, the vote itself unchanged', async () => {
        const put = jest.fn(async () => undefined);
        const vote: Vote = { answerId: 'A1', turnId: 'Q1', userId: 'BOB', roomId: 'R1', vote: 'down', at: NOW };
        await saveWhy({ put }, vote, ' too\nvague ');
        expect(put).toHaveBeenCalledWith({ ...vote, why: 'too vague' });
    });

    it('keeps one line, inert, at most WHY_MAX characters', () => {
        expect(oneLine('  wrong\n\n  version\t here ')).toBe('wrong version here');
        expect(oneLine('a\u202eb')).not.toContain('\u202e');
        expect([...oneLine('é'.repeat(WHY_MAX + 50))].length).toBeLessThanOrEqual(WHY_MAX);
    });
});
