import { finish } from '../../../src/turns/finish';
import { memoryTickPorts, queuedTurn, VirtualScheduler } from '../../support/turnPorts';

/**
 * A quick turn's message event posts its one-part answer and then removes the record, writing
 * nothing in between. When the process dies there, the record still says a call carried the turn
 * (its carrying claim, lapsed): whoever finishes the turn after a restart looks for that answer before
 * posting (finish.ts), so the asker reads it once.
 */
async function recovered(carried: boolean) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched });
    const rec = queuedTurn('C1', {
        phase: 'running',
        kind: 'dm',
        roomType: 'd',
        transport: 'runs',
        runId: 'run_1',
        createdAt: sched.time - 20_000,
        startedAt: sched.time - 19_000,
        owner: carried ? { as: 'carrying', process: 'a-process-that-died', until: sched.time - 14_000 } : undefined,
    });
    await env.store.save(rec);
    /** Posts `text` as the bot did, `ago` ms before now. */
    const postedAgo = async (ago: number, text: string) => {
        sched.time -= ago;
        await env.chat.post({ roomId: 'R1' }, text, 'answer');
        sched.time += ago;
    };
    return { sched, ...env, rec, postedAgo };
}

describe('a turn its message event carried, finished after the event’s process died', () => {
    it('posts nothing when the answer is already there', async () => {
        const env = await recovered(true);
        // Posted by the dead event 18 s ago, before the record could go.
        await env.postedAgo(18_000, 'the answer');
        await finish(env.rec, { kind: 'answer', text: 'the answer' }, env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['the answer']);
        expect(await env.store.get('C1')).toBeUndefined();
    });

    it('is not fooled by the same text answered to the turn before it, posted just before this turn was sent', async () => {
        const env = await recovered(true);
        // The session's previous turn ended (its answer posted) 2 s before this one went to Hermes: same words.
        await env.postedAgo(21_000, 'the answer');
        await finish(env.rec, { kind: 'answer', text: 'the answer' }, env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['the answer', 'the answer']);
    });

    it('posts the answer when the event died before posting it', async () => {
        const env = await recovered(true);
        await finish(env.rec, { kind: 'answer', text: 'the answer' }, env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['the answer']);
    });

    it('does not look for it when no event carried the turn (its chain posts it, recording each part)', async () => {
        const env = await recovered(false);
        await env.postedAgo(18_000, 'the answer');
        let reads = 0;
        const read = env.chat.botMessages.bind(env.chat);
        env.chat.botMessages = async (target) => {
            reads++;
            return read(target);
        };
        await finish(env.rec, { kind: 'answer', text: 'the answer' }, env.ports);
        expect(reads).toBe(0);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['the answer', 'the answer']);
    });
});
