import { tick } from '../../../src/turns/tick';
import { TickJob } from '../../../src/turns/tickPorts';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, queuedTurn, ScriptedRuns, VirtualScheduler } from '../../support/turnPorts';
import { finish } from '../../../src/turns/finish';
import { answer, failPosts, runningTurn, uid } from '../../support/finishTurn';

/**
 * A turn whose finish keeps throwing (issue 32: it used to loop, a tick a second, for ever, and
 * its session's next turn waited behind it): after 30 s of failed finishes it is ended with one
 * notice, and the next turn goes. A finish that fails for a moment still delivers the answer.
 */

const NOTICE = ':warning: This answer could not be delivered: the app ran into an error while finishing it. Please ask again.';
const SESSION = 'agent:main:rocketchat:channel:R1:U1';

/**
 * Turn A of the session runs at Hermes (run_1, ended with "answer A"); turn B waits behind it.
 * `server()` throws while `broken(time)` says so and A is still stored: a fault of A's finish alone.
 */
async function stuckFinish(broken: (elapsed: number) => boolean, over: Partial<TurnRecord> = {}) {
    const sched = new VirtualScheduler();
    const transport = new ScriptedRuns();
    const env = memoryTickPorts({ sched, transport });
    const start = sched.time;
    const a = queuedTurn(uid('A'), { seq: 1, sessionKey: SESSION, phase: 'running', transport: 'runs', runId: 'run_1', startedAt: start, ...over });
    const b = queuedTurn(uid('B'), { seq: 2, sessionKey: SESSION, createdAt: a.createdAt + 1, waiting: true });
    await env.store.save(a);
    await env.store.save(b);
    transport.statuses.set('run_1', { status: 'completed', output: 'answer A' });
    const server = env.ports.server;
    env.ports.server = async (fresh) => {
        if (broken(sched.time - start) && (await env.store.get(a.id))) {
            throw new TypeError("Cannot read properties of undefined (reading 'maxMessageSize')");
        }
        return server(fresh);
    };
    const run = (job: TickJob) => tick(job, env.ports).catch(() => undefined);
    /** What the room shows of A: B's status message is B's. */
    const shownOfA = () => env.chat.visible().filter((m) => m.mark?.turnId !== b.id);
    sched.schedule({ turnId: a.id, chain: a.chain }, 0);
    await env.store.waitOn?.(b.id, [a.id]);
    return { ...env, sched, transport, a, b, run, start, shownOfA };
}

describe('a finish that keeps throwing', () => {
    it('ends its turn after 30 s with one notice; the chain stops and the next turn of the session is sent', async () => {
        const env = await stuckFinish(() => true);
        await env.sched.runUntil(env.start + 29_000, env.run);
        expect(await env.store.get(env.a.id)).toBeDefined();
        expect(env.shownOfA()).toEqual([]);

        await env.sched.runUntil(env.start + 35_000, env.run);
        expect(await env.store.get(env.a.id)).toBeUndefined();
        expect(env.shownOfA().map((m) => [m.kind, m.text])).toEqual([['notice', NOTICE]]);
        expect(env.sched.pendingFor(env.a.id)).toBe(0);
        expect(env.logs.filter((l) => l.includes('could not be finished for 30 s'))).toEqual([
            expect.stringContaining("(Cannot read properties of undefined (reading 'maxMessageSize'))"),
        ]);
        // The turn behind it reached Hermes.
        expect(env.transport.count('POST', /^\/v1\/runs$/)).toBe(1);
        expect((await env.store.get(env.b.id))?.phase).toBe('running');
    });

    it('whispers the notice to the asker of a private turn, nothing in the room', async () => {
        const env = await stuckFinish(() => true, { privateTo: 'U1', privateLanguage: 'de' });
        await env.sched.runUntil(env.start + 35_000, env.run);
        expect(await env.store.get(env.a.id)).toBeUndefined();
        expect(env.shownOfA()).toEqual([]);
        expect(env.chat.whispers.map((w) => [w.userId, w.text])).toEqual([['U1', NOTICE]]);
    });

    it('that fails for 20 s and then works delivers the answer, no notice', async () => {
        const env = await stuckFinish((elapsed) => elapsed < 20_000);
        await env.sched.runUntil(env.start + 35_000, env.run);
        expect(await env.store.get(env.a.id)).toBeUndefined();
        expect(env.shownOfA().map((m) => [m.kind, m.text])).toEqual([['answer', '@alice answer A']]);
    });
});

describe('the bound itself (finish called as the ticks would)', () => {
    /** A running turn whose finish throws at the server read, every time. */
    async function failing() {
        const env = await runningTurn();
        env.ports.server = async () => {
            throw new TypeError('server settings unreadable');
        };
        const at = (ms: number) => {
            env.sched.time = env.rec.startedAt! + 10_000 + ms;
            return finish(env.rec, answer('hi'), env.ports);
        };
        return { ...env, at };
    }

    it('gives up on the third failure 30 s after the first, not sooner', async () => {
        const env = await failing();
        await expect(env.at(0)).rejects.toThrow('server settings unreadable');
        await expect(env.at(29_999)).rejects.toThrow('server settings unreadable');
        await expect(env.at(30_000)).resolves.toBeUndefined();
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });

    it('waits for the third failure even when 30 s have passed', async () => {
        const env = await failing();
        await expect(env.at(0)).rejects.toThrow();
        await expect(env.at(40_000)).rejects.toThrow();
        expect(await env.store.get(env.rec.id)).toBeDefined();
        await expect(env.at(40_001)).resolves.toBeUndefined();
    });

    it("posts its notice with the turn's mark, and removes the turn's stop request with it", async () => {
        const env = await failing();
        env.store.stops.set(env.rec.id, 'bob');
        await env.at(0).catch(() => undefined);
        await env.at(1).catch(() => undefined);
        await env.at(30_000);
        expect(env.chat.visible().map((m) => [m.kind, m.text, m.mark?.turnId])).toEqual([['notice', NOTICE, env.rec.id]]);
        expect(env.store.stops.has(env.rec.id)).toBe(false);
    });

    it('logs that the asker could not be told when the notice cannot be posted either', async () => {
        const env = await failing();
        failPosts(env.chat, [new Error('chat down')]);
        await env.at(0).catch(() => undefined);
        await env.at(1).catch(() => undefined);
        await env.at(30_000);
        expect(env.logs).toContain(`The asker of message ${env.rec.id} in room R1 could not be told that it failed.`);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });

    it('posts no notice when the whole answer was posted before the finish began to fail', async () => {
        const env = await runningTurn();
        // The answer goes out; the session's read (after the posting) fails from then on.
        env.ports.sessions.get = async () => {
            throw new TypeError('session record unreadable');
        };
        const at = (ms: number) => {
            env.sched.time = env.rec.startedAt! + 10_000 + ms;
            return finish(env.rec, answer('hi'), env.ports);
        };
        await expect(at(0)).rejects.toThrow('session record unreadable');
        await expect(at(1)).rejects.toThrow('session record unreadable');
        await at(30_000);
        expect(env.chat.visible().map((m) => [m.kind, m.text])).toEqual([['answer', '@alice hi']]);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });

    it("closes the turn's open approval and records a scheduled prompt's run as failed", async () => {
        const request = { command: 'rm -rf /tmp/build', description: 'delete the build', choices: ['once', 'deny'], allowPermanent: false };
        const env = await stuckFinish(() => true, { cron: { jobId: 'J1', name: 'nightly' } });
        const approvalId = await env.chat.post({ roomId: 'R1' }, 'approve rm -rf /tmp/build?', 'approval', { turnId: env.a.id });
        await env.store.save({ ...env.a, approval: { messageId: approvalId, request, number: 1 } });
        const runs: unknown[] = [];
        env.ports.cronDone = async (jobId, runId, outcome) => void runs.push([jobId, runId, outcome]);
        await env.sched.runUntil(env.start + 35_000, env.run);
        expect(await env.store.get(env.a.id)).toBeUndefined();
        expect(env.chat.messages.find((m) => m.id === approvalId)?.text).toBe(
            ':hourglass: The approval for `rm -rf /tmp/build` timed out; Hermes did not run it.',
        );
        expect(runs).toEqual([['J1', env.a.id, { at: expect.any(Number), status: 'failed', error: 'finish-failed' }]]);
    });
});
