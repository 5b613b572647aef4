/**
 * What this app process knows of the ticks working in it right now, in one place: nothing here
 * is persisted, and a new process starts with none (a restart's turns are found by the sweep).
 */
export const ticksHere = {
    /** Turns this app process is working on right now: two ticks of one turn never overlap here. */
    busy: new Set<string>(),
    /** Turns whose steps run in a quick job's call right now (carryOn.ts). */
    quick: new Set<string>(),
    /** Jobs that came for a turn while a quick call had it: passed on if that call did not carry the turn. */
    pokedWhileQuick: new Set<string>(),
    /** Wake-ups that arrived while a tick of their turn was working: that tick passes them on when it ends. */
    wokenWhileBusy: new Set<string>(),
};

/** Whether a tick of any turn is working in this process now (its beat goes on meanwhile: processBeat.ts). */
export function ticksInHand(): boolean {
    return ticksHere.busy.size > 0;
}
