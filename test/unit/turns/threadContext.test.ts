import { ContextMessage } from '../../../src/context/contextMessage';
import { tick } from '../../../src/turns/tick';
import { TickJob } from '../../../src/turns/tickPorts';
import { MemoryHistory, MemorySessions, memoryTickPorts, queuedTurn, ScriptedRuns, VirtualScheduler } from '../../support/turnPorts';

/** A thread turn gets its block when it reaches Hermes, and the session's frontier moves only when Hermes answered. */
const KEY = 'agent:main:rocketchat:channel:R1:ROOT';
const USER = '[Rocket.Chat room_id: R1]\n\n[New message]\n[alice] question';

function setup() {
    const sched = new VirtualScheduler();
    const history = new MemoryHistory();
    const sessions = new MemorySessions();
    const env = memoryTickPorts({ sched, history, sessions });
    const run = (job: TickJob) => tick(job, env.ports);
    const say = (id: string, sender = 'U2', text = id) =>
        history.messages.push({
            id,
            senderId: sender,
            senderUsername: sender.toLowerCase(),
            text,
            createdAt: new Date(sched.time + history.messages.length),
            threadId: id === 'ROOT' ? undefined : 'ROOT',
            isSystem: false,
            files: [],
        } as ContextMessage);
    return { sched, history, sessions, run, say, ...env, transport: env.transport as ScriptedRuns };
}

async function turn(env: ReturnType<typeof setup>, id: string, finish: 'completed' | 'failed') {
    const { sched, store, run, transport } = env;
    env.say(id, 'U1', `@bot ${id}`);
    sched.time += 10;
    await store.save(queuedTurn(id, { sessionKey: KEY, threadId: 'ROOT', user: USER, threadContext: 'pending', createdAt: sched.time, seq: sched.time }));
    sched.schedule({ turnId: id, chain: `chain-${id}` }, 0);
    await sched.runUntil(sched.time + 10, run);
    const runId = `run_${transport.count('POST', /^\/v1\/runs$/)}`;
    transport.statuses.set(runId, finish === 'completed' ? { status: 'completed', output: `answer to ${id}` } : { status: 'failed', error: 'boom' });
    await sched.runUntil(sched.time + 8_000, run);
    const body = transport.requests.filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/runs').pop()?.body as string;
    return (JSON.parse(body) as { input: string }).input;
}

const block = (input: string) =>
    input
        .split('\n')
        .filter((l) => /^\[\d{4}-/.test(l))
        .map((l) => l.replace(/^\[[^\]]+\] /, ''));

describe('thread context at submission', () => {
    it("reads the thread beside the session's record, not after it (one round trip fewer before Hermes)", async () => {
        const env = setup();
        env.say('ROOT', 'U2', 'the thread');
        env.say('p1');
        let sessionRead: () => void = () => undefined;
        const get = env.sessions.get.bind(env.sessions);
        env.sessions.get = async (key: string) => {
            // The session's read is still on its way when the thread's goes out.
            await new Promise<void>((resolve) => {
                sessionRead = resolve;
            });
            return get(key);
        };
        env.say('T0', 'U1', '@bot T0');
        await env.store.save(
            queuedTurn('T0', {
                sessionKey: KEY,
                threadId: 'ROOT',
                user: USER,
                threadContext: 'pending',
                createdAt: env.sched.time + 10,
                seq: env.sched.time + 10,
            }),
        );
        const ticked = tick({ turnId: 'T0', chain: 'chain-T0' }, env.ports);
        for (let i = 0; i < 10; i++) {
            await new Promise((r) => setImmediate(r));
        }
        expect(env.history.reads).toBe(1);
        expect(env.transport.count('POST', /^\/v1\/runs$/)).toBe(0);
        sessionRead();
        await ticked;
        for (let i = 0; i < 10; i++) {
            await new Promise((r) => setImmediate(r));
        }
        expect(env.transport.count('POST', /^\/v1\/runs$/)).toBe(1);
        const input = (JSON.parse(env.transport.requests.find((r) => r.method === 'POST')?.body as string) as { input: string }).input;
        expect(block(input)).toEqual(['u2: the thread', 'u2: p1']);
    });

    it('the first turn gets the thread from its root; the next only what came after, without its answer; one thread read each', async () => {
        const env = setup();
        env.say('ROOT', 'U2', 'the thread');
        env.say('p1');
        expect(block(await turn(env, 'T1', 'completed'))).toEqual(['u2: the thread', 'u2: p1']);
        const answerId = env.chat.answers()[0].id;
        env.history.messages.push({
            ...env.history.messages[1],
            id: answerId,
            senderId: 'BOT',
            senderUsername: 'bot',
            text: 'answer to T1',
            botKind: 'answer',
            createdAt: new Date(env.sched.time),
        });
        expect(env.sessions.records.get(KEY)?.frontier).toMatchObject({ id: 'T1', held: [{ id: answerId }] });
        env.say('p2');
        env.history.reads = 0;
        const i2 = await turn(env, 'T2', 'completed');
        expect(block(i2)).toEqual(['u2: p2']);
        expect(env.history.reads).toBe(1);
    });

    it('a turn Hermes did not answer moves nothing: the next turn hands over the same messages and the failed question', async () => {
        const env = setup();
        env.say('ROOT', 'U2', 'the thread');
        expect(block(await turn(env, 'T1', 'failed'))).toEqual(['u2: the thread']);
        expect(env.sessions.records.get(KEY)?.frontier).toBeUndefined();
        expect(block(await turn(env, 'T2', 'completed'))).toEqual(['u2: the thread', 'u1: @bot T1']);
    });

    it('a failed thread read: the turn goes on without a block and holds only its trigger', async () => {
        const env = setup();
        env.say('ROOT', 'U2', 'the thread');
        await turn(env, 'T1', 'completed');
        env.say('p2');
        env.history.failing = true;
        expect(block(await turn(env, 'T2', 'completed'))).toEqual([]);
        expect(env.logs.some((l) => l.includes('could not be read, answering without context'))).toBe(true);
        env.history.failing = false;
        expect(block(await turn(env, 'T3', 'completed'))).toEqual(['u2: p2']);
    });
});
