import { IntakeGate } from '../../../src/turns/intakeGate';

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** Issue 16 §6: a burst's message events read and store a few at a time, in arrival order. */
describe('IntakeGate', () => {
    it('lets the first ones in at once and the rest in arrival order, one for each place given back', async () => {
        const gate = new IntakeGate(2);
        const entered: number[] = [];
        const leaves: Array<() => void> = [];
        for (let i = 0; i < 5; i++) {
            void gate.enter().then((leave) => {
                entered.push(i);
                leaves[i] = leave;
            });
        }
        await flush();
        expect(entered).toEqual([0, 1]);
        expect(gate.load).toEqual({ inside: 2, waiting: 3 });
        leaves[1]();
        await flush();
        expect(entered).toEqual([0, 1, 2]);
        // A place is given back once, however often the event says so (its turn stored, then its handler returning).
        leaves[1]();
        await flush();
        expect(entered).toEqual([0, 1, 2]);
        leaves[0]();
        leaves[2]();
        await flush();
        expect(entered).toEqual([0, 1, 2, 3, 4]);
        leaves[3]();
        leaves[4]();
        expect(gate.load).toEqual({ inside: 0, waiting: 0 });
        // Empty again: the next one goes at once.
        const leave = await gate.enter();
        expect(gate.load).toEqual({ inside: 1, waiting: 0 });
        leave();
    });
});
