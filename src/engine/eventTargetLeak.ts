/**
 * Apps-Engine 1.62's Deno runtime answers every bridge call (each read, persistence or write
 * accessor call) through one EventTarget: `addEventListener('response:<random id>')`, then
 * `removeEventListener` once answered (deno-runtime/lib/messenger.ts, sendRequest). Deno's
 * EventTarget empties the listener list but keeps its key, so each call leaves a string and an
 * empty array behind for the life of the process: about 135 bytes, some 40 calls a turn, about
 * 5.5 MB per 1,000 turns that no GC frees. This drops a type's key once its last listener is
 * removed. Idempotent; a no-op where EventTarget keeps its listeners elsewhere (Node, jest).
 */
const PATCHED = Symbol.for('hermes.eventTargetEmptyKeys');

export function dropEmptyListenerKeys(target: { prototype: EventTarget } | undefined = typeof EventTarget === 'undefined' ? undefined : EventTarget): void {
    const proto = target?.prototype as (EventTarget & { [PATCHED]?: true }) | undefined;
    if (!proto || proto[PATCHED]) {
        return;
    }
    const remove = proto.removeEventListener;
    proto.removeEventListener = function (
        this: EventTarget,
        type: string,
        callback: EventListenerOrEventListenerObject | null,
        options?: EventListenerOptions | boolean,
    ): void {
        remove.call(this, type, callback, options);
        for (const key of Object.getOwnPropertySymbols(this)) {
            const listeners = (this as unknown as Record<symbol, { listeners?: Record<string, unknown[]> } | undefined>)[key]?.listeners;
            if (listeners && typeof listeners === 'object' && Array.isArray(listeners[type]) && listeners[type].length === 0) {
                delete listeners[type];
            }
        }
    };
    Object.defineProperty(proto, PATCHED, { value: true });
}
