import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { engineReacts } from '../../rig/environment';
import { FakeHermes, pollUntil, storedTurnHead, useRigAndHermes } from '../support/e2e';

/**
 * Issue 34 §4 on v0.18.2 (no steer route): the messages a person sends while their turn runs
 * become one next turn (`busy_input_mode` auto = merge here), each kept as its own `[New
 * message]`; `queue` answers each in turn; another person's message in a shared thread is never
 * merged past. Steering on a server that offers it: followUpsSteer.test.ts.
 */
const env = useRigAndHermes({ admin_user_ids: '', progress_in_channel: 'off', stream_answers: false, status_delay_seconds: 0 });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

type Run = { input: string };
const runs = (): Run[] => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs').map((r) => r.json as Run);
const person = (name: string) => rig.user(`${name}${++n}`);

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    // The scripted model: SLOW streams 30 words, one per interval (about 3 s here); the rest is echoed.
    hermes.configure({ slowIntervalMs: 100 });
});

afterAll(() => hermes.configure({ slowIntervalMs: 50 }));

/** Posts a slow question and waits until its run is at Hermes. */
async function slowTurn(who: StoredUser, room: StoredRoom, text: string, tmid?: string): Promise<StoredMessage> {
    const question = await rig.post(who, room, text, { tmid });
    // Hermes gets the words without the mention.
    const words = text.replace(/^@\S+ /, '');
    await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs' && JSON.stringify(r.json).includes(words), 5_000);
    return question;
}

/** The bot's answers in a room (or thread) after `after`, once `count` are there and the app is idle. */
async function answersAfter(room: StoredRoom, after: StoredMessage, count: number, timeoutMs = 20_000): Promise<StoredMessage[]> {
    const mine = () => rig.botMessagesOfKind(room, 'answer').filter((m) => m.createdAt >= after.createdAt);
    await rig.waitForMessage(() => mine().length >= count, timeoutMs, `${count} answers`);
    await rig.settle();
    return mine();
}

describe('merge (v0.18.2: busy_input_mode auto)', () => {
    it('three messages sent during a run become one next turn, each its own message, answered once; ↪️ then ✅ on the ones taken in', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const slow = await slowTurn(alice, dm, 'SLOW report please');
        const f1 = await rig.post(alice, dm, 'also the budget');
        const f2 = await rig.post(alice, dm, 'and the risks');
        const f3 = await rig.post(alice, dm, 'thanks!');
        const answers = await answersAfter(dm, slow, 2);
        expect(answers).toHaveLength(2);
        expect(runs().map((r) => r.input)).toEqual(['SLOW report please', 'also the budget\n\n[New message]\nand the risks\n\n[New message]\nthanks!']);
        // The scripted model echoes its input on one line: one user message, after the first exchange.
        expect(answers[1].text).toBe('ECHO: also the budget [New message] and the risks [New message] thanks! | user_turns=2 | prev=SLOW report please');
        // The first carries the turn; the ones taken in show ↪️, then ✅ with its answer (engines
        // 1.58 and 1.59 give apps no reactions); their records are gone either way.
        if (engineReacts()) {
            expect(rig.botReactions(f1).at(-1)).toBe('+:white_check_mark:');
            for (const m of [f2, f3]) {
                expect(rig.botReactions(m)).toContain('+:arrow_right_hook:');
                expect(rig.botReactions(m).at(-1)).toBe('+:white_check_mark:');
            }
        }
        expect([f1, f2, f3].map((m) => storedTurnHead(rig, m.id))).toEqual([undefined, undefined, undefined]);
        // Each message is handled once: nothing more is asked, and no turn is left open.
        await rig.settle();
        expect(runs()).toHaveLength(2);
        expect(rig.logText({ appLinesOnly: true })).toContain(`takes in the follow-ups ${f2.id}, ${f3.id} (busy_input_mode).`);
    }, 40_000);

    it("in a thread: the same person's follow-ups are one next turn, the thread's block before them", async () => {
        const alice = person('alice');
        const room = rig.room(`plan${n}`, [alice, rig.bot]);
        const root = await rig.post(alice, room, 'the plan', { silent: true });
        const mention = `@${rig.bot.username}`;
        const slow = await slowTurn(alice, room, `${mention} SLOW status`, root.id);
        await rig.post(alice, room, `${mention} also the budget`, { tmid: root.id });
        await rig.post(alice, room, `${mention} and the risks`, { tmid: root.id });
        await answersAfter(room, slow, 2);
        expect(runs()).toHaveLength(2);
        const merged = runs()[1].input;
        expect(merged).toMatch(/\[New message\]\n[^\n]*also the budget\n\n\[New message\]\n[^\n]*and the risks$/);
    }, 40_000);

    it("in a shared thread another person's message is never merged past: order stays", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`team${n}`, [alice, bob, rig.bot]);
        const root = await rig.post(alice, room, 'launch thread', { silent: true });
        const mention = `@${rig.bot.username}`;
        const slow = await slowTurn(alice, room, `${mention} SLOW status`, root.id);
        await rig.post(alice, room, `${mention} alice one`, { tmid: root.id });
        await rig.post(bob, room, `${mention} bob one`, { tmid: root.id });
        await rig.post(alice, room, `${mention} alice two`, { tmid: root.id });
        await answersAfter(room, slow, 4);
        const triggers = runs().map((r) => r.input.split('[New message]\n').slice(1).join(' + '));
        expect(triggers.map((t) => t.replace(/\s+/g, ' ').trim())).toEqual([
            expect.stringContaining('SLOW status'),
            expect.stringContaining('alice one'),
            expect.stringContaining('bob one'),
            expect.stringContaining('alice two'),
        ]);
    }, 40_000);
});

describe('interrupt', () => {
    it('a message sent during the run stops it, and its question is asked again with the new one, in one turn', async () => {
        await rig.setting('busy_input_mode', 'interrupt');
        try {
            const alice = person('alice');
            const dm = rig.direct([alice, rig.bot]);
            const slow = await slowTurn(alice, dm, 'SLOW report please');
            const [first] = hermes.runIds();
            await rig.post(alice, dm, 'only the budget, please');
            await hermes.waitForRunStatus(first, 'cancelled', 10_000);
            await rig.waitForMessage(
                () => runs().length === 2 && rig.botMessagesOfKind(dm, 'answer').some((m) => m.createdAt >= slow.createdAt),
                20_000,
                'the answer of both',
            );
            await rig.settle();
            expect(runs().map((r) => r.input)).toEqual(['SLOW report please', 'SLOW report please\n\n[New message]\nonly the budget, please']);
            const texts = rig
                .botMessages(dm)
                .filter((m) => m.createdAt >= slow.createdAt)
                .map((m) => m.text);
            expect(texts.some((t) => t.includes(`Stopped by @${alice.username}`))).toBe(true);
            // The stopped run's notice, then one answer: the one of both questions.
            expect(texts.at(-1)).toBe(`SLOW:${' tick'.repeat(30)}`);
            expect(rig.botMessagesOfKind(dm, 'answer').filter((m) => m.createdAt >= slow.createdAt)).toHaveLength(1);
        } finally {
            await rig.setting('busy_input_mode', 'auto');
        }
    }, 40_000);
});

describe('queue', () => {
    it('answers each message sent during a run in turn', async () => {
        await rig.setting('busy_input_mode', 'queue');
        try {
            const alice = person('alice');
            const dm = rig.direct([alice, rig.bot]);
            const slow = await slowTurn(alice, dm, 'SLOW report please');
            await rig.post(alice, dm, 'also the budget');
            await rig.post(alice, dm, 'and the risks');
            await answersAfter(dm, slow, 3);
            expect(runs().map((r) => r.input)).toEqual(['SLOW report please', 'also the budget', 'and the risks']);
        } finally {
            await rig.setting('busy_input_mode', 'auto');
        }
    }, 40_000);
});

// Last in the file: the killed process's calls end at the engine's 30 s timeout, after the test.
describe('a restart', () => {
    it('the app process killed while the merged turn runs: its answer comes once after the restart, and the merged follow-up ends with it', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const slow = await slowTurn(alice, dm, 'SLOW report please');
        const f1 = await rig.post(alice, dm, 'SLOW also the budget');
        const f2 = await rig.post(alice, dm, 'and the risks');
        // The merged turn is at Hermes (its run's input carries both), then the process dies.
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs' && JSON.stringify(r.json).includes('and the risks'), 15_000);
        await rig.server.killAppProcess(rig.appId);
        // The bound after a restart (restarts.test.ts): 30 s from the process being back. The
        // new process takes the turn over once the old one counts as gone (11 s); a loaded CI run
        // once needed more than 20 s here.
        const answers = await answersAfter(dm, slow, 2, 30_000);
        expect(answers.map((m) => m.text)).toEqual([`SLOW:${' tick'.repeat(30)}`, `SLOW:${' tick'.repeat(30)}`]);
        // f2 went into f1's turn: no turn, run or answer of its own, ✅ with the answer.
        expect(runs().filter((r) => r.input === 'and the risks')).toEqual([]);
        await pollUntil('the merged follow-up ended', () => (storedTurnHead(rig, f2.id) === undefined ? true : undefined), 15_000);
        if (engineReacts()) {
            expect(rig.botReactions(f1).at(-1)).toBe('+:white_check_mark:');
            expect(rig.botReactions(f2).at(-1)).toBe('+:white_check_mark:');
        }
        expect(rig.botMessagesOfKind(dm, 'answer').filter((m) => m.createdAt >= slow.createdAt)).toHaveLength(2);
    }, 90_000);
});
