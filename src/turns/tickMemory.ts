import { processMemory } from './processMemory';

/**
 * What this app process knows of the ticks working in it right now, in one place: nothing here
 * is persisted, and a new process starts with none (a restart's turns are found by the sweep).
 */
export const ticksHere = {
    /** Turns this app process is working on right now: two ticks of one turn never overlap here. */
    busy: processMemory.set<string>('ticks.busy'),
    /** Turns whose steps run in a quick job's call right now (carryOn.ts). */
    quick: processMemory.set<string>('ticks.quick'),
    /** Jobs that came for a turn while a quick call had it: passed on if that call did not carry the turn. */
    pokedWhileQuick: processMemory.set<string>('ticks.pokedWhileQuick'),
    /** Wake-ups that arrived while a tick of their turn was working: that tick passes them on when it ends. */
    wokenWhileBusy: processMemory.set<string>('ticks.wokenWhileBusy'),
};

/** Whether a tick of any turn is working in this process now (its beat goes on meanwhile: processBeat.ts). */
export function ticksInHand(): boolean {
    return ticksHere.busy.size > 0;
}
