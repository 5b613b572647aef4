import { GroupedRead, GroupedReads } from '../../../src/engine/adapters/groupedRead';

/** A read whose answers the test releases one by one; each answer says which read it was and when it was sent. */
function controlledRead() {
    const sent: Array<{ n: number; release: () => void; fail: (e: Error) => void }> = [];
    let clock = 0;
    const read = () =>
        new Promise<{ n: number; sentAt: number }>((resolve, reject) => {
            const n = sent.length + 1;
            const sentAt = ++clock;
            sent.push({ n, release: () => resolve({ n, sentAt }), fail: reject });
        });
    const tick = () => ++clock;
    return { sent, read, tick };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupedRead: the tickets reads of one process', () => {
    it('sends a lone caller its own read at once', async () => {
        const group = new GroupedRead<{ n: number; sentAt: number }>();
        const { sent, read } = controlledRead();
        const answer = group.get(read);
        await flush();
        expect(sent).toHaveLength(1);
        sent[0].release();
        await expect(answer).resolves.toEqual({ n: 1, sentAt: 1 });
    });

    it('gives the callers that ask while a read is in flight one shared read, sent after it returns, never the one in flight', async () => {
        const group = new GroupedRead<{ n: number; sentAt: number }>();
        const { sent, read, tick } = controlledRead();
        const first = group.get(read);
        await flush();
        // Asked after the first read was sent: each must get an answer sent after it asked.
        const askedAt = tick();
        const later = [group.get(read), group.get(read), group.get(read)];
        await flush();
        expect(sent).toHaveLength(1);
        sent[0].release();
        await expect(first).resolves.toMatchObject({ n: 1 });
        await flush();
        expect(sent).toHaveLength(2);
        sent[1].release();
        const answers = await Promise.all(later);
        expect(answers.map((a) => a.n)).toEqual([2, 2, 2]);
        expect(answers.every((a) => a.sentAt > askedAt)).toBe(true);
        // Idle again: the next caller is sent at once.
        const again = group.get(read);
        await flush();
        expect(sent).toHaveLength(3);
        sent[2].release();
        await expect(again).resolves.toMatchObject({ n: 3 });
    });

    it('passes a failed read to all who shared it, and the next group still goes', async () => {
        const group = new GroupedRead<{ n: number; sentAt: number }>();
        const { sent, read } = controlledRead();
        const first = group.get(read);
        await flush();
        const shared = [group.get(read), group.get(read)];
        sent[0].fail(new Error('store down'));
        await expect(first).rejects.toThrow('store down');
        await flush();
        sent[1].fail(new Error('still down'));
        await expect(Promise.all(shared)).rejects.toThrow('still down');
        await expect(shared[1]).rejects.toThrow('still down');
        const next = group.get(read);
        await flush();
        sent[2].release();
        await expect(next).resolves.toMatchObject({ n: 3 });
    });
});

describe('GroupedRead.recent: for a caller that wrote nothing the read must show', () => {
    it('takes the read in flight if there is one, and otherwise sends one as a lone caller would', async () => {
        const group = new GroupedRead<{ n: number; sentAt: number }>();
        const { sent, read } = controlledRead();
        const first = group.get(read);
        await flush();
        const recent = group.recent(read);
        const later = group.get(read);
        sent[0].release();
        await expect(recent).resolves.toMatchObject({ n: 1 });
        await expect(first).resolves.toMatchObject({ n: 1 });
        await flush();
        // A caller that asked with get still gets a read sent after it asked.
        sent[1].release();
        await expect(later).resolves.toMatchObject({ n: 2 });
        await flush();
        const alone = group.recent(read);
        await flush();
        expect(sent).toHaveLength(3);
        sent[2].release();
        await expect(alone).resolves.toMatchObject({ n: 3 });
    });
});

describe('GroupedReads: one GroupedRead per key (the bot’s room ids)', () => {
    it('shares reads of one key only, and forgets a key once no read of it is in flight or waiting', async () => {
        const reads = new GroupedReads<{ n: number; sentAt: number }>();
        const a = controlledRead();
        const b = controlledRead();
        const firstA = reads.get('a', a.read);
        const firstB = reads.get('b', b.read);
        await flush();
        // Another key's read in flight does not hold this key's back.
        expect([a.sent.length, b.sent.length]).toEqual([1, 1]);
        const sharedA = [reads.get('a', a.read), reads.get('a', a.read)];
        a.sent[0].release();
        b.sent[0].release();
        await expect(firstA).resolves.toMatchObject({ n: 1 });
        await expect(firstB).resolves.toMatchObject({ n: 1 });
        await flush();
        expect(a.sent).toHaveLength(2);
        expect(reads.size).toBe(1);
        a.sent[1].release();
        expect((await Promise.all(sharedA)).map((r) => r.n)).toEqual([2, 2]);
        await flush();
        expect(reads.size).toBe(0);
    });
});
