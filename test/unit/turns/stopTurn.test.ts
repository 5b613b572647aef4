import { HermesClient } from '../../../src/hermes/client';
import { LiveTurns } from '../../../src/hermes/liveTurns';
import { stopBackgroundTurn, stopTurn } from '../../../src/turns/stopTurn';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { MemoryTurnStore, queuedTurn, ScriptedRuns, TEST_CONFIG } from '../../support/turnPorts';

/**
 * Who may stop what: `/hermes stop` (and `@bot /stop`) stops the caller's own turn in the
 * conversation; only an admin may stop someone else's. A shared thread holds several
 * people's turns in one session, so the asker check is all that keeps one member from
 * stopping another's answer.
 */
const SESSION = 'agent:main:rocketchat:channel:R1:T1';
const ALICE = { id: 'ALICE', username: 'alice' };
const BOB = { id: 'BOB', username: 'bob' };
const ADMIN = { id: 'ADMIN', username: 'boss' };

function setup() {
    const store = new MemoryTurnStore();
    const runs = new ScriptedRuns();
    const live = new LiveTurns();
    const logs: string[] = [];
    const woken: string[] = [];
    const log = {
        info: (m: string) => logs.push(m),
        warn: (m: string) => logs.push(m),
        error: (m: string) => logs.push(m),
        debug: (m: string) => logs.push(m),
    };
    const ports = (isAdmin = false) => ({
        store,
        hermes: new HermesClient(runs, TEST_CONFIG),
        live,
        log: log as never,
        isAdmin,
        wake: async (rec: TurnRecord) => {
            woken.push(rec.id);
        },
    });
    const stopCalls = () =>
        runs.requests.filter((r) => r.method === 'POST' && /\/v1\/runs\/[^/]+\/stop$/.test(new URL(r.url).pathname)).map((r) => new URL(r.url).pathname);
    return { store, runs, live, logs, woken, ports, stopCalls };
}

/** A turn of alice's that reached Hermes as run `runId`. */
const running = (id: string, over: Partial<TurnRecord> = {}) =>
    queuedTurn(id, { sessionKey: SESSION, askerId: ALICE.id, askerUsername: ALICE.username, phase: 'running', runId: `run_${id}`, transport: 'runs', ...over });

describe('stopTurn', () => {
    it("stops the asker's running turn: a stop record by their name, the run stopped in Hermes, a log line with ids only", async () => {
        const { store, logs, ports, stopCalls } = setup();
        await store.save(running('A'));
        const stopped = await stopTurn(SESSION, ALICE, ports());
        expect(stopped?.id).toBe('A');
        expect(await store.stopRequest('A')).toBe('alice');
        expect(stopCalls()).toEqual(['/v1/runs/run_A/stop']);
        expect(logs).toEqual(['Turn for message A stopped by ALICE.']);
    });

    it("does not stop someone else's turn: nothing recorded, nothing sent to Hermes", async () => {
        const { store, logs, live, woken, ports, stopCalls } = setup();
        const end = jest.spyOn(live, 'end');
        await store.save(running('A'));
        // A chat turn of alice's, and a queued one behind it: neither is bob's to stop either.
        await store.save(running('B', { runId: undefined, transport: 'chat', seq: 2 }));
        await store.save(running('C', { phase: 'queued', runId: undefined, seq: 3 }));
        expect(await stopTurn(SESSION, BOB, ports())).toBeUndefined();
        for (const id of ['A', 'B', 'C']) {
            expect(await store.stopRequest(id)).toBeUndefined();
        }
        expect(stopCalls()).toEqual([]);
        expect(end).not.toHaveBeenCalled();
        expect(woken).toEqual([]);
        expect(logs).toEqual([]);
    });

    it("lets an admin stop anyone's turn, recorded under the admin's name", async () => {
        const { store, ports, stopCalls } = setup();
        await store.save(running('A'));
        const stopped = await stopTurn(SESSION, ADMIN, ports(true));
        expect(stopped?.id).toBe('A');
        expect(await store.stopRequest('A')).toBe('boss');
        expect(stopCalls()).toEqual(['/v1/runs/run_A/stop']);
    });

    it("stops the caller's own turn, not another's, when both are open in a shared session", async () => {
        const { store, ports, woken, stopCalls } = setup();
        await store.save(running('A'));
        await store.save(queuedTurn('B', { sessionKey: SESSION, askerId: BOB.id, askerUsername: BOB.username, seq: 2 }));
        const stopped = await stopTurn(SESSION, BOB, ports());
        expect(stopped?.id).toBe('B');
        expect(await store.stopRequest('B')).toBe('bob');
        expect(await store.stopRequest('A')).toBeUndefined();
        // Bob's turn waits behind alice's without ticks: it is woken to see the stop; alice's run goes on.
        expect(woken).toEqual(['B']);
        expect(stopCalls()).toEqual([]);
    });

    it("prefers the running turn over the caller's queued ones", async () => {
        const { store, ports, woken, stopCalls } = setup();
        await store.save(running('Q', { phase: 'queued', runId: undefined, seq: 1 }));
        await store.save(running('R', { seq: 2 }));
        expect((await stopTurn(SESSION, ALICE, ports()))?.id).toBe('R');
        expect(await store.stopRequest('Q')).toBeUndefined();
        expect(stopCalls()).toEqual(['/v1/runs/run_R/stop']);
        expect(woken).toEqual([]);
    });

    it('interrupts a chat turn by ending its stream, and wakes it so it says so', async () => {
        const { store, live, woken, ports, stopCalls } = setup();
        const end = jest.spyOn(live, 'end');
        await store.save(running('A', { runId: undefined, transport: 'chat' }));
        expect((await stopTurn(SESSION, ALICE, ports()))?.id).toBe('A');
        expect(end).toHaveBeenCalledWith('A');
        expect(woken).toEqual(['A']);
        expect(stopCalls()).toEqual([]);
    });

    it('finds nothing in another conversation, nor a turn that is done', async () => {
        const { store, ports, stopCalls } = setup();
        await store.save(running('A', { sessionKey: 'agent:main:rocketchat:channel:R1:ALICE' }));
        await store.save(running('B', { phase: 'done' }));
        expect(await stopTurn(SESSION, ALICE, ports())).toBeUndefined();
        expect(await stopTurn(SESSION, ADMIN, ports(true))).toBeUndefined();
        expect(stopCalls()).toEqual([]);
        expect(await store.stopRequest('A')).toBeUndefined();
        expect(await store.stopRequest('B')).toBeUndefined();
    });
});

describe('stopBackgroundTurn (`/hermes stop <id>`)', () => {
    const task = (over: Partial<TurnRecord> = {}) =>
        running('bg.0badc0de', { sessionKey: 'agent:main:rocketchat:oneoff:bg.0badc0de', background: true, ...over });

    it('stops the task for its asker, wherever the command was run: a stop record, the run stopped', async () => {
        const { store, ports, stopCalls, logs } = setup();
        await store.save(task());
        expect((await stopBackgroundTurn('bg.0badc0de', ALICE, ports()))?.id).toBe('bg.0badc0de');
        expect(await store.stopRequest('bg.0badc0de')).toBe('alice');
        expect(stopCalls()).toEqual(['/v1/runs/run_bg.0badc0de/stop']);
        expect(logs).toEqual(['Turn for message bg.0badc0de stopped by ALICE.']);
    });

    it("refuses another person's task, an id of no task, and a turn that is not a background task (even its asker's): nothing recorded or sent", async () => {
        const { store, ports, stopCalls, logs } = setup();
        await store.save(task());
        await store.save(running('M1'));
        expect(await stopBackgroundTurn('bg.0badc0de', BOB, ports())).toBeUndefined();
        expect(await stopBackgroundTurn('bg.12345678', ALICE, ports())).toBeUndefined();
        expect(await stopBackgroundTurn('M1', ALICE, ports())).toBeUndefined();
        expect(await store.stopRequest('bg.0badc0de')).toBeUndefined();
        expect(await store.stopRequest('M1')).toBeUndefined();
        expect(stopCalls()).toEqual([]);
        expect(logs).toEqual([]);
    });

    it("an admin stops anyone's task; a queued one is woken to see its stop", async () => {
        const { store, ports, woken, stopCalls } = setup();
        await store.save(task({ phase: 'queued', runId: undefined }));
        expect((await stopBackgroundTurn('bg.0badc0de', ADMIN, ports(true)))?.id).toBe('bg.0badc0de');
        expect(await store.stopRequest('bg.0badc0de')).toBe('boss');
        expect(woken).toEqual(['bg.0badc0de']);
        expect(stopCalls()).toEqual([]);
    });
});
