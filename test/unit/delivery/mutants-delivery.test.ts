import { blocksFor, ownedBy } from '../../../src/delivery/blocks';
import { ChatPort, ReplyTarget } from '../../../src/delivery/chatPort';
import { deliver, Delivery } from '../../../src/delivery/deliver';
import { BotMessageKind, markBlockId, markOf } from '../../../src/delivery/messageKind';
import { progressText, toolLine } from '../../../src/delivery/progressText';
import { firstMessagePrefix, quotePrefix } from '../../../src/delivery/quote';
import { fenceAfter, MAX_PARTS, splitMessage } from '../../../src/delivery/split';
import { isVisibleNow } from '../../../src/delivery/visibility';

/**
 * Delivery edges the older tests left open (found by mutation testing, `npm run mutate`):
 * the message marks, the blocks, posting an answer in parts, the status text, the quote
 * prefix, and the split's boundaries and code fences.
 */

describe('message marks', () => {
    it('names the kind and the turn in the block id', () => {
        expect(markBlockId({ kind: 'status', turnId: 'T1' })).toBe('hermes.status.T1');
        expect(markBlockId({ kind: 'notice' })).toBe('hermes.notice.-');
    });

    it('reads every kind back from the first block that carries a mark', () => {
        for (const kind of ['answer', 'notice', 'status', 'command', 'approval'] as BotMessageKind[]) {
            expect(markOf([{ blockId: markBlockId({ kind, turnId: 'T9' }) }])).toEqual({ kind, turnId: 'T9' });
        }
        expect(markOf([{ type: 'divider' }, null, { blockId: 'other.app' }, { blockId: 'hermes.command.-' }])).toEqual({ kind: 'command', turnId: undefined });
        expect(markOf([{ blockId: 'hermes.notice.T.with.dots' }])).toEqual({ kind: 'notice', turnId: 'T.with.dots' });
    });

    it('ignores blocks that only look like marks', () => {
        expect(markOf(undefined)).toBeUndefined();
        expect(markOf('hermes.status.T1')).toBeUndefined();
        expect(markOf({ blockId: 'hermes.status.T1' })).toBeUndefined();
        expect(markOf([])).toBeUndefined();
        expect(markOf([{ blockId: 'hermes.unknownkind.T1' }])).toBeUndefined();
        expect(markOf([{ blockId: 'xhermes.status.T1' }])).toBeUndefined();
        expect(markOf([{ blockId: 'hermes.status.' }])).toBeUndefined();
        expect(markOf([{ blockId: 'hermes.Status.T1' }])).toBeUndefined();
        expect(markOf([{ blockId: 42 }])).toBeUndefined();
        expect(markOf([{ blockId: '.status.T1' }])).toBeUndefined();
        expect(markOf([{ blockId: 'hermes.status.T1\nforged' }])).toBeUndefined();
    });
});

describe('blocks of a marked message', () => {
    it('of a private notice name the app on every block, and nothing when there are none', () => {
        const blocks = [
            { type: 'section', blockId: 'hermes.notice.-' },
            { type: 'actions', elements: [] },
        ];
        expect(ownedBy(blocks, 'APP')).toEqual([
            { type: 'section', blockId: 'hermes.notice.-', appId: 'APP' },
            { type: 'actions', elements: [], appId: 'APP' },
        ]);
        expect(blocks[0]).not.toHaveProperty('appId');
        expect(ownedBy(undefined, 'APP')).toBeUndefined();
    });

    it('has none for an answer or an unmarked message', () => {
        expect(blocksFor('text', undefined)).toBeUndefined();
        expect(blocksFor('text', { kind: 'answer', turnId: 'T1' })).toBeUndefined();
    });

    it('is the text as a markdown section whose id is the mark', () => {
        expect(blocksFor('*Working*', { kind: 'status', turnId: 'T1' })).toEqual([
            { type: 'section', blockId: 'hermes.status.T1', text: { type: 'mrkdwn', text: '*Working*' } },
        ]);
        expect(blocksFor('x', { kind: 'notice' }, { text: 'x', buttons: [] })).toHaveLength(1);
    });

    it('adds the buttons as one actions block, styled only when asked', () => {
        const blocks = blocksFor(
            'Run it?',
            { kind: 'approval', turnId: 'T1' },
            {
                text: 'Run it?',
                buttons: [
                    { actionId: 'approve', label: 'Approve', value: 'T1:once', style: 'primary' },
                    { actionId: 'deny', label: 'Deny', value: 'T1:deny' },
                ],
            },
        );
        expect(blocks).toEqual([
            { type: 'section', blockId: 'hermes.approval.T1', text: { type: 'mrkdwn', text: 'Run it?' } },
            {
                type: 'actions',
                elements: [
                    { type: 'button', actionId: 'approve', text: { type: 'plain_text', text: 'Approve', emoji: true }, value: 'T1:once', style: 'primary' },
                    { type: 'button', actionId: 'deny', text: { type: 'plain_text', text: 'Deny', emoji: true }, value: 'T1:deny' },
                ],
            },
        ]);
        expect('style' in ((blocks as Array<{ elements?: object[] }>)[1].elements as object[])[1]).toBe(false);
    });
});

describe('what people see now', () => {
    it('hides edit copies and deleted messages, however the converter passed them', () => {
        expect(isVisibleNow({})).toBe(true);
        expect(isVisibleNow({ type: 'uj' })).toBe(true);
        expect(isVisibleNow({ _hidden: true })).toBe(false);
        expect(isVisibleNow({ _unmappedProperties_: { _hidden: true } })).toBe(false);
        expect(isVisibleNow({ type: 'rm' })).toBe(false);
        expect(isVisibleNow({ _unmappedProperties_: { t: 'rm' } })).toBe(false);
        expect(isVisibleNow({ _hidden: false, _unmappedProperties_: { _hidden: false, t: 'uj' } })).toBe(true);
        expect(isVisibleNow({ _hidden: 'yes', _unmappedProperties_: { _hidden: 1 } })).toBe(true);
    });
});

/** A chat that records posts and fails the ones a test tells it to. */
class RecordingChat implements ChatPort {
    public posts: Array<{ target: ReplyTarget; text: string; kind: BotMessageKind; turnId?: string }> = [];
    public failWith: Array<Error | undefined> = [];
    public async post(target: ReplyTarget, text: string, kind: BotMessageKind, opts: { turnId?: string } = {}): Promise<string> {
        const failure = this.failWith.shift();
        if (failure) {
            throw failure;
        }
        this.posts.push({ target, text, kind, turnId: opts.turnId });
        return `id${this.posts.length}`;
    }
}

function logger() {
    const lines: string[] = [];
    return {
        lines,
        log: {
            debug: (m: string) => lines.push(m),
            info: (m: string) => lines.push(m),
            warn: (m: string) => lines.push(m),
            error: (m: string) => lines.push(m),
        },
    };
}

describe('delivering an answer', () => {
    const target = { roomId: 'R1', threadId: 'TH1' };
    const paragraphs = (n: number, size: number) => Array.from({ length: n }, (_, i) => `${i}`.padEnd(size, 'x')).join('\n\n');

    it('posts one short answer with its prefix and turn', async () => {
        const chat = new RecordingChat();
        const { log } = logger();
        const result = await deliver({ target, text: 'hello', kind: 'answer', turnId: 'T1', maxMessageSize: 1000, firstPrefix: '@alice ' }, chat, log, 'here');
        expect(result).toEqual({ ok: true, messageIds: ['id1'] });
        expect(chat.posts).toEqual([{ target, text: '@alice hello', kind: 'answer', turnId: 'T1' }]);
    });

    it('posts a long answer in parts, in order, the prefix only on the first', async () => {
        const chat = new RecordingChat();
        const { log } = logger();
        const text = paragraphs(3, 80);
        const result = await deliver({ target, text, kind: 'answer', maxMessageSize: 100, firstPrefix: '@a ' }, chat, log, 'here');
        expect(result).toEqual({ ok: true, messageIds: ['id1', 'id2', 'id3'] });
        expect(chat.posts.map((p) => p.text)).toEqual([`@a ${'0'.padEnd(80, 'x')}`, '1'.padEnd(80, 'x'), '2'.padEnd(80, 'x')]);
        expect(chat.posts.every((p) => p.kind === 'answer' && p.turnId === undefined)).toBe(true);
    });

    it('posts without a prefix when there is none', async () => {
        const chat = new RecordingChat();
        const { log } = logger();
        await deliver({ target, text: 'plain', kind: 'notice', maxMessageSize: 1000 }, chat, log, 'here');
        expect(chat.posts.map((p) => [p.text, p.kind])).toEqual([['plain', 'notice']]);
    });

    it('stops at a failed part, tells the asker which, and logs the error', async () => {
        const chat = new RecordingChat();
        chat.failWith = [undefined, new Error('boom')];
        const { log, lines } = logger();
        const result = await deliver({ target, text: paragraphs(3, 80), kind: 'answer', turnId: 'T1', maxMessageSize: 100 }, chat, log, 'the turn');
        expect(result).toEqual({ ok: false, messageIds: ['id1'], failedPart: 2, parts: 3 });
        expect(chat.posts.map((p) => [p.text, p.kind, p.turnId])).toEqual([
            ['0'.padEnd(80, 'x'), 'answer', 'T1'],
            [':warning: Part 2 of 3 of this answer could not be posted, so the rest was held back.', 'notice', 'T1'],
        ]);
        expect(lines).toEqual(['Posting part 2 of 3 for the turn failed: boom']);
    });

    it('logs a failure that is not an Error, and one of the notice too', async () => {
        const chat = new RecordingChat();
        chat.post = async () => {
            throw 'refused';
        };
        const { log, lines } = logger();
        const result = await deliver({ target, text: 'hi', kind: 'answer', maxMessageSize: 100 }, chat, log, 'X');
        expect(result).toEqual({ ok: false, messageIds: [], failedPart: 1, parts: 1 });
        expect(lines).toEqual(['Posting part 1 of 1 for X failed: refused', 'The failure notice for X could not be posted either.']);
    });

    it('splits anew once when the first part was too large for a lowered limit', async () => {
        const chat = new RecordingChat();
        chat.failWith = [new Error('error-message-size-exceeded')];
        const { log, lines } = logger();
        let reads = 0;
        const d: Delivery = {
            target,
            text: paragraphs(2, 80),
            kind: 'answer',
            maxMessageSize: 1000,
            firstPrefix: '@a ',
            freshMaxMessageSize: async () => (++reads, 100),
        };
        const result = await deliver(d, chat, log, 'T');
        expect(result).toEqual({ ok: true, messageIds: ['id1', 'id2'] });
        expect(chat.posts.map((p) => p.text)).toEqual([`@a ${'0'.padEnd(80, 'x')}`, '1'.padEnd(80, 'x')]);
        expect(reads).toBe(1);
        expect(lines).toEqual(['Message_MaxAllowedSize is now 100; splitting the answer for T again.']);
    });

    it('reads the limit again only once, and not for a later part or another error', async () => {
        const { log } = logger();
        let reads = 0;
        const fresh = async () => (++reads, 100);
        const twice = new RecordingChat();
        twice.failWith = [new Error('MaxAllowedSize'), new Error('MaxAllowedSize')];
        expect(
            await deliver({ target, text: paragraphs(2, 80), kind: 'answer', maxMessageSize: 1000, freshMaxMessageSize: fresh }, twice, log, 'T'),
        ).toMatchObject({ ok: false, failedPart: 1 });
        expect(reads).toBe(1);

        const other = new RecordingChat();
        other.failWith = [new Error('network down')];
        expect(await deliver({ target, text: 'hi', kind: 'answer', maxMessageSize: 1000, freshMaxMessageSize: fresh }, other, log, 'T')).toMatchObject({
            ok: false,
            failedPart: 1,
        });
        expect(reads).toBe(1);

        const later = new RecordingChat();
        later.failWith = [undefined, new Error('size-exceeded')];
        expect(
            await deliver({ target, text: paragraphs(2, 80), kind: 'answer', maxMessageSize: 100, freshMaxMessageSize: fresh }, later, log, 'T'),
        ).toMatchObject({ ok: false, failedPart: 2 });
        expect(reads).toBe(1);
    });

    it('gives up on a size error when the limit did not go down', async () => {
        const chat = new RecordingChat();
        chat.failWith = [new Error('size-exceeded')];
        const { log, lines } = logger();
        const result = await deliver({ target, text: 'hi', kind: 'answer', maxMessageSize: 100, freshMaxMessageSize: async () => 100 }, chat, log, 'T');
        expect(result).toEqual({ ok: false, messageIds: [], failedPart: 1, parts: 1 });
        expect(lines[0]).toBe('Posting part 1 of 1 for T failed: size-exceeded');
    });
});

describe('the status text', () => {
    it.each([
        ['terminal', '💻'],
        ['web_search', '🔎'],
        ['web_extract', '🌐'],
        ['browser', '🌐'],
        ['read_file', '📄'],
        ['write_file', '✏️'],
        ['patch', '✏️'],
        ['search_files', '🔍'],
        ['delegate_task', '🤝'],
        ['memory', '🧠'],
        ['something_new', '🔧'],
    ])('shows %s with %s', (tool, emoji) => {
        expect(toolLine({ tool })).toBe(`${emoji} ${tool}`);
    });

    it('prefers the emoji Hermes sent', () => {
        expect(toolLine({ tool: 'terminal', emoji: '🐚', label: 'ls' })).toBe('🐚 terminal: ls');
    });

    it('makes the label one trimmed line of at most 120 characters, without backticks', () => {
        expect(toolLine({ tool: 'terminal', label: '  ls\r\n-la  ' })).toBe('💻 terminal: ls -la');
        expect(toolLine({ tool: 'terminal', label: 'run `rm` now' })).toBe("💻 terminal: run 'rm' now");
        expect(toolLine({ tool: 'terminal', label: 'y'.repeat(200) })).toBe(`💻 terminal: ${'y'.repeat(120)}`);
        expect(toolLine({ tool: 'terminal', label: `${' '.repeat(10)}${'z'.repeat(115)}` })).toBe(`💻 terminal: ${'z'.repeat(115)}`);
        expect(toolLine({ tool: 'terminal', label: '   ' })).toBe('💻 terminal');
    });

    it('lists the tools under the working line, with no "earlier steps" line while all fit', () => {
        expect(progressText('tools', ['a', 'b'])).toBe(':hourglass_flowing_sand: Working…\na\nb');
        expect(progressText('status', ['a', 'b'])).toBe(':hourglass_flowing_sand: Working…');
        expect(progressText('tools', [])).toBe(':hourglass_flowing_sand: Working…');
    });

    it('shows the newest eight and counts the rest', () => {
        const lines = Array.from({ length: 10 }, (_, i) => `l${i}`);
        expect(progressText('tools', lines)).toBe([':hourglass_flowing_sand: Working…', '… 2 earlier step(s)', ...lines.slice(2)].join('\n'));
        expect(progressText('tools', lines.slice(0, 8))).toBe([':hourglass_flowing_sand: Working…', ...lines.slice(0, 8)].join('\n'));
    });
});

describe("the first message's prefix", () => {
    const place = { kind: 'room' as const, roomType: 'c', roomId: 'RID', roomName: 'general', messageId: 'MID', askerUsername: 'alice' };

    it("quotes and mentions in a room's main channel", () => {
        expect(firstMessagePrefix(place, { siteUrl: 'https://chat.example.com' })).toBe('[ ](https://chat.example.com/channel/general?msg=MID) @alice ');
    });

    it('only mentions when the server has no Site_Url', () => {
        expect(firstMessagePrefix(place, { siteUrl: '' })).toBe('@alice ');
    });

    it('has none in a thread or a DM', () => {
        expect(firstMessagePrefix({ ...place, threadId: 'TH' }, { siteUrl: 'https://chat.example.com' })).toBeUndefined();
        expect(firstMessagePrefix({ ...place, kind: 'dm', roomType: 'd' }, { siteUrl: 'https://chat.example.com' })).toBeUndefined();
        expect(firstMessagePrefix({ ...place, kind: 'dm', roomType: 'd' }, { siteUrl: '' })).toBeUndefined();
    });

    it('drops every trailing slash of the site URL and encodes the parts', () => {
        expect(
            quotePrefix({ siteUrl: 'https://chat.example.com///', roomType: 'c', roomId: 'RID', roomName: 'a b', messageId: 'M/1', askerUsername: 'bob' }),
        ).toBe('[ ](https://chat.example.com/channel/a%20b?msg=M%2F1) @bob ');
        expect(quotePrefix({ siteUrl: 'https://chat.example.com', roomType: 'c', roomId: 'RID', messageId: 'M', askerUsername: 'bob' })).toBe(
            '[ ](https://chat.example.com/channel/RID?msg=M) @bob ',
        );
    });
});

describe('split boundaries and fences', () => {
    it('refuses a limit below 40 characters', () => {
        expect(() => splitMessage('x', 39)).toThrow('message limit too small to split into');
        expect(splitMessage('x', 40)).toEqual(['x']);
    });

    it('honours a prefix reserve of at most half the limit', () => {
        const chunks = splitMessage('word '.repeat(100).trim(), 100, 90);
        expect(chunks[0].length).toBeLessThanOrEqual(50);
        expect(chunks[0].length).toBeGreaterThan(40);
    });

    it('reserves room in the first chunk only', () => {
        const chunks = splitMessage('word '.repeat(200).trim(), 200, 80);
        expect(chunks[0].length).toBeLessThanOrEqual(120);
        expect(Math.max(...chunks.slice(1).map((c) => c.length))).toBeGreaterThan(150);
    });

    it('ends a cut answer with the sentence when it fits in a quarter of the limit, else with an ellipsis', () => {
        const cut = '_… (the answer is cut here: too long for the chat)_';
        const long = (limit: number) => 'y'.repeat(limit * (MAX_PARTS + 2));
        const roomy = splitMessage(long(4 * cut.length + 1), 4 * cut.length + 1);
        expect(roomy).toHaveLength(MAX_PARTS);
        expect(roomy[MAX_PARTS - 1].endsWith(`\n${cut}`)).toBe(true);
        const tight = splitMessage(long(4 * cut.length), 4 * cut.length);
        expect(tight[MAX_PARTS - 1].endsWith('\n…')).toBe(true);
        expect(tight[MAX_PARTS - 1]).not.toContain(cut);
        const tiny = splitMessage(long(60), 60);
        expect(tiny[MAX_PARTS - 1].endsWith('y\n…')).toBe(true);
        expect(tiny[MAX_PARTS - 1].length).toBeLessThanOrEqual(60);
    });

    it('never posts a blank message', () => {
        expect(splitMessage(' \n \n ', 100)).toEqual([]);
        expect(splitMessage('', 100)).toEqual([]);
    });

    it('does not reopen a fence for nothing but the blank lines after a cut', () => {
        const text = `\`\`\`\n${'a'.repeat(30)}\n\n\n\n\n\n\n\n\n\n\n\n`;
        expect(splitMessage(text, 40)).toEqual([`\`\`\`\n${'a'.repeat(30)}\n\`\`\``]);
    });

    it('keeps the line breaks of the text after a cut inside a line', () => {
        const chunks = splitMessage(`${'aaaa '.repeat(12)}end\nnext`, 40);
        expect(chunks.join(' ')).toContain('end\nnext');
    });

    it('cuts at the last space, leaving no space at either side of the cut', () => {
        const words = Array.from({ length: 60 }, (_, i) => `w${i}`);
        const chunks = splitMessage(words.join(' '), 40);
        expect(chunks.join(' ').split(' ')).toEqual(words);
        chunks.forEach((c) => {
            expect(c).toBe(c.trim());
        });
        const spaced = splitMessage(`${'x'.repeat(30)}      ${'y'.repeat(30)}`, 40);
        expect(spaced).toEqual(['x'.repeat(30), 'y'.repeat(30)]);
    });

    it('uses a space right at the limit', () => {
        expect(splitMessage(`${'a'.repeat(40)} ${'b'.repeat(10)}`, 40)).toEqual(['a'.repeat(40), 'b'.repeat(10)]);
        expect(splitMessage(`${'a'.repeat(39)}\n\n${'b'.repeat(10)}`, 40)).toEqual(['a'.repeat(39), 'b'.repeat(10)]);
    });

    it('hard-cuts rather than cut at a separator in the first 30 %', () => {
        const text = `${'a'.repeat(12)} ${'b'.repeat(60)}`;
        expect(splitMessage(text, 40)[0]).toBe(text.slice(0, 40));
        const later = `${'a'.repeat(13)} ${'b'.repeat(60)}`;
        expect(splitMessage(later, 40)[0]).toBe('a'.repeat(13));
    });

    it('never cuts between the halves of a surrogate pair', () => {
        const text = `${'a'.repeat(39)}😀${'b'.repeat(50)}`;
        const chunks = splitMessage(text, 40);
        expect(chunks[0]).toBe('a'.repeat(39));
        expect(chunks.join('')).toBe(text);
        chunks.forEach((c) => expect(c.length).toBeLessThanOrEqual(40));
    });

    it('reopens a long opener as a plain fence, keeping its run of backticks', () => {
        const code = Array.from({ length: 120 }, (_, i) => `line ${i}`).join('\n');
        const reopenedWith = (opener: string, limit: number) =>
            splitMessage(`${opener}\n${code}\n${opener.replace(/[^`~].*$/, '')}`, limit)
                .slice(1)
                .map((c) => c.split('\n')[0]);
        const opener20 = `\`\`\`${'p'.repeat(17)}`;
        expect(new Set(reopenedWith(opener20, 400))).toEqual(new Set([opener20]));
        expect(new Set(reopenedWith(`${opener20}q`, 400))).toEqual(new Set(['```']));
        expect(new Set(reopenedWith(`\`\`\`${'x'.repeat(30)}`, 400))).toEqual(new Set(['```']));
        expect(new Set(reopenedWith(`\`\`\`\`${'x'.repeat(30)}`, 400))).toEqual(new Set(['````']));
        expect(new Set(reopenedWith(`${'`'.repeat(20)}${'x'.repeat(5)}`, 400))).toEqual(new Set(['`'.repeat(20)]));
        expect(new Set(reopenedWith(`${'`'.repeat(21)}${'x'.repeat(5)}`, 400))).toEqual(new Set(['```']));
        expect(new Set(reopenedWith('```pythonx', 40))).toEqual(new Set(['```']));
        expect(new Set(reopenedWith('```python', 40))).toEqual(new Set(['```python']));
    });

    it('knows which fence is open after a piece of text', () => {
        expect(fenceAfter('  ```js\ncode', undefined)).toBe('```js');
        expect(fenceAfter('```ts  \ncode', undefined)).toBe('```ts');
        expect(fenceAfter('use ``` inline', undefined)).toBeUndefined();
        expect(fenceAfter('text```\ncode', undefined)).toBeUndefined();
        expect(fenceAfter('````\ncode\n````', undefined)).toBeUndefined();
        expect(fenceAfter('~~~~\ncode\n~~~~', undefined)).toBeUndefined();
        expect(fenceAfter('```\na\n```python\n', undefined)).toBe('```');
        expect(fenceAfter('```\na\n~~~\n', undefined)).toBe('```');
        expect(fenceAfter('````\na\n```\n', undefined)).toBe('````');
        expect(fenceAfter('```js\nx\n```  ', undefined)).toBeUndefined();
        expect(fenceAfter('```\nx\n  ```', undefined)).toBeUndefined();
        expect(fenceAfter('```typescript\nx\n```', undefined)).toBeUndefined();
        expect(fenceAfter('x\n```', '~~~')).toBe('~~~');
        expect(fenceAfter('x\n~~~~', '~~~')).toBeUndefined();
    });
});
