import { Rig, StoredRoom, StoredUser } from '../../rig';
import { USAGE_PER_CALL } from '../../fake-hermes/model';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 31, "Tests that make this last": the daily token budgets count the tokens in AND the
 * tokens out of each answered turn, as Hermes reports them. The fake Hermes reports
 * USAGE_PER_CALL for a plain answer (11 in, 7 out, the scripted model of the transcripts), so:
 * - a budget of exactly in + out is used up by one turn although the input alone and the output
 *   alone stay under it: the next turn is refused with the budget notice and never reaches Hermes;
 * - a budget of in + out + 1 is not: the second turn goes through, the third is refused.
 * Together they pin the count to in + out: any other sum (input only, output only, either
 * doubled, the larger of the two) fails one of the two.
 */
const env = useRigAndHermes({});
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

const IN = USAGE_PER_CALL.input_tokens;
const OUT = USAGE_PER_CALL.output_tokens;
const TURN = IN + OUT;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    hermes.setReply(() => 'ok');
});

afterEach(async () => {
    for (const id of ['budget_user_tokens_per_day', 'budget_room_tokens_per_day']) {
        await rig.setting(id, 0);
    }
    await rig.setting('admin_user_ids', '');
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
const runs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');
/** Whether any request Hermes received carries `text` (body, address or headers). */
const reachedHermes = (text: string) => hermes.requests.some((r) => [r.body, r.url, JSON.stringify(r.headers)].some((part) => part.includes(text)));

async function myUsage(who: StoredUser): Promise<string> {
    const dm = rig.direct([who, rig.bot]);
    return rig.commandAnswer(who, dm, '/hermes usage');
}

/** Posts a mention that the budget must stop: no run, no answer, the notice to `who` alone. */
async function refused(who: StoredUser, room: StoredRoom, words: string, notice: string): Promise<void> {
    const runsBefore = runs().length;
    const answersBefore = rig.botMessages(room).length;
    const noticesBefore = rig.ephemerals(who, room).length;
    await rig.post(who, room, `@${bot()} ${words}`);
    await rig.settle();
    expect(runs()).toHaveLength(runsBefore);
    expect(reachedHermes(words)).toBe(false);
    expect(rig.botMessages(room)).toHaveLength(answersBefore);
    expect(rig.ephemerals(who, room).slice(noticesBefore)).toEqual([notice]);
}

describe('token budgets count the tokens in and the tokens out', () => {
    it('the fake reports distinct counts in and out, each under their sum (what the cases below rest on)', () => {
        expect(IN).toBeGreaterThan(0);
        expect(OUT).toBeGreaterThan(0);
        expect(IN).not.toBe(OUT);
    });

    it("a person's budget of in + out: one turn uses it up though neither count alone would; /hermes usage shows both", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`tok${n}`, [alice, bob, rig.bot]);
        await rig.setting('budget_user_tokens_per_day', TURN);
        await rig.ask(alice, room, `@${bot()} first question`);
        expect(runs()).toHaveLength(1);
        expect(await myUsage(alice)).toBe(
            [
                '*Your usage*',
                `• Today: 1 turns, ${IN} tokens in / ${OUT} out`,
                `• Last 7 days: 1 turns, ${IN} tokens in / ${OUT} out`,
                `• Last 30 days: 1 turns, ${IN} tokens in / ${OUT} out`,
            ].join('\n'),
        );
        await refused(alice, room, 'TOKEN-BUDGET-SECOND', `You have used your ${TURN} tokens for today. The budget resets at midnight (UTC).`);
        // Her budget, not the room's: someone else in the room still gets answers.
        await rig.ask(bob, room, `@${bot()} and me?`);
        expect(runs()).toHaveLength(2);
    });

    it("a person's budget of in + out + 1: the second turn goes through, the third is refused", async () => {
        const carol = person('carol');
        const room = rig.room(`tok${n}`, [carol, rig.bot]);
        await rig.setting('budget_user_tokens_per_day', TURN + 1);
        await rig.ask(carol, room, `@${bot()} one`);
        await rig.ask(carol, room, `@${bot()} two`);
        expect(runs()).toHaveLength(2);
        expect(rig.ephemerals(carol, room)).toEqual([]);
        expect(await myUsage(carol)).toContain(`• Today: 2 turns, ${2 * IN} tokens in / ${2 * OUT} out`);
        await refused(carol, room, 'TOKEN-BUDGET-THIRD', `You have used your ${TURN + 1} tokens for today. The budget resets at midnight (UTC).`);
    });

    it("a room's budget of in + out: one person's turn uses it up for everyone in the room, not elsewhere; the room's usage shows both", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const admin = person('admin');
        const room = rig.room(`rtok${n}`, [alice, bob, admin, rig.bot]);
        const other = rig.room(`rfree${n}`, [bob, rig.bot]);
        await rig.setting('admin_user_ids', admin.id);
        await rig.setting('budget_room_tokens_per_day', TURN);
        await rig.ask(alice, room, `@${bot()} first question`);
        expect(await rig.commandAnswer(admin, room, '/hermes usage room')).toContain(`• Today: 1 turns, ${IN} tokens in / ${OUT} out`);
        await refused(bob, room, 'ROOM-TOKEN-BUDGET-SECOND', `This room has used its ${TURN} tokens for today. The budget resets at midnight (UTC).`);
        await rig.ask(bob, other, `@${bot()} elsewhere`);
        expect(runs()).toHaveLength(2);
    });

    it("a room's budget of in + out + 1: the second turn goes through, the third is refused", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`rtok${n}`, [alice, bob, rig.bot]);
        await rig.setting('budget_room_tokens_per_day', TURN + 1);
        await rig.ask(alice, room, `@${bot()} one`);
        await rig.ask(bob, room, `@${bot()} two`);
        expect(runs()).toHaveLength(2);
        expect(rig.ephemerals(bob, room)).toEqual([]);
        await refused(alice, room, 'ROOM-TOKEN-BUDGET-THIRD', `This room has used its ${TURN + 1} tokens for today. The budget resets at midnight (UTC).`);
    });
});
