import { LEASE_SETTLE_MS, takeLease } from '../../../src/turns/lease';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { queuedTurn } from '../../support/turnPorts';

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

/** A finisher in app process `process`: takes the lease on its own copy of the record; true when it may post. */
async function finisher(rec: TurnRecord, store: ReturnType<ReturnType<typeof sharedStore>['as']>, prepareMs = 0, process?: string): Promise<boolean> {
    const mine = structuredClone(rec);
    const won = await takeLease(
        mine,
        store,
        Date.now,
        async () => {
            await sleep(prepareMs);
            mine.delivery = { parts: ['answer'], posted: [] } as unknown as TurnRecord['delivery'];
        },
        undefined,
        process,
    );
    return won !== undefined;
}

describe('takeLease: two instances finishing one turn at once', () => {
    const running = () => queuedTurn('T1', { phase: 'running', runId: 'run_1' });

    it('lets one of two finishers post when both read before either wrote (the later writer)', async () => {
        const rec = running();
        const shared = sharedStore(rec);
        // Both read at once; B's write lands 50 ms after A's, after A would have read its own back.
        const [a, b] = await Promise.all([finisher(rec, shared.as(0), 0, 'process-a'), finisher(rec, shared.as(50), 0, 'process-b')]);
        expect([a, b]).toEqual([false, true]);
    });

    it('reads again before writing when its preparation was slow, and yields to the lease written meanwhile', async () => {
        const rec = running();
        const shared = sharedStore(rec);
        // A read first, then took longer than the settle wait to prepare: B read, wrote, waited and won meanwhile.
        const [a, b] = await Promise.all([finisher(rec, shared.as(0), LEASE_SETTLE_MS + 100, 'process-a'), finisher(rec, shared.as(0), 0, 'process-b')]);
        expect([a, b]).toEqual([false, true]);
    });

    it('leaves a lease another process wrote alone while it lasts, even when its own read of the turn came after it', async () => {
        const rec = running();
        const shared = sharedStore(rec);
        // Instance A takes the lease and may post; B's tick of the turn starts after A's write (its record shows A's lease).
        expect(await finisher(rec, shared.as(), 0, 'process-a')).toBe(true);
        const seenByB = shared.read() as TurnRecord;
        expect(seenByB.owner?.as).toBe('finishing');
        expect(seenByB.owner?.process).toBe('process-a');
        expect(await finisher(seenByB, shared.as(), 0, 'process-b')).toBe(false);
        // A's own next attempt (its first failed after the lease) takes it again at once.
        expect(await finisher(seenByB, shared.as(), 0, 'process-a')).toBe(true);
    });

    it('takes a free record alone, and never one that is done, gone or leased by another', async () => {
        const rec = running();
        expect(await finisher(rec, sharedStore(rec).as())).toBe(true);
        expect(await finisher(rec, sharedStore({ ...rec, phase: 'done' }).as())).toBe(false);
        const gone = { get: async () => undefined, save: async () => undefined };
        expect(await finisher(rec, gone)).toBe(false);
        const leased = sharedStore({ ...rec, owner: { as: 'finishing', token: 'other', until: Date.now() + 10_000, process: 'process-other' } });
        expect(await finisher(rec, leased.as())).toBe(false);
        // A lapsed lease is free again.
        const lapsed = sharedStore({ ...rec, owner: { as: 'finishing', token: 'other', until: Date.now() - 1, process: 'process-other' } });
        expect(await finisher(rec, lapsed.as())).toBe(true);
        expect(lapsed.read()?.delivery).toEqual({ parts: ['answer'], posted: [] });
    });
});
