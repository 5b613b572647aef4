import { Rig, StoredUser } from '../../rig';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/** Issue 13 §4, end to end: usage recorded per person, room and day; the footer; daily budgets. */
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
    hermes.setReply(() => 'ok');
});

afterEach(async () => {
    for (const id of ['budget_user_turns_per_day', 'budget_room_turns_per_day', 'budget_user_tokens_per_day']) {
        await rig.setting(id, 0);
    }
    await rig.setting('usage_footer', false);
    await rig.setting('admin_user_ids', '');
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
const runs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');
async function usageOf(who: StoredUser, args = ''): Promise<string> {
    const room = rig.direct([who, rig.bot]);
    await rig.command(who, room, `/hermes usage ${args}`.trim());
    return rig.ephemerals(who, room).pop() as string;
}

describe('usage and budgets', () => {
    it('the footer shows the turn’s tokens as Hermes reported them; /hermes usage counts turns and tokens', async () => {
        const alice = person('alice');
        const room = rig.room(`use${n}`, [alice, rig.bot]);
        await rig.setting('usage_footer', true);
        const { reply } = await rig.ask(alice, room, `@${bot()} count me`);
        expect(reply.text).toMatch(/\n\n_tokens \d+(\.\d)?k? in \/ \d+(\.\d)?k? out_$/);
        await rig.setting('usage_footer', false);
        const { reply: plain } = await rig.ask(alice, room, `@${bot()} again`);
        expect(plain.text).not.toContain('_tokens');
        const mine = await usageOf(alice);
        expect(mine.split('\n')[0]).toBe('*Your usage*');
        expect(mine).toMatch(/• Today: 2 turns, \d+ tokens in \/ \d+ out/);
    });

    it('a turn over the daily budget is not sent; the asker is told privately which budget and when it resets; admins are exempt', async () => {
        const alice = person('alice');
        const admin = person('admin');
        const room = rig.room(`budget${n}`, [alice, admin, rig.bot]);
        await rig.setting('budget_user_turns_per_day', 1);
        await rig.setting('admin_user_ids', admin.id);
        await rig.ask(alice, room, `@${bot()} first`);
        await rig.post(alice, room, `@${bot()} second`);
        await rig.settle();
        expect(runs()).toHaveLength(1);
        expect(rig.ephemerals(alice, room)).toEqual(['You have used your 1 turns for today. The budget resets at midnight (UTC).']);
        expect(rig.botMessages(room)).toHaveLength(1);
        await rig.ask(admin, room, `@${bot()} admins are exempt`);
        await rig.ask(admin, room, `@${bot()} still exempt`);
        expect(runs()).toHaveLength(3);
        // Only admins see a room's usage.
        expect(await usageOf(alice, 'room')).toBe("Only admins can see a room's or everyone's usage.");
    });

    it('a room budget stops everyone in that room, not elsewhere', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`rbudget${n}`, [alice, bob, rig.bot]);
        const other = rig.room(`rfree${n}`, [alice, rig.bot]);
        await rig.setting('budget_room_turns_per_day', 1);
        await rig.ask(alice, room, `@${bot()} one`);
        await rig.post(bob, room, `@${bot()} two`);
        await rig.settle();
        expect(rig.ephemerals(bob, room)).toEqual(['This room has used its 1 turns for today. The budget resets at midnight (UTC).']);
        await rig.ask(alice, other, `@${bot()} elsewhere`);
        expect(runs()).toHaveLength(2);
    });
});
