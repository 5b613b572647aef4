import { randomUUID } from 'crypto';
import { claimAs, deserted, GONE_MS, holderOf, lastMove, release } from './owner';
import { PROCESS_ID } from './processId';
import { TickPorts } from './tickPorts';
import { describe, TurnRecord } from './turnRecord';

/**
 * A tick of a turn held only by other processes, none of which has moved it for GONE_MS, reads
 * the beats once; if every holder is gone (beats.ts deserted), what they claimed is released
 * here and this tick goes on with the turn, in a new chain. The sweep does the same, but it comes every 10 s
 * and its job can wait 30 s behind a call of a killed process (AppsEngineDenoRuntime's request
 * timeout): npm run chaos saw a finishing lease of a process killed mid-post hold its turn, and
 * every turn behind it in its conversation, 20–40 s; the turn's own chain ticks every 1–2 s.
 *
 * Cost: nothing while a holder moves the turn (its writes are newer than GONE_MS) or this
 * process holds it; otherwise one read of the beats per tick, and one write when taken over.
 */
export async function takeOverFromGone(rec: TurnRecord, ports: Pick<TickPorts, 'beats' | 'store' | 'now' | 'log'>): Promise<void> {
    const now = ports.now();
    const holder = holderOf(rec, now);
    const carried = claimAs(rec, 'carrying');
    const held = holder ? holder !== PROCESS_ID : Boolean(carried && carried.process !== PROCESS_ID);
    if (!ports.beats || !held || now - lastMove(rec) <= GONE_MS || !deserted(rec, await ports.beats.readBeats(), now)) {
        return;
    }
    const since = lastMove(rec);
    release(rec, now);
    // A new chain, as the sweep gives (its next ticks run on another scheduler lane than the one
    // the gone process may have left busy; a late tick of the old chain ends itself).
    rec.chain = randomUUID();
    rec.tickAt = now;
    await ports.store.save(rec);
    ports.log.info(`Turn ${describe(rec)} its app process is gone (no sign of it for ${Math.round((now - since) / 1000)} s); taken over by its next tick.`);
}
