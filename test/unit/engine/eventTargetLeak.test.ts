import { dropEmptyListenerKeys } from '../../../src/engine/eventTargetLeak';

/**
 * Deno's EventTarget keeps its listeners in `this[symbol].listeners[type]` and leaves an empty
 * array per type removed; the engine's runtime adds and removes one type per bridge call
 * (`response:<id>`). This stand-in keeps them the same way.
 */
const data = Symbol('eventTargetData');
class DenoLikeTarget {
    public [data] = { listeners: {} as Record<string, Array<(e: unknown) => void>> };
    public addEventListener(type: string, callback: (e: unknown) => void): void {
        (this[data].listeners[type] ??= []).push(callback);
    }
    public removeEventListener(type: string, callback: (e: unknown) => void): void {
        const list = this[data].listeners[type];
        if (list) {
            list.splice(list.indexOf(callback), 1);
        }
    }
    public dispatch(type: string): void {
        (this[data].listeners[type] ?? []).forEach((l) => l({ type }));
    }
}

describe("the engine runtime's listener keys (one per bridge call)", () => {
    it('a type whose last listener is removed leaves nothing behind; listeners still added, removed and called as before', () => {
        dropEmptyListenerKeys(DenoLikeTarget as unknown as { prototype: EventTarget });
        const target = new DenoLikeTarget();
        const seen: string[] = [];
        const a = () => seen.push('a');
        const b = () => seen.push('b');
        for (let i = 0; i < 1_000; i++) {
            const once = () => seen.push(`call ${i}`);
            target.addEventListener(`response:${i}`, once);
            target.removeEventListener(`response:${i}`, once);
        }
        target.addEventListener('x', a);
        target.addEventListener('x', b);
        target.removeEventListener('x', a);
        target.dispatch('x');
        target.dispatch('response:3');
        expect(seen).toEqual(['b']);
        expect(Object.keys(target[data].listeners)).toEqual(['x']);
        target.removeEventListener('x', b);
        expect(Object.keys(target[data].listeners)).toEqual([]);
    });

    it('patches once however often the app is constructed', () => {
        const before = DenoLikeTarget.prototype.removeEventListener;
        dropEmptyListenerKeys(DenoLikeTarget as unknown as { prototype: EventTarget });
        expect(DenoLikeTarget.prototype.removeEventListener).toBe(before);
    });
});
