import { ack, acknowledges, lateTaken } from '../../../src/turns/ack';
import { processMemory } from '../../../src/turns/processMemory';
import { ReactionsUnsupported } from '../../../src/delivery/chatPort';

/** The bot's reaction on a turn's question (turns/ack.ts): one at a time, each change replacing the one before. */
type Call = { messageId: string; emoji: string; on: boolean };

function ports(opts: { reactions?: boolean; fail?: string } = {}) {
    const calls: Call[] = [];
    const warnings: string[] = [];
    return {
        calls,
        warnings,
        config: { reactions: opts.reactions ?? true },
        chat: {
            react: async (messageId: string, emoji: string, on: boolean) => {
                calls.push({ messageId, emoji, on });
                if (opts.fail === emoji) {
                    throw new Error('You_have_been_muted');
                }
            },
        },
        log: { warn: (m: string) => void warnings.push(m) },
    };
}

let n = 0;
const turn = (over: Record<string, unknown> = {}) => ({ id: `M${++n}`, roomId: 'R1', kind: 'room' as const, ...over });
const on = (messageId: string, emoji: string) => ({ messageId, emoji, on: true });
const off = (messageId: string, emoji: string) => ({ messageId, emoji, on: false });

describe('reactions on the question', () => {
    it('a turn that goes at once: 👀, then 👀 swapped for ✅', async () => {
        const p = ports();
        const t = turn();
        await ack(t, 'taken', p, { first: true });
        expect(p.calls).toEqual([on(t.id, ':eyes:')]);
        const held = processMemory.sizes()['ack.shown'];
        await ack(t, 'answered', p);
        expect(p.calls.slice(1)).toEqual([off(t.id, ':eyes:'), on(t.id, ':white_check_mark:')]);
        // An ended turn leaves nothing in the process's memory.
        expect(processMemory.sizes()['ack.shown']).toBe(held - 1);
        expect(processMemory.sizes()['ack.setAt']).toBe(held - 1);
    });

    it('a queued turn: ⏳, then 👀 when it goes, then ❌ when it fails; the same state twice costs nothing', async () => {
        const p = ports();
        const t = turn();
        await ack(t, 'queued', p, { first: true });
        await ack(t, 'queued', p);
        await ack(t, 'taken', p);
        await ack(t, 'taken', p);
        await ack(t, 'failed', p);
        expect(p.calls).toEqual([
            on(t.id, ':hourglass_flowing_sand:'),
            off(t.id, ':hourglass_flowing_sand:'),
            on(t.id, ':eyes:'),
            off(t.id, ':eyes:'),
            on(t.id, ':x:'),
        ]);
    });

    it('a turn this process never saw (another instance, before a restart) removes what may be there', async () => {
        const p = ports();
        const woken = turn();
        await ack(woken, 'taken', p);
        expect(p.calls).toEqual([off(woken.id, ':hourglass_flowing_sand:'), on(woken.id, ':eyes:')]);
        const finished = turn();
        await ack(finished, 'answered', p);
        expect(p.calls.slice(2)).toEqual([off(finished.id, ':eyes:'), off(finished.id, ':hourglass_flowing_sand:'), on(finished.id, ':white_check_mark:')]);
        const first = turn();
        await ack(first, 'queued', p);
        expect(p.calls.slice(5)).toEqual([on(first.id, ':hourglass_flowing_sand:')]);
    });

    it('a 1:1 DM answered quickly gets only ✅; one still running at its status moment gets 👀 then', async () => {
        const p = ports();
        const quick = turn({ kind: 'dm' });
        await ack(quick, 'taken', p, { first: true });
        await lateTaken(turn({ kind: 'dm' }), p);
        expect(p.calls).toEqual([]);
        await ack(quick, 'answered', p);
        expect(p.calls).toEqual([on(quick.id, ':white_check_mark:')]);
        const slow = turn({ kind: 'dm' });
        await ack(slow, 'taken', p, { first: true });
        await lateTaken(slow, p);
        await lateTaken(slow, p);
        await ack(slow, 'answered', p);
        expect(p.calls.slice(1)).toEqual([on(slow.id, ':eyes:'), off(slow.id, ':eyes:'), on(slow.id, ':white_check_mark:')]);
        // A room turn is never late: it got its 👀 when it went.
        const room = turn();
        await lateTaken(room, p);
        expect(p.calls).toHaveLength(4);
    });

    it('none when the setting is off, for a scheduled prompt, or for a private answer', async () => {
        const p = ports({ reactions: false });
        await ack(turn(), 'taken', p);
        const q = ports();
        await ack(turn({ cron: { jobId: 'J', name: 'daily' } }), 'taken', q);
        await ack(turn({ privateTo: 'U1' }), 'answered', q);
        expect([...p.calls, ...q.calls]).toEqual([]);
        expect(acknowledges(turn(), q)).toBe(true);
        expect(acknowledges(turn(), p)).toBe(false);
    });

    it('a reaction the server refuses is logged, and the turn goes on', async () => {
        const p = ports({ fail: ':eyes:' });
        const t = turn();
        await expect(ack(t, 'taken', p, { first: true })).resolves.toBeUndefined();
        expect(p.warnings).toEqual([`The reaction on message ${t.id} in room R1 could not be set to :eyes:: You_have_been_muted`]);
        // What it meant to show is still what it swaps out next.
        await ack(t, 'answered', p);
        expect(p.calls.slice(1)).toEqual([off(t.id, ':eyes:'), on(t.id, ':white_check_mark:')]);
    });

    it('forgets what it set on a turn after six hours (the turn ended in another process): its end then removes what may be there', async () => {
        const p = ports();
        const base = Date.now();
        const now = jest.spyOn(Date, 'now');
        try {
            now.mockReturnValue(base);
            const old = turn();
            await ack(old, 'taken', p, { first: true });
            now.mockReturnValue(base + 6 * 3_600_000 + 1);
            await ack(turn(), 'queued', p, { first: true });
            await ack(old, 'answered', p);
            expect(p.calls.slice(2)).toEqual([off(old.id, ':eyes:'), off(old.id, ':hourglass_flowing_sand:'), on(old.id, ':white_check_mark:')]);
        } finally {
            now.mockRestore();
        }
    });

    it('a 1:1 DM turn that waited: its ⏳ goes when it goes, its 👀 only at its status moment; one this process never saw loses the ⏳ it may have', async () => {
        const p = ports();
        const waited = turn({ kind: 'dm' });
        await ack(waited, 'queued', p, { first: true });
        await ack(waited, 'taken', p);
        expect(p.calls).toEqual([on(waited.id, ':hourglass_flowing_sand:'), off(waited.id, ':hourglass_flowing_sand:')]);
        await lateTaken(waited, p);
        await ack(waited, 'answered', p);
        expect(p.calls.slice(2)).toEqual([on(waited.id, ':eyes:'), off(waited.id, ':eyes:'), on(waited.id, ':white_check_mark:')]);
        const woken = turn({ kind: 'dm' });
        await ack(woken, 'taken', p);
        await ack(woken, 'answered', p);
        expect(p.calls.slice(5)).toEqual([off(woken.id, ':hourglass_flowing_sand:'), on(woken.id, ':white_check_mark:')]);
    });

    it('a ⏳ the server refuses to take off is logged as not cleared', async () => {
        const p = ports({ fail: ':hourglass_flowing_sand:' });
        const t = turn({ kind: 'dm' });
        await ack(t, 'taken', p);
        expect(p.warnings).toEqual([`The reaction on message ${t.id} in room R1 could not be cleared: You_have_been_muted`]);
    });

    // Last: it turns reactions off for the rest of the process, as on such a server.
    it('a server whose Apps-Engine offers apps no reactions (1.58, 1.59): one log line that says so, then no more calls', async () => {
        const calls: Call[] = [];
        const warnings: string[] = [];
        const p = {
            config: { reactions: true },
            chat: {
                react: async (messageId: string, emoji: string, on: boolean) => {
                    calls.push({ messageId, emoji, on });
                    throw new ReactionsUnsupported("Cannot read properties of undefined (reading 'addReaction')");
                },
            },
            log: { warn: (m: string) => void warnings.push(m) },
        };
        const t = turn();
        await ack(t, 'taken', p, { first: true });
        await ack(turn(), 'taken', p, { first: true });
        await ack(t, 'answered', p);
        expect(calls).toEqual([on(t.id, ':eyes:')]);
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/^This server's Apps-Engine cannot set reactions for apps \(Apps-Engine 1\.58 and 1\.59/);
    });
});
