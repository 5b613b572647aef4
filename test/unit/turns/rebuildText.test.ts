import { EngineTurns } from '../../../src/engine/adapters/engineTurns';
import { claimFresh } from '../../../src/turns/freshClaim';
import { tick } from '../../../src/turns/tick';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { MemoryPersistence } from '../../support/memoryPersistence';
import { MemoryHistory, memoryTickPorts, queuedTurn, ScriptedRuns, VirtualScheduler } from '../../support/turnPorts';

/** A turn stored with its text kept in its event's call, and that process gone before the turn's next save. */
async function strandedTurn(id: string, at: number, turns: EngineTurns): Promise<TurnRecord> {
    const rec: TurnRecord = {
        ...queuedTurn(id, { createdAt: at, seq: at }),
        owner: { as: 'sending', fresh: true, process: 'a-process-that-died', until: at + 1, at },
        user: 'the text the dead process held',
    };
    await turns.save(rec, { textKept: true });
    return rec;
}

function question(id: string, text: string, at: number, sender = { id: 'U1', username: 'alice' }) {
    return { id, senderId: sender.id, senderUsername: sender.username, text, createdAt: new Date(at), isSystem: false, files: [], roomId: 'R1' };
}

/** Tick ports over the engine's turn store (which leaves the kept text out), a room history, and a scripted Hermes. */
function engineSetup() {
    const db = new MemoryPersistence();
    const turns = new EngineTurns(db.read, db.write);
    const history = new MemoryHistory();
    const transport = new ScriptedRuns();
    const env = memoryTickPorts({ sched: new VirtualScheduler(), store: turns, history, transport, botUsername: 'hermes' });
    return { ...env, db, turns, history, transport };
}

describe('a turn stored with its text kept in its event (rebuildText)', () => {
    it('the engine store writes its head alone, and the turn’s next save writes the text', async () => {
        const db = new MemoryPersistence();
        const turns = new EngineTurns(db.read, db.write);
        const rec = queuedTurn('KEPT', { user: 'the question' });
        claimFresh(rec, { maxParallelTurns: 8, turnTimeoutMinutes: 30, hermesTimeoutSeconds: 120 }, 1_000);
        await turns.save(rec, { textKept: true });
        expect(db.rows.size).toBe(1);
        expect((await turns.get('KEPT'))?.user).toBeUndefined();
        // Its fresh mark goes, its sending claim stays.
        rec.owner = rec.owner && { ...rec.owner, fresh: undefined };
        rec.phase = 'running';
        await turns.save(rec);
        expect(db.withAssociation('hermes-turn-payload:')).toEqual([expect.objectContaining({ user: 'the question' })]);
        expect((await turns.get('KEPT'))?.user).toBe('the question');
    });

    it('when its process died before that save, the turn is sent with its text built again: the question and its context', async () => {
        const { ports, logs, db, turns, history, transport } = engineSetup();
        const at = ports.now() - 60_000;
        history.messages.push(question('EARLIER', 'the deploy moved to five', at - 30_000, { id: 'U2', username: 'bob' }));
        history.messages.push(question('STRANDED', '@hermes when is the deploy?', at));
        const rec = await strandedTurn('STRANDED', at, turns);
        await tick({ turnId: 'STRANDED', chain: rec.chain }, ports);
        const create = transport.requests.find((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/runs');
        const body = JSON.parse(String(create?.body)) as { input: string; instructions: string };
        expect(body.input).toContain('when is the deploy?');
        expect(body.input).not.toContain('@hermes');
        expect(body.input).toContain('the deploy moved to five');
        expect(body.input).not.toContain('the text the dead process held');
        expect(body.instructions).toContain('from @alice');
        expect(logs.some((l) => l.includes('its text was built again'))).toBe(true);
        // Saved with the run: the payload now holds the rebuilt text.
        expect(db.withAssociation('hermes-turn-payload:')).toEqual([expect.objectContaining({ user: body.input })]);
    });

    it('a question deleted meanwhile cannot be rebuilt: the asker is told the turn was lost, nothing is sent', async () => {
        const { ports, chat, turns, transport } = engineSetup();
        const rec = await strandedTurn('DELETED', ports.now() - 60_000, turns);
        await tick({ turnId: 'DELETED', chain: rec.chain }, ports);
        expect(transport.requests.filter((r) => r.method === 'POST')).toEqual([]);
        expect(chat.messages.map((m) => m.kind)).toEqual(['notice']);
        expect(await turns.get('DELETED')).toBeUndefined();
    });

    it('a message action’s or a scheduled prompt’s turn is never rebuilt from a message (its text is its own)', async () => {
        const { ports, turns, history, transport } = engineSetup();
        const at = ports.now() - 60_000;
        history.messages.push(question('PRIVATE', '@hermes some message', at));
        const rec = await strandedTurn('PRIVATE', at, turns);
        await turns.save({ ...rec, privateTo: 'U1' }, { textKept: true });
        await tick({ turnId: 'PRIVATE', chain: rec.chain }, ports);
        expect(transport.requests.filter((r) => r.method === 'POST')).toEqual([]);
    });
});
