import { PlaceOrder } from '../../../src/turns/placeOrder';

/** Message events of one room or thread store their turns in the order they came (placeOrder.ts). */
const tick = () => new Promise((r) => setImmediate(r));

describe('events of one place', () => {
    it('go one after another in arrival order, each as soon as the one before lets go', async () => {
        const order = new PlaceOrder();
        const went: string[] = [];
        const a = order.arrive('R1:T1');
        const b = order.arrive('R1:T1');
        const c = order.arrive('R1:T1');
        void b.ready.then(() => went.push('b'));
        void c.ready.then(() => went.push('c'));
        await a.ready;
        await tick();
        expect(went).toEqual([]);
        a.done();
        await tick();
        expect(went).toEqual(['b']);
        b.done();
        b.done();
        await tick();
        expect(went).toEqual(['b', 'c']);
        c.done();
        await tick();
        expect(order.size).toBe(0);
    });

    it('one that lets go before those ahead of it does not let the next pass them', async () => {
        const order = new PlaceOrder();
        const went: string[] = [];
        const a = order.arrive('R1:');
        const b = order.arrive('R1:');
        const c = order.arrive('R1:');
        void c.ready.then(() => went.push('c'));
        b.done();
        await tick();
        expect(went).toEqual([]);
        a.done();
        await tick();
        expect(went).toEqual(['c']);
    });

    it('one that comes after the first let go still waits for the one in between', async () => {
        const order = new PlaceOrder();
        const a = order.arrive('R1:T1');
        const b = order.arrive('R1:T1');
        a.done();
        await tick();
        const c = order.arrive('R1:T1');
        let cWent = false;
        void c.ready.then(() => (cWent = true));
        await tick();
        expect(cWent).toBe(false);
        b.done();
        await tick();
        expect(cWent).toBe(true);
    });
});

describe('events of different places', () => {
    it('never wait for each other', async () => {
        const order = new PlaceOrder();
        order.arrive('R1:T1');
        const other = order.arrive('R1:T2');
        const room = order.arrive('R2:');
        let ready = 0;
        void other.ready.then(() => ready++);
        void room.ready.then(() => ready++);
        await tick();
        expect(ready).toBe(2);
        expect(order.size).toBe(3);
    });
});
