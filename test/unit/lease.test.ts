import { LEASE_SETTLE_MS, takeLease } from '../../src/turns/lease';
import { TurnRecord } from '../../src/turns/turnRecord';
import { queuedTurn } from '../support/turnPorts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One record as the server's persistence keeps it: the last write wins, reads are copies. */
function sharedStore(rec: TurnRecord) {
    let stored: TurnRecord | undefined = structuredClone(rec);
    return {
        read: () => stored,
        /** The store as one finisher sees it, its writes taking `saveMs` to take effect. */
        as: (saveMs = 0) => ({
            get: async () => structuredClone(stored),
            save: async (r: TurnRecord) => {
                await sleep(saveMs);
                stored = structuredClone(r);
            },
        }),
    };
}

/** A finisher: takes the lease on its own copy of the record; true when it may post. */
async function finisher(rec: TurnRecord, store: ReturnType<ReturnType<typeof sharedStore>['as']>, prepareMs = 0): Promise<boolean> {
    const mine = structuredClone(rec);
    const won = await takeLease(mine, store, Date.now, async () => {
        await sleep(prepareMs);
        mine.delivery = { parts: ['answer'], posted: [] } as unknown as TurnRecord['delivery'];
    });
    return won !== undefined;
}

describe('takeLease: two instances finishing one turn at once', () => {
    const running = () => queuedTurn('T1', { phase: 'running', runId: 'run_1' });

    it('lets one of two finishers post when both read before either wrote (the later writer)', async () => {
        const rec = running();
        const shared = sharedStore(rec);
        // Both read at once; B's write lands 50 ms after A's, after A would have read its own back.
        const [a, b] = await Promise.all([finisher(rec, shared.as(0)), finisher(rec, shared.as(50))]);
        expect([a, b]).toEqual([false, true]);
    });

    it('reads again before writing when its preparation was slow, and yields to the lease written meanwhile', async () => {
        const rec = running();
        const shared = sharedStore(rec);
        // A read first, then took longer than the settle wait to prepare: B read, wrote, waited and won meanwhile.
        const [a, b] = await Promise.all([finisher(rec, shared.as(0), LEASE_SETTLE_MS + 100), finisher(rec, shared.as(0))]);
        expect([a, b]).toEqual([false, true]);
    });

    it('takes a free record alone, and never one that is done, gone or leased by another', async () => {
        const rec = running();
        expect(await finisher(rec, sharedStore(rec).as())).toBe(true);
        expect(await finisher(rec, sharedStore({ ...rec, phase: 'done' }).as())).toBe(false);
        const gone = { get: async () => undefined, save: async () => undefined };
        expect(await finisher(rec, gone)).toBe(false);
        const leased = sharedStore({ ...rec, lease: { token: 'other', until: Date.now() + 10_000 } });
        expect(await finisher(rec, leased.as())).toBe(false);
        // A lapsed lease is free again.
        const lapsed = sharedStore({ ...rec, lease: { token: 'other', until: Date.now() - 1 } });
        expect(await finisher(rec, lapsed.as())).toBe(true);
        expect(lapsed.read()?.delivery).toEqual({ parts: ['answer'], posted: [] });
    });
});
