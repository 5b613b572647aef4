import { Rig, StoredUser } from '../rig';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 10, end to end in the real engine: a thread session's frontier (nothing repeated,
 * nothing skipped, across a backlog, a failed turn's notice and an app restart).
 */
const env = useRigAndHermes({ history_min_messages: 2, history_max_messages: 3 });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    rig.server.calls.reset();
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
const runInputs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs').map((r) => (r.json as { input: string }).input);

/** The context lines of a user turn, as `name: text` (the backlog line kept as is). */
function blockOf(input: string): string[] {
    const lines = input.split('\n');
    const start = lines.indexOf('[Recent chat messages - context only, not requests]');
    if (start === -1) {
        return [];
    }
    return lines.slice(start + 1, lines.indexOf('', start)).map((l) => l.replace(/^\[\d{4}-\d\d-\d\d \d\d:\d\d [^\]]+\] /, ''));
}

describe('the thread frontier', () => {
    it('3 people, 6 turns, a backlog over the cap, a notice and an app restart: every message reaches the session once, in order', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const carol = person('carol');
        const room = rig.room(`frontier${n}`, [alice, bob, carol, rig.bot]);
        const root = await rig.post(alice, room, 'root: the release', { silent: true, createdAt: new Date(Date.now() - 60_000) });
        const say = (who: StoredUser, text: string) => rig.post(who, room, text, { tmid: root.id, silent: true });
        const turn = (who: StoredUser, text: string) => rig.ask(who, room, `@${bot()} ${text}`, { tmid: root.id });
        hermes.setReply((msg) => `re ${msg.split('\n').pop()}`);

        for (const [who, text] of [
            [bob, 'r1'],
            [carol, 'r2'],
            [alice, 'r3'],
            [bob, 'r4'],
            [carol, 'r5'],
        ] as Array<[StoredUser, string]>) {
            await say(who, text);
        }
        await turn(bob, 'q1');
        await say(carol, 'c1');
        await turn(alice, 'q2');
        // The app process dies between two turns: the frontier must come from persistence.
        await rig.server.killAppProcess(rig.appId);
        // A failed turn leaves a notice in the thread: its question and the notice are the session's to see later.
        hermes.script({ method: 'POST', path: '/v1/runs', error: 'internal_error', times: 1 });
        await turn(carol, 'q3');
        expect(rig.botMessagesOfKind(room, 'notice')).toHaveLength(1);
        await say(alice, 'a1');
        await turn(bob, 'q4');
        await turn(carol, 'q5');
        await say(bob, 'b1');
        await turn(alice, 'q6');

        const inputs = runInputs();
        expect(inputs).toHaveLength(6);
        // q3's run was refused: Hermes never held its block, so the frontier stayed and the next turn hands it over again.
        expect(blockOf(inputs[2])).toEqual([`${carol.username}: c1`]);
        const blocks = inputs.filter((_, i) => i !== 2).map(blockOf);
        const backlog = (k: number) => `[${k} more messages of this thread, all from before the new message, follow in later turns]`;
        const handed = blocks.flat().filter((l) => !/^\[\d+ more messages of this thread/.test(l));
        // Nothing repeated.
        expect(new Set(handed).size).toBe(handed.length);
        // Nothing skipped: in thread order, every message the session did not already hold
        // (its answered questions and the bot's answers to them are in the transcript).
        const notice = rig.botMessagesOfKind(room, 'notice')[0].text;
        const u = (p: StoredUser) => p.username;
        expect(blocks).toEqual([
            [`${u(alice)}: root: the release`, `${u(bob)}: r1`, `${u(carol)}: r2`, backlog(3)],
            [`${u(alice)}: r3`, `${u(bob)}: r4`, `${u(carol)}: r5`, backlog(1)],
            [`${u(carol)}: c1`, `${u(carol)}: @${bot()} q3`, `${bot()} (you): ${notice}`, backlog(1)],
            [`${u(alice)}: a1`],
            [`${u(bob)}: b1`],
        ]);
        // The restarted process read the frontier from persistence: its first accepted turn went on after r5.
        expect(rig.logText()).not.toContain('blind pass');
    }, 60_000);
});
