import { LiveTurn } from '../../../src/hermes/liveTurn';
import { finish } from '../../../src/turns/finish';
import {
    afterFrozen,
    dropStream,
    findStreamPost,
    freezeStream,
    hasWords,
    showStream,
    streamedInto,
    streamEditMs,
    streams,
} from '../../../src/turns/streamAnswer';
import { TEST_CONFIG } from '../../support/turnPorts';
import { answer, runningTurn } from '../../support/finishTurn';

/**
 * stream_answers (turns/streamAnswer.ts) on the memory ports: what each look shows, how often
 * it edits, the split into parts, an approval mid-answer, refusals, and the final edit by
 * finish.ts. Texts are written out: the cursor is " ▉".
 */

const dm = { kind: 'dm', roomType: 'd' } as const;
const config = { ...TEST_CONFIG, streamAnswers: true, streamEditSeconds: '1.5' as const };

function live(text: string, over: Partial<LiveTurn> = {}): LiveTurn {
    return { kind: 'run-events', tools: [], toolsDropped: 0, text, truncated: false, done: false, abort: new AbortController(), ...over };
}

async function streaming(over = {}, server = { maxMessageSize: 5000, siteUrl: '' }) {
    const env = await runningTurn({ ...dm, ...over }, { config, server: async () => server });
    return env;
}

describe('which answers stream', () => {
    it('rooms and DMs when the setting is on; never a private answer or a scheduled prompt', () => {
        expect(streams({}, { streamAnswers: true })).toBe(true);
        expect(streams({}, { streamAnswers: false })).toBe(false);
        expect(streams({ privateTo: 'U1' }, { streamAnswers: true })).toBe(false);
        expect(streams({ cron: { jobId: 'j', name: 'n' } }, { streamAnswers: true })).toBe(false);
    });

    it('edits at most once per stream_edit_seconds, never under a second', () => {
        expect(streamEditMs({ streamEditSeconds: '1.5' })).toBe(1_500);
        expect(streamEditMs({ streamEditSeconds: '5' })).toBe(5_000);
        expect(streamEditMs({ streamEditSeconds: '0.2' as never })).toBe(1_000);
        expect(streamEditMs({ streamEditSeconds: 'x' as never })).toBe(1_500);
    });
});

describe('a look at a streaming answer', () => {
    it('posts the first whole words at once, marked so a crash can find it, saving before the post', async () => {
        const env = await streaming();
        const savedBefore: unknown[] = [];
        env.chat.afterNextPost = () => savedBefore.push(env.store.records.get(env.rec.id)?.stream);
        expect(await showStream(env.rec, live('Hello wor'), env.ports)).toBe(true);
        expect(env.chat.visible().map((m) => [m.text, m.mark])).toEqual([['Hello ▉', { kind: 'status', turnId: env.rec.id }]]);
        expect(savedBefore).toEqual([{ ids: [], frozen: 0, cut: 0, posting: true }]);
        expect(env.rec.stream).toEqual({ ids: ['m1'], frozen: 0, cut: 0 });
    });

    it('shows nothing while there is no whole word', async () => {
        const env = await streaming();
        expect(await showStream(env.rec, live('Hel'), env.ports)).toBe(true);
        expect(env.chat.visible()).toEqual([]);
        expect(env.rec.stream).toEqual({ ids: [], frozen: 0, cut: 0 });
    });

    it('edits no sooner than the interval after the last edit, and only when the text changed', async () => {
        const env = await streaming();
        await showStream(env.rec, live('One two '), env.ports);
        env.sched.time += 1_499;
        expect(await showStream(env.rec, live('One two three four '), env.ports)).toBe(false);
        expect(env.chat.edits).toBe(0);
        env.sched.time += 1;
        await showStream(env.rec, live('One two three four '), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['One two three four ▉']);
        expect(env.chat.edits).toBe(1);
        env.sched.time += 5_000;
        await showStream(env.rec, live('One two three four fi'), env.ports);
        expect(env.chat.edits).toBe(1);
    });

    it('never shows a half-typed mention or a MEDIA: tag', async () => {
        const env = await streaming();
        await showStream(env.rec, live('Ask @ali'), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['Ask ▉']);
        env.sched.time += 2_000;
        await showStream(env.rec, live('Ask @alice about it.\nMEDIA:/tmp/chart.png\nDone '), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['Ask @alice about it.\nDone ▉']);
    });

    it('removes the status message and posts the words as a new message (a post notifies; an edit would not)', async () => {
        const env = await streaming();
        const status = await env.chat.post({ roomId: 'R1' }, 'Working…', 'status', { turnId: env.rec.id });
        env.rec.statusMessageId = status;
        env.rec.statusPosting = true;
        await showStream(env.rec, live('First words '), env.ports);
        expect(env.chat.visible().map((m) => [m.id, m.text])).toEqual([['m2', 'First words ▉']]);
        expect(env.rec.statusMessageId).toBeUndefined();
        expect(env.rec.statusPosting).toBeUndefined();
        expect(env.rec.stream?.ids).toEqual(['m2']);
    });

    it('below an approval message too: the answer comes after the approval', async () => {
        const env = await streaming();
        const status = await env.chat.post({ roomId: 'R1' }, 'Working…', 'status', { turnId: env.rec.id });
        const approval = await env.chat.post({ roomId: 'R1' }, 'Approve?', 'approval', { turnId: env.rec.id });
        env.rec.statusMessageId = status;
        env.rec.approval = {
            messageId: approval,
            request: { command: 'ls', description: '', choices: ['once', 'deny'], allowPermanent: false },
            number: 1,
            closed: true,
        };
        await showStream(env.rec, live('Done it '), env.ports);
        expect(env.chat.visible().map((m) => [m.id, m.text])).toEqual([
            [approval, 'Approve?'],
            ['m3', 'Done it ▉'],
        ]);
    });

    it('goes on when the status message cannot be removed, and says so', async () => {
        const env = await streaming();
        env.rec.statusMessageId = await env.chat.post({ roomId: 'R1' }, 'Working…', 'status', { turnId: env.rec.id });
        env.chat.remove = async () => {
            throw new Error('chat down');
        };
        await showStream(env.rec, live('Words '), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['Working…', 'Words ▉']);
        expect(env.logs).toContain(`Status message of turn message ${env.rec.id} in room R1 could not be removed: chat down`);
    });

    it('opens with the quote of the question in a room, and what changed about the session', async () => {
        const env = await streaming(
            { kind: 'room', roomType: 'c', roomName: 'general', threadName: 'Deploys' },
            { maxMessageSize: 5000, siteUrl: 'https://chat.example' },
        );
        await showStream(env.rec, live('It went fine '), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual([
            `[ ](https://chat.example/channel/general?msg=${env.rec.id}) @alice **Deploys**\n\nIt went fine ▉`,
        ]);
    });

    it('finishes a part that outgrew the limit and goes on in a new message', async () => {
        const env = await streaming({}, { maxMessageSize: 60, siteUrl: '' });
        const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');
        await showStream(env.rec, live(`${words(5)} `), env.ports);
        env.sched.time += 1_500;
        await showStream(env.rec, live(`${words(14)} `), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['word0 word1 word2 word3 word4 word5 word6 word7 word8 word9', 'word10 word11 word12 word13 ▉']);
        expect(env.rec.stream?.ids).toEqual(['m1', 'm2']);
    });

    it('leaves the cursor out when it would not fit: never a message of the cursor alone', async () => {
        const env = await streaming({}, { maxMessageSize: 60, siteUrl: '' });
        await showStream(env.rec, live(`${'x'.repeat(59)} `), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['x'.repeat(59)]);
        env.sched.time += 1_500;
        await showStream(env.rec, live(`${'x'.repeat(57)} `), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual([`${'x'.repeat(57)} ▉`]);
    });

    it('stops streaming this turn when the server refuses the bot, and says so once', async () => {
        const env = await streaming();
        env.chat.post = async () => {
            throw new Error('You_have_been_muted');
        };
        expect(await showStream(env.rec, live('Some words '), env.ports)).toBe(true);
        env.sched.time += 2_000;
        expect(await showStream(env.rec, live('Some more words '), env.ports)).toBe(false);
        expect(env.logs.filter((l) => l.startsWith('Streaming the answer'))).toEqual([
            `Streaming the answer of message ${env.rec.id} in room R1 stopped (You_have_been_muted); the answer comes whole when it is complete.`,
        ]);
    });

    it('reads the server limit again when a part is refused as too long, and goes on', async () => {
        const env = await streaming();
        const fresh: boolean[] = [];
        env.ports.server = async (again?: boolean) => {
            fresh.push(Boolean(again));
            return { maxMessageSize: 5000, siteUrl: '' };
        };
        const post = env.chat.post.bind(env.chat);
        let refuse = true;
        env.chat.post = async (...args) => {
            if (refuse) {
                refuse = false;
                throw new Error('error-message-size-exceeded');
            }
            return post(...args);
        };
        await showStream(env.rec, live('Some words '), env.ports);
        expect(fresh).toContain(true);
        await showStream(env.rec, live('Some words '), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['Some words ▉']);
    });
});

describe('an approval mid-answer', () => {
    it('leaves the words so far as they are, whole, and the rest goes on in a new message', async () => {
        const env = await streaming();
        await showStream(env.rec, live('Let me clean the fold'), env.ports);
        await freezeStream(env.rec, live('Let me clean the folder.\n\n'), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['Let me clean the folder.']);
        expect(env.rec.stream).toMatchObject({ ids: ['m1'], frozen: 1, cut: 26 });
        await showStream(env.rec, live('Let me clean the folder.\n\nDo'), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['Let me clean the folder.']);
        await showStream(env.rec, live('Let me clean the folder.\n\nDone, it is clea'), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['Let me clean the folder.', 'Done, it is ▉']);
    });

    it('a second approval freezes only what came after the first', async () => {
        const env = await streaming();
        await showStream(env.rec, live('First part. '), env.ports);
        await freezeStream(env.rec, live('First part. '), env.ports);
        await showStream(env.rec, live('First part. Second part '), env.ports);
        await freezeStream(env.rec, live('First part. Second part. '), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual(['First part.', 'Second part.']);
        expect(env.rec.stream).toMatchObject({ ids: ['m1', 'm2'], frozen: 2, cut: 25 });
    });

    it('after an approval a long answer goes on over new messages, the frozen one untouched', async () => {
        const env = await streaming({}, { maxMessageSize: 60, siteUrl: '' });
        await showStream(env.rec, live('Before. '), env.ports);
        await freezeStream(env.rec, live('Before. '), env.ports);
        const words = Array.from({ length: 14 }, (_, i) => `word${i}`).join(' ');
        await showStream(env.rec, live(`Before. ${words} `), env.ports);
        env.sched.time += 1_500;
        await showStream(env.rec, live(`Before. ${words} more `), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual([
            'Before.',
            'word0 word1 word2 word3 word4 word5 word6 word7 word8 word9',
            'word10 word11 word12 word13 more ▉',
        ]);
    });

    it('without words frozen, or with other words, the answer is taken whole', () => {
        expect(afterFrozen(undefined, 'anything')).toBeUndefined();
        expect(afterFrozen({ ids: ['m1'], frozen: 1, cut: 6 }, 'Hello world')).toBeUndefined();
        expect(afterFrozen({ ids: ['m1'], frozen: 1, cut: 6, frozenText: { chars: 5, print: '00000000' } }, 'Hello world')).toBeUndefined();
    });

    it('recognises the repeated words by their fingerprint', async () => {
        const env = await streaming();
        await showStream(env.rec, live('Let me clean the folder. '), env.ports);
        await freezeStream(env.rec, live('Let me clean the folder. '), env.ports);
        expect(afterFrozen(env.rec.stream, 'Let me clean the folder. Done, it is clean.')).toBe('Done, it is clean.');
        expect(afterFrozen(env.rec.stream, 'Done, it is clean.')).toBeUndefined();
        expect(afterFrozen(env.rec.stream, 'Let me')).toBeUndefined();
    });
});

describe('the streamed messages at the end', () => {
    it('an answer reuses them in order; what it does not need goes', () => {
        expect(streamedInto(undefined, 'answer', 2)).toEqual({});
        expect(streamedInto({ ids: ['a', 'b'], frozen: 0, cut: 0 }, 'answer', 1)).toEqual({ reuse: ['a'], drop: ['b'] });
        expect(streamedInto({ ids: ['a', 'b', 'c'], frozen: 1, cut: 5 }, 'answer', 3)).toEqual({ reuse: ['b', 'c'], drop: [] });
        expect(streamedInto({ ids: ['a'], frozen: 1, cut: 5 }, 'answer', 3)).toEqual({});
    });

    it('a notice reuses none', () => {
        expect(streamedInto({ ids: ['a', 'b'], frozen: 0, cut: 0 }, 'notice', 1)).toEqual({ reuse: [], drop: ['a', 'b'] });
    });

    it('finish edits the streamed message into the answer: one message, the cursor gone', async () => {
        const env = await streaming();
        await showStream(env.rec, live('The answer is '), env.ports);
        await env.store.save(env.rec);
        await finish(env.rec, answer('The answer is 42.'), env.ports);
        expect(env.chat.visible().map((m) => [m.id, m.text, m.mark])).toEqual([['m1', 'The answer is 42.', undefined]]);
    });

    it('a failed turn removes what was streamed and posts its notice', async () => {
        const env = await streaming();
        await showStream(env.rec, live('The answer is '), env.ports);
        await env.store.save(env.rec);
        await finish(env.rec, { kind: 'failed', failure: 'notice_incomplete', detail: 'test' }, env.ports);
        expect(env.chat.visible().map((m) => m.kind)).toEqual(['notice']);
    });

    it('a message posted just before a crash, its id lost, still becomes the answer', async () => {
        const env = await streaming();
        env.chat.afterNextPost = () => undefined;
        const stored = { ...env.rec, stream: { ids: [], frozen: 0, cut: 0, posting: true } };
        await env.chat.post({ roomId: 'R1' }, 'The answer ▉', 'status', { turnId: env.rec.id });
        await finish(stored, answer('The answer is 42.'), env.ports);
        expect(env.chat.visible().map((m) => [m.id, m.text])).toEqual([['m1', 'The answer is 42.']]);
    });
});

describe('a turn sent again', () => {
    it('removes what an earlier attempt streamed', async () => {
        const env = await streaming();
        await showStream(env.rec, live('Half an answer '), env.ports);
        await dropStream(env.rec, env.ports);
        expect(env.chat.visible()).toEqual([]);
        expect(env.rec.stream).toBeUndefined();
    });
});

describe('the stream’s bookkeeping', () => {
    it('has words once a whole word follows what was frozen', async () => {
        const env = await streaming();
        expect(hasWords(env.rec, live('Hello'))).toBe(false);
        expect(hasWords(env.rec, live('Hello '))).toBe(true);
        env.rec.stream = { ids: ['m1'], frozen: 1, cut: 6 };
        expect(hasWords(env.rec, live('Hello wor'))).toBe(false);
        expect(hasWords(env.rec, live('Hello world '))).toBe(true);
    });

    it('an edit leaves the record as it was (nothing to save); a post changes it', async () => {
        const env = await streaming();
        expect(await showStream(env.rec, live('One '), env.ports)).toBe(true);
        env.sched.time += 2_000;
        expect(await showStream(env.rec, live('One two '), env.ports)).toBe(false);
        expect(env.chat.edits).toBe(1);
    });

    it('finds only its own unrecorded streamed message after a crash, among the bot’s others', async () => {
        const env = await streaming();
        const other = await env.chat.post({ roomId: 'R1' }, 'Working…', 'status', { turnId: 'another-turn' });
        const known = await env.chat.post({ roomId: 'R1' }, 'Part one', 'status', { turnId: env.rec.id });
        await env.chat.post({ roomId: 'R1' }, 'An answer', 'answer');
        const lost = await env.chat.post({ roomId: 'R1' }, 'Part two ▉', 'status', { turnId: env.rec.id });
        const st = { ids: [known], frozen: 0, cut: 0, posting: true };
        await findStreamPost(env.rec, st, env.ports);
        expect(st).toEqual({ ids: [known, lost], frozen: 0, cut: 0, posting: undefined });
        expect(other).not.toBe(lost);
        expect(env.logs.filter((l) => l.includes('streamed messages it had not recorded'))).toEqual([]);
    });

    it('says so when it finds more than one', async () => {
        const env = await streaming();
        const a = await env.chat.post({ roomId: 'R1' }, 'a', 'status', { turnId: env.rec.id });
        const b = await env.chat.post({ roomId: 'R1' }, 'b', 'status', { turnId: env.rec.id });
        const st = { ids: [], frozen: 0, cut: 0, posting: true };
        await findStreamPost(env.rec, st, env.ports);
        expect(st.ids).toEqual([a, b]);
        expect(env.logs).toContain(`Turn message ${env.rec.id} in room R1 found 2 streamed messages it had not recorded; they are taken in order.`);
    });

    it('a look after a crash adopts the message whose id was lost, and edits it', async () => {
        const env = await streaming();
        const lost = await env.chat.post({ roomId: 'R1' }, 'First ▉', 'status', { turnId: env.rec.id });
        env.rec.stream = { ids: [], frozen: 0, cut: 0, posting: true };
        expect(await showStream(env.rec, live('First words '), env.ports)).toBe(true);
        expect(env.chat.visible().map((m) => [m.id, m.text])).toEqual([[lost, 'First words ▉']]);
    });

    it('an approval still comes when the last words cannot be finished', async () => {
        const env = await streaming();
        await showStream(env.rec, live('Let me check '), env.ports);
        env.chat.edit = async () => {
            throw new Error('chat down');
        };
        await freezeStream(env.rec, live('Let me check this'), env.ports);
        expect(env.rec.stream).toMatchObject({ frozen: 1, cut: 17 });
        expect(env.logs).toContain(`The streamed words of message ${env.rec.id} in room R1 could not be finished before its approval: chat down`);
    });

    it('freezes nothing when nothing of the open part was shown', async () => {
        const env = await streaming();
        await freezeStream(env.rec, live('Words '), env.ports);
        expect(env.rec.stream).toBeUndefined();
        env.rec.stream = { ids: ['m9'], frozen: 1, cut: 3 };
        await freezeStream(env.rec, live('abc more '), env.ports);
        expect(env.rec.stream).toEqual({ ids: ['m9'], frozen: 1, cut: 3 });
    });

    it('an answer that is exactly the frozen words has nothing after them', async () => {
        const env = await streaming();
        await showStream(env.rec, live('All done. '), env.ports);
        await freezeStream(env.rec, live('All done. '), env.ports);
        expect(afterFrozen(env.rec.stream, 'All done.')).toBe('');
        expect(afterFrozen(env.rec.stream, 'All done')).toBeUndefined();
    });

    it('a resent turn removes its old words even when a removal fails', async () => {
        const env = await streaming();
        env.rec.stream = { ids: ['gone', 'm1'], frozen: 0, cut: 0 };
        await env.chat.post({ roomId: 'R1' }, 'old ▉', 'status', { turnId: env.rec.id });
        const remove = env.chat.remove.bind(env.chat);
        env.chat.remove = async (id: string) => {
            if (id === 'gone') {
                throw new Error('no such message');
            }
            return remove(id);
        };
        await dropStream(env.rec, env.ports);
        expect(env.chat.visible()).toEqual([]);
    });
});
