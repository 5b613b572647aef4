import { MissedFirst } from '../../../src/engine/entry/missedFirst';

/**
 * A new process's first event of a room takes the room's missed messages first (missedFirst.ts):
 * once per room, in the process's first minute, over the minute before its start up to the end
 * of its start.
 */
const STARTED = 1_800_000_000_000;

describe('the first look at a room after a process start', () => {
    it('reads the minute before the start up to the end of onEnable, once per room; a second event of the room waits on the same look', async () => {
        const first = new MissedFirst(STARTED);
        first.enabled(STARTED + 700);
        first.enabled(STARTED + 5_000);
        const windows: Array<{ since: number; until: number }> = [];
        const take = async (w: { since: number; until: number }) => void windows.push(w);
        const a = first.before({ id: 'R1' }, STARTED + 2_000, take);
        const b = first.before({ id: 'R1' }, STARTED + 2_500, take);
        expect(b).toBe(a);
        await first.before({ id: 'R2' }, STARTED + 3_000, take);
        expect(windows).toEqual([
            { since: STARTED - 60_000, until: STARTED + 700 },
            { since: STARTED - 60_000, until: STARTED + 700 },
        ]);
    });

    it('before onEnable has ended, up to the event itself', async () => {
        const first = new MissedFirst(STARTED);
        const windows: Array<{ since: number; until: number }> = [];
        await first.before({ id: 'R1' }, STARTED + 300, async (w) => void windows.push(w));
        expect(windows).toEqual([{ since: STARTED - 60_000, until: STARTED + 300 }]);
    });

    it('a look that fails lets the event go on (the sweep looks again)', async () => {
        const first = new MissedFirst(STARTED);
        await expect(
            first.before({ id: 'R1' }, STARTED + 1, async () => {
                throw new Error('room unreadable');
            }),
        ).resolves.toBeUndefined();
    });

    it('nothing after the first minute of the process', () => {
        const first = new MissedFirst(STARTED);
        const take = jest.fn(async () => undefined);
        expect(first.before({ id: 'R1' }, STARTED + 60_000, take)).toBeDefined();
        expect(first.before({ id: 'R2' }, STARTED + 60_001, take)).toBeUndefined();
        expect(take).toHaveBeenCalledTimes(1);
    });

    it('nothing for a room created since the start (its messages all reached this process)', () => {
        const first = new MissedFirst(STARTED);
        first.enabled(STARTED + 700);
        const take = jest.fn(async () => undefined);
        expect(first.before({ id: 'R1', createdAt: new Date(STARTED + 701) }, STARTED + 2_000, take)).toBeUndefined();
        expect(first.before({ id: 'R2', createdAt: new Date(STARTED + 700) }, STARTED + 2_000, take)).toBeDefined();
        expect(take).toHaveBeenCalledTimes(1);
    });

    it("looks only before the event's own message: a later one's event is on its way and must not go ahead of it", async () => {
        const first = new MissedFirst(STARTED);
        const windows: Array<{ since: number; until: number }> = [];
        // onEnable still running (a restarted process takes events before it ends): up to the event's message.
        await first.before({ id: 'R1' }, STARTED + 900, async (w) => void windows.push(w), STARTED + 400);
        // onEnable over before the message: up to its end, as before.
        first.enabled(STARTED + 500);
        await first.before({ id: 'R2' }, STARTED + 900, async (w) => void windows.push(w), STARTED + 800);
        await first.before({ id: 'R3' }, STARTED + 900, async (w) => void windows.push(w), STARTED + 450);
        expect(windows).toEqual([
            { since: STARTED - 60_000, until: STARTED + 399 },
            { since: STARTED - 60_000, until: STARTED + 500 },
            { since: STARTED - 60_000, until: STARTED + 449 },
        ]);
    });

    it("past the first minute, a look still under way holds the room's later events behind it; a finished one is dropped", async () => {
        const first = new MissedFirst(STARTED);
        let finish: () => void = () => undefined;
        const look = first.before({ id: 'R1' }, STARTED + 59_999, () => new Promise<void>((r) => (finish = r)));
        expect(first.before({ id: 'R1' }, STARTED + 60_001, async () => undefined)).toBe(look);
        expect(first.before({ id: 'R2' }, STARTED + 60_001, async () => undefined)).toBeUndefined();
        finish();
        await look;
        expect(first.before({ id: 'R1' }, STARTED + 60_002, async () => undefined)).toBeUndefined();
    });
});
