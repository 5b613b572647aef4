import { Rig } from '../../rig';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 31 items 7 and 8, end to end through the UIKit path: a message action follows the rules
 * a mention follows (the room's `off`, its profile and instruction, the daily budgets), and a
 * private answer never makes the bot follow the thread it summarised.
 */
const env = useRigAndHermes({});
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    hermes.setReply((msg) => `answer to: ${msg.split('\n').pop()}`);
});

afterEach(async () => {
    await rig.setting('room_policies', '');
    await rig.setting('budget_user_turns_per_day', 0);
    await rig.setting('thread_follow', 'off');
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
const runs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');
const hour = (h: number) => new Date(Date.now() - h * 3600_000);

describe('message actions are admitted like a mention', () => {
    it('Catch me up in a room set to off: refused with one private notice; nothing reaches Hermes', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`acoff${n}`, [alice, bob, rig.bot]);
        await rig.post(bob, room, 'the release moved to Friday', { silent: true, createdAt: hour(1) });
        await rig.setting('room_policies', `${room.id} off`);
        await rig.clickActionButton(alice, { actionId: 'hermes-catch-up', room });
        await rig.settle();
        expect(rig.ephemerals(alice, room)).toEqual(['Hermes is switched off in this room by its room policy.']);
        expect(runs()).toHaveLength(0);
        expect(rig.botMessages(room)).toHaveLength(0);
    });

    it("Catch me up in a room with a profile and an instruction: it runs on that profile, with the room's instruction", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`acprof${n}`, [alice, bob, rig.bot]);
        await rig.post(bob, room, 'the release moved to Friday', { silent: true, createdAt: hour(1) });
        await rig.setting('room_policies', `${room.id} profile=research model=fast prompt="Answer in French."`);
        await rig.clickActionButton(alice, { actionId: 'hermes-catch-up', room });
        await rig.waitForEphemeral((e) => e.userId === alice.id && e.text.startsWith('answer to'));
        await rig.settle();
        const [run] = runs();
        expect(run.url.startsWith('/p/research/v1/runs')).toBe(true);
        expect(hermes.turns.map((t) => ({ profile: t.profile, model: t.model }))).toEqual([{ profile: 'research', model: 'fast' }]);
        expect((run.json as { instructions: string }).instructions).toContain('The workspace admins set this instruction for this room: Answer in French.');
        expect(run.headers['x-hermes-session-key']).toMatch(/^agent:research:rocketchat:oneoff:catchup\./);
        expect(rig.botMessages(room)).toHaveLength(0);
    });

    it('Catch me up over the daily budget: refused with the budget’s private notice; no further Hermes request', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`acbud${n}`, [alice, bob, rig.bot]);
        await rig.post(bob, room, 'the release moved to Friday', { silent: true, createdAt: hour(1) });
        await rig.setting('budget_user_turns_per_day', 1);
        await rig.ask(alice, room, `@${bot()} first`);
        expect(runs()).toHaveLength(1);
        await rig.clickActionButton(alice, { actionId: 'hermes-catch-up', room });
        await rig.settle();
        expect(rig.ephemerals(alice, room)).toEqual(['You have used your 1 turns for today. The budget resets at midnight (UTC).']);
        expect(runs()).toHaveLength(1);
    });
});

describe('a private answer never makes the bot follow the thread', () => {
    it('after a private Summarize, an unaddressed message in that thread gets no answer (thread_follow asker)', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`acfol${n}`, [alice, bob, rig.bot]);
        await rig.setting('thread_follow', 'asker');
        const root = await rig.post(alice, room, 'Incident: the API is slow', { silent: true });
        const reply = await rig.post(bob, room, 'It is the database', { tmid: root.id, silent: true });
        hermes.setReply(() => 'The API was slow because of the database.');
        await rig.clickActionButton(alice, { actionId: 'hermes-summarize', room, message: reply });
        await rig.waitForEphemeral((e) => e.userId === alice.id && e.text.includes('because of the database'));
        await rig.settle();
        expect(runs()).toHaveLength(1);
        await rig.post(alice, room, 'so who restarts it?', { tmid: root.id });
        await rig.settle();
        expect(runs()).toHaveLength(1);
        expect(rig.botMessages(room)).toHaveLength(0);
    });
});
