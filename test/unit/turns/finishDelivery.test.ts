import { finish } from '../../../src/turns/finish';
import { TEST_CONFIG } from '../../support/turnPorts';
import { answer, failPosts, leaseWrites, paragraphs, runningTurn } from '../../support/finishTurn';

/**
 * Finishing a turn: what its outcome becomes before it is posted (an approval chat completions
 * could not ask for, what changed about the session, the usage footer), what is fixed and saved
 * before the first part goes out, private answers and their "Post to thread" button, and a room
 * that refuses the bot.
 */

const dm = { kind: 'dm', roomType: 'd' } as const;
const CHAT_APPROVAL_TAIL =
    'Approvals need the runs transport: over chat completions (`hermes_transport: chat`) Hermes cannot ask. An admin can set `hermes_transport` to `runs`.';

describe('an approval Hermes wanted over chat completions', () => {
    const pending = (fields: Record<string, unknown>) => JSON.stringify({ approval_pending: true, ...fields });

    it('is told as a notice with the command and its description on one quoted line', async () => {
        const env = await runningTurn({ ...dm, transport: 'chat' });
        await finish(env.rec, answer(pending({ command: 'rm -rf /tmp/x', description: '  Delete\n\n  the   temp dir  ' })), env.ports);
        expect(env.chat.visible().map((m) => [m.kind, m.text])).toEqual([
            [
                'notice',
                `:lock: Hermes wanted to run a command that needs approval, and did not run it:\n\`\`\`\nrm -rf /tmp/x\n\`\`\`\n> Delete the temp dir\n${CHAT_APPROVAL_TAIL}`,
            ],
        ]);
        expect(env.logs).toContain(`Turn message ${env.rec.id} in room R1 needed an approval, which chat completions cannot ask for; the asker is told.`);
    });

    it('leaves the description line out when there is none', async () => {
        const env = await runningTurn({ ...dm, transport: 'chat' });
        await finish(env.rec, answer(pending({ command: 'ls' })), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual([
            `:lock: Hermes wanted to run a command that needs approval, and did not run it:\n\`\`\`\nls\n\`\`\`\n${CHAT_APPROVAL_TAIL}`,
        ]);
    });

    it('says so without a command when the answer does not have it', async () => {
        const env = await runningTurn({ ...dm, transport: 'chat' });
        await finish(env.rec, answer(pending({})), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual([
            `:lock: Hermes wanted to run a command that needs approval, and did not run it. ${CHAT_APPROVAL_TAIL}`,
        ]);
    });

    it('is an ordinary answer over the runs transport', async () => {
        const env = await runningTurn({ ...dm, transport: 'runs' });
        const text = pending({ command: 'ls' });
        await finish(env.rec, answer(text), env.ports);
        expect(env.chat.visible().map((m) => [m.kind, m.text])).toEqual([['answer', '{"approval_pending":true,"command":"ls"}']]);
        expect(env.logs.some((l) => l.includes('needed an approval'))).toBe(false);
    });
});

describe('what the answer opens with', () => {
    it("the thread's name, the automatic reset and the recap, in that order, each once", async () => {
        const env = await runningTurn({ ...dm, threadName: 'Release plan', autoReset: 'idle', recap: 'We were comparing two designs.' });
        await finish(env.rec, answer('Here it is.'), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual([
            '**Release plan**\n\n_New session: the previous one had been idle longer than the configured time._\n\nWe were comparing two designs.\n\nHere it is.',
        ]);
    });

    it('the daily reset alone', async () => {
        const env = await runningTurn({ ...dm, autoReset: 'daily' });
        await finish(env.rec, answer('Morning.'), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['_New session: sessions start over daily at the configured hour._\n\nMorning.']);
    });

    it('nothing more when the session did not change', async () => {
        const env = await runningTurn(dm);
        await finish(env.rec, answer('Plain.'), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['Plain.']);
    });
});

describe('the usage footer', () => {
    it("ends the answer with the run's tokens when usage_footer is on", async () => {
        const env = await runningTurn(dm, { config: { ...TEST_CONFIG, usageFooter: true } });
        await finish(env.rec, answer('Done.', { usage: { in: 1234, out: 340 } }), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['Done.\n\n_tokens 1.2k in / 340 out_']);
    });

    it('is left out when Hermes reported no usage, or the setting is off', async () => {
        const unknown = await runningTurn(dm, { config: { ...TEST_CONFIG, usageFooter: true } });
        await finish(unknown.rec, answer('Done.'), unknown.ports);
        expect(unknown.chat.answers().map((m) => m.text)).toEqual(['Done.']);

        const off = await runningTurn(dm);
        await finish(off.rec, answer('Done.', { usage: { in: 1234, out: 340 } }), off.ports);
        expect(off.chat.answers().map((m) => m.text)).toEqual(['Done.']);
    });
});

describe('the delivery fixed before the first part is posted', () => {
    it('is written with the lease: parts, nothing posted yet, when it started and what the log will say', async () => {
        const answered = await runningTurn(dm);
        const answerWrites = leaseWrites(answered.ports);
        await finish(answered.rec, answer('hi'), answered.ports);
        expect(answerWrites[0].delivery).toEqual({ kind: 'answer', parts: ['hi'], posted: [], startedAt: answered.sched.time, summary: 'answered' });

        const failed = await runningTurn(dm);
        const failedWrites = leaseWrites(failed.ports);
        await finish(failed.rec, { kind: 'failed', failure: 'notice_unreachable', detail: 'ECONNREFUSED' }, failed.ports);
        expect(failedWrites[0].delivery).toEqual({
            kind: 'notice',
            parts: [':warning: Hermes could not be reached. Please try again in a moment.'],
            posted: [],
            startedAt: failed.sched.time,
            summary: 'ended with a notice',
        });
    });

    it('is saved before the first part goes out in the message event when there are several parts', async () => {
        const env = await runningTurn(dm, { server: async () => ({ maxMessageSize: 120, siteUrl: '' }) });
        let atFirstPost: unknown;
        const post = env.chat.post.bind(env.chat);
        env.chat.post = async (...args) => {
            atFirstPost ??= env.store.records.get(env.rec.id)?.delivery;
            return post(...args);
        };
        await finish(env.rec, answer(paragraphs(3, 100).join('\n\n')), env.ports, true);
        expect(atFirstPost).toEqual({ kind: 'answer', parts: paragraphs(3, 100), posted: [], startedAt: env.sched.time, summary: 'answered' });
        expect(env.chat.answers().map((m) => m.text)).toEqual(paragraphs(3, 100));
    });

    it('costs no write in the message event when it is a single part', async () => {
        const env = await runningTurn(dm);
        expect(env.store.saves).toBe(1);
        await finish(env.rec, answer('hi'), env.ports, true);
        expect(env.store.saves).toBe(1);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['hi']);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });
});

describe('a private answer', () => {
    it('is whispered to its reader as it is, with no quote of the question and nothing in the room', async () => {
        const env = await runningTurn(
            { privateTo: 'U1', roomName: 'general' },
            { server: async () => ({ maxMessageSize: 5000, siteUrl: 'https://chat.example.com' }) },
        );
        await finish(env.rec, answer('hello'), env.ports);
        expect(env.chat.whispers).toEqual([{ userId: 'U1', text: 'hello', buttons: undefined }]);
        expect(env.chat.messages).toEqual([]);
    });

    it('records each whispered part before the next one', async () => {
        const env = await runningTurn({ privateTo: 'U1' }, { server: async () => ({ maxMessageSize: 120, siteUrl: '' }) });
        const recorded: unknown[] = [];
        const whisper = env.chat.whisper.bind(env.chat);
        env.chat.whisper = async (...args) => {
            recorded.push(env.store.records.get(env.rec.id)?.delivery?.posted);
            return whisper(...args);
        };
        await finish(env.rec, answer(paragraphs(3, 100).join('\n\n')), env.ports);
        expect(recorded).toEqual([[], ['private-0'], ['private-0', 'private-1']]);
    });

    it("of a thread summary offers to post it, on its last part, with the whole summary's text kept", async () => {
        const kept: string[] = [];
        const env = await runningTurn(
            { privateTo: 'U1', offerPost: true },
            {
                server: async () => ({ maxMessageSize: 120, siteUrl: '' }),
                keepSummary: async (_rec, text) => {
                    kept.push(text);
                    return 'summary-7';
                },
            },
        );
        const [first, second] = paragraphs(2, 100);
        await finish(env.rec, answer(`${first}\n\n${second}`), env.ports);
        expect(env.chat.whispers).toEqual([
            { userId: 'U1', text: first, buttons: undefined },
            {
                userId: 'U1',
                text: second,
                buttons: { text: second, buttons: [{ actionId: 'hermes-post-summary', label: 'Post to thread', value: 'summary-7', style: 'primary' }] },
            },
        ]);
        expect(kept).toEqual([`${first}\n\n${second}`]);
    });

    it('offers nothing for an answer that is not a summary, nor without a place to keep it, nor for a notice', async () => {
        const two = paragraphs(2, 100);
        const small = async () => ({ maxMessageSize: 120, siteUrl: '' });
        const keepSummary = async () => 'summary-7';

        const plain = await runningTurn({ privateTo: 'U1' }, { server: small, keepSummary });
        await finish(plain.rec, answer(two.join('\n\n')), plain.ports);
        expect(plain.chat.whispers.map((w) => [w.text, w.buttons])).toEqual([
            [two[0], undefined],
            [two[1], undefined],
        ]);

        const nowhere = await runningTurn({ privateTo: 'U1', offerPost: true }, { server: small });
        await finish(nowhere.rec, answer(two.join('\n\n')), nowhere.ports);
        expect(nowhere.chat.whispers.map((w) => [w.text, w.buttons])).toEqual([
            [two[0], undefined],
            [two[1], undefined],
        ]);

        let keptNotice = false;
        const stopped = await runningTurn(
            { privateTo: 'U1', offerPost: true },
            {
                keepSummary: async () => {
                    keptNotice = true;
                    return 'summary-7';
                },
            },
        );
        await finish(stopped.rec, { kind: 'stopped', by: 'bob' }, stopped.ports);
        expect(stopped.chat.whispers).toEqual([{ userId: 'U1', text: ':stop_button: Stopped by @bob.', buttons: undefined }]);
        expect(keptNotice).toBe(false);
    });
});

describe('a room that refuses the bot', () => {
    it('tells the asker privately instead of posting a notice there', async () => {
        const env = await runningTurn(dm);
        failPosts(env.chat, [new Error('error-not-allowed')]);
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.chat.visible()).toEqual([]);
        expect(env.chat.whispers).toEqual([
            {
                userId: 'U1',
                text: "The answer could not be posted here: the server refused the bot's message (the room is read-only, the bot is muted or blocked, or the room is encrypted).",
                buttons: undefined,
            },
        ]);
        expect(env.logs).toContain(`Posting part 1 of 1 for message ${env.rec.id} in room R1 failed: error-not-allowed`);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });

    it('logs an asker who could not be told either, and ends the turn', async () => {
        const env = await runningTurn(dm);
        failPosts(env.chat, [new Error('You_have_been_muted')]);
        env.chat.whisper = async () => Promise.reject(new Error('no such user'));
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.chat.visible()).toEqual([]);
        expect(env.logs).toContain(`The asker of message ${env.rec.id} in room R1 could not be told either.`);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });
});
