import { Rig, StoredUser } from '../../rig';
import { expectLogged, FakeHermes, useRigAndHermes } from '../support/e2e';
import { kindOfStored } from '../../rig/marks';
import { engineReacts } from '../../rig/environment';

/**
 * Issue 33 §2, end to end in the real engine: the bot's reaction on the question says where its
 * turn stands (👀 taken, ⏳ queued, ✅ answered, ❌ failed), through the message updater and the
 * rig's copy of Rocket.Chat's reaction rules (rig/reactions.ts).
 */
const env = useRigAndHermes({ status_delay_seconds: 1, hermes_timeout_seconds: 5 });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    hermes.configure({ slowIntervalMs: 60 });
});

afterEach(async () => {
    await rig.settle();
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
/** What the question shows now: emoji → who reacted. */
const shown = (id: string) => rig.server.store.messages.get(id)?.reactions ?? {};
const byBot = () => ({ usernames: [rig.bot.username] });

/** Engine 1.58 (Rocket.Chat 7.13) offers apps no reactions: there only the last test of this block runs. */
const onReactingEngine = engineReacts() ? it : it.skip;

describe('reactions on the question', () => {
    (engineReacts() ? it.skip : it)('on an engine that offers apps no reactions the answer comes all the same, and none is stored', async () => {
        const alice = person('alice');
        const room = rig.room(`noreact${n}`, [alice, rig.bot]);
        const { question, reply } = await rig.ask(alice, room, `@${bot()} still there?`);
        expect(reply.text).toContain('still there?');
        expect(shown(question.id)).toEqual({});
        expect(rig.server.calls.snapshot()['write:message.addReaction']).toBeUndefined();
    });

    onReactingEngine('a room mention: 👀 while it runs, then ✅ in its place once answered', async () => {
        const alice = person('alice');
        const room = rig.room(`ack${n}`, [alice, rig.bot]);
        const question = await rig.post(alice, room, `@${bot()} SLOW please`);
        await rig.waitForMessage((m) => m.rid === room.id && kindOfStored(m) === 'status', 5_000, 'the status message');
        // While the run goes on, the question shows 👀 only.
        expect(shown(question.id)).toEqual({ ':eyes:': byBot() });
        await rig.waitForBotReply(room, { after: question, timeoutMs: 10_000 });
        await rig.settle();
        expect(shown(question.id)).toEqual({ ':white_check_mark:': byBot() });
        expect(rig.botReactions(question)).toEqual(['+:eyes:', '-:eyes:', '+:white_check_mark:']);
    });

    onReactingEngine(
        'a failed turn (Hermes 500 on every try): 👀, then ❌',
        async () => {
            const alice = person('alice');
            const room = rig.room(`fail${n}`, [alice, rig.bot]);
            hermes.script({ method: 'POST', path: '/v1/runs', error: 'internal_error', always: true });
            const { question, reply } = await rig.ask(alice, room, `@${bot()} will this work?`, { timeoutMs: 20_000 });
            expect(reply.text).not.toMatch(/ECHO/);
            expect(shown(question.id)).toEqual({ ':x:': byBot() });
            expect(rig.botReactions(question)).toEqual(['+:eyes:', '-:eyes:', '+:x:']);
        },
        30_000,
    );

    onReactingEngine('a turn stopped with /hermes stop: 👀, then ❌', async () => {
        const alice = person('alice');
        const room = rig.room(`stopped${n}`, [alice, rig.bot]);
        hermes.configure({ slowIntervalMs: 500 });
        const question = await rig.post(alice, room, `@${bot()} SLOW story`);
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
        await rig.command(alice, room, '/hermes stop');
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        await rig.settle();
        expect(reply.text).toContain(`Stopped by @${alice.username}`);
        expect(shown(question.id)).toEqual({ ':x:': byBot() });
        expect(rig.botReactions(question)).toEqual(['+:eyes:', '-:eyes:', '+:x:']);
    });

    onReactingEngine(
        'a question queued behind another of its thread: ⏳, then 👀 when it goes, then ✅',
        async () => {
            const alice = person('alice');
            const room = rig.room(`queue${n}`, [alice, rig.bot]);
            const root = await rig.post(alice, room, 'the thread', { silent: true });
            const first = await rig.post(alice, room, `@${bot()} SLOW first`, { tmid: root.id });
            const second = await rig.post(alice, room, `@${bot()} then this`, { tmid: root.id });
            await rig.waitForMessage((m) => m.rid === room.id && /then this/.test(m.text) && m.senderId === rig.bot.id, 15_000, 'the second answer');
            await rig.settle();
            expect(rig.botReactions(first)).toEqual(['+:eyes:', '-:eyes:', '+:white_check_mark:']);
            expect(rig.botReactions(second)).toEqual(['+:hourglass_flowing_sand:', '-:hourglass_flowing_sand:', '+:eyes:', '-:eyes:', '+:white_check_mark:']);
            // ⏳ came off only once the first had its answer posted.
            const answered = rig.botMessages(room).find((m) => /SLOW:/.test(m.text)) as { createdAt: Date };
            const swapped = rig.server.reactions.find((r) => r.messageId === second.id && !r.added) as { at: number };
            expect(swapped.at).toBeGreaterThanOrEqual(answered.createdAt.getTime());
        },
        30_000,
    );

    onReactingEngine(
        'a 1:1 DM answered within status_delay_seconds gets ✅ alone; one still running then gets 👀 first',
        async () => {
            const alice = person('alice');
            const dm = rig.direct([alice, rig.bot]);
            const quick = await rig.ask(alice, dm, 'quick one');
            expect(rig.botReactions(quick.question)).toEqual(['+:white_check_mark:']);
            const slow = await rig.ask(alice, dm, 'SLOW one', { timeoutMs: 15_000 });
            expect(rig.botReactions(slow.question)).toEqual(['+:eyes:', '-:eyes:', '+:white_check_mark:']);
        },
        30_000,
    );

    onReactingEngine(
        'a question deleted while it runs: the answer still comes, the refused reaction is logged',
        async () => {
            const alice = person('alice');
            const room = rig.room(`gone${n}`, [alice, rig.bot]);
            const question = await rig.post(alice, room, `@${bot()} SLOW then delete`);
            await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
            rig.server.deleteMessage(question.id, alice);
            await rig.waitForMessage((m) => m.rid === room.id && /SLOW:( tick){30}$/.test(m.text), 15_000, 'the answer');
            await rig.settle();
            expectLogged(rig.logText()).toContain(`The reaction on message ${question.id} in room ${room.id} could not be set to :white_check_mark:`);
        },
        30_000,
    );

    onReactingEngine('reactions off: none at all', async () => {
        const alice: StoredUser = person('alice');
        const room = rig.room(`off${n}`, [alice, rig.bot]);
        await rig.setting('reactions', false);
        try {
            const { question } = await rig.ask(alice, room, `@${bot()} quiet please`);
            expect(rig.botReactions(question)).toEqual([]);
        } finally {
            await rig.setting('reactions', true);
        }
    });
});

type StoredVote = { answerId: string; turnId: string; userId: string; roomId: string; vote: string; at: number; sessionId?: string; runId?: string };
const votes = (): StoredVote[] =>
    [...rig.server.bridges.persistence.records.values()]
        .filter((r) => r.associations.some((a) => a.getID().startsWith('hermes-vote:')))
        .map((r) => r.data as StoredVote);

describe('feedback on answers', () => {
    it('👍 / 👎 by people who read the answer: one vote each, changed by changing the reaction, counted in /hermes usage', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const carol = person('carol');
        const admin = person('admin');
        const room = rig.room(`votes${n}`, [alice, bob, carol, admin, rig.bot]);
        await rig.setting('admin_user_ids', admin.id);
        try {
            const { question, reply } = await rig.ask(alice, room, `@${bot()} rate me`);
            const run = (hermes.requests.find((r) => r.method === 'POST' && r.path === '/v1/runs')?.json ?? {}) as { session_id?: string };
            await rig.react(bob, reply, ':thumbsup:');
            await rig.react(carol, reply, ':thumbsdown:');
            // Bob changes his mind: 👍 off, 👎 on. One vote of his remains, the newer.
            await rig.react(bob, reply, ':thumbsup:');
            await rig.react(bob, reply, ':thumbsdown:');
            // Carol clicks 👎 twice more: off, then on again; still one vote.
            await rig.react(carol, reply, ':thumbsdown:');
            await rig.react(carol, reply, ':thumbsdown:');
            const mine = votes().filter((v) => v.answerId === reply.id);
            expect(mine.map((v) => `${v.userId} ${v.vote}`).sort()).toEqual([`${bob.id} down`, `${carol.id} down`].sort());
            // Recorded with the turn: its question, room, Hermes session and run, and when.
            expect(mine[0]).toMatchObject({ turnId: question.id, roomId: room.id, sessionId: run.session_id, runId: expect.stringMatching(/^run_/) });
            expect(Math.abs(mine[0].at - Date.now())).toBeLessThan(10_000);
            expect(await rig.commandAnswer(admin, room, '/hermes usage room')).toContain('• Feedback on answers, last 30 days: 👍 0 · 👎 2');
            await rig.react(alice, reply, ':+1:');
            expect(await rig.commandAnswer(admin, room, '/hermes usage all')).toMatch(/👍 [1-9]\d* · 👎 [2-9]/);
            expect(await rig.commandAnswer(admin, room, '/hermes usage room')).toContain('👍 1 · 👎 2');
            // A person's own usage shows no votes; only admins see a room's.
            expect(await rig.commandAnswer(bob, room, '/hermes usage')).not.toContain('Feedback');
        } finally {
            await rig.setting('admin_user_ids', '');
        }
    });

    it('a vote changed by two clicks at once (👎 off, 👍 on, no wait between) ends as the last click says', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`race${n}`, [alice, bob, rig.bot]);
        const { reply } = await rig.ask(alice, room, `@${bot()} quick vote`);
        for (let i = 0; i < 5; i++) {
            await rig.react(bob, reply, ':thumbsdown:', true);
            // The server fires both events without awaiting the app: they reach it side by side.
            rig.server.setReaction(bob.id, ':thumbsdown:', reply.id, false);
            rig.server.setReaction(bob.id, ':thumbsup:', reply.id, true);
            await rig.settle();
            expect(
                votes()
                    .filter((v) => v.answerId === reply.id && v.userId === bob.id)
                    .map((v) => v.vote),
            ).toEqual(['up']);
            await rig.react(bob, reply, ':thumbsup:', false);
        }
    });

    it('what is not a vote: a notice, a person’s message, the bot’s own reactions, other emoji, and a reactor the server turns away', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const eve = person('eve');
        const secret = rig.room(`priv${n}`, [alice, bob, rig.bot], 'p');
        hermes.script({ method: 'POST', path: '/v1/runs', error: 'internal_error' });
        const failed = await rig.ask(alice, secret, `@${bot()} this fails`);
        const { reply } = await rig.ask(alice, secret, `@${bot()} this works`);
        const before = votes().length;
        await rig.react(bob, failed.reply, ':thumbsdown:');
        await rig.react(bob, failed.question, ':thumbsup:');
        await rig.react(bob, reply, ':tada:');
        // Eve is not in the private room: the server refuses her reaction, so no event reaches the app.
        await expect(rig.react(eve, reply, ':thumbsdown:')).rejects.toThrow(/not-authorized/);
        expect(votes().length).toBe(before);
        // The bot's own ❌ on the question came to the app as an event too, and cost no read.
        if (engineReacts()) {
            expect(rig.botReactions(failed.question)).toEqual(['+:eyes:', '-:eyes:', '+:x:']);
        }
        await rig.react(bob, reply, ':thumbsdown:');
        expect(votes().length).toBe(before + 1);
    });

    it('feedback_ask_why: a 👎 brings a private ask, the form keeps one line beside the vote; only the voter may answer it', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const mallory = person('mallory');
        const room = rig.room(`why${n}`, [alice, bob, mallory, rig.bot]);
        await rig.setting('feedback_ask_why', true);
        try {
            const { reply } = await rig.ask(alice, room, `@${bot()} explain the outage`);
            await rig.react(alice, reply, ':thumbsup:');
            await rig.react(bob, reply, ':thumbsdown:');
            const ask = await rig.waitForEphemeral((e) => e.userId === bob.id && e.text.includes('What was wrong with this answer?'));
            // A 👍 asks nothing.
            expect(rig.ephemerals(alice, room)).toEqual([]);
            // Mallory, in the room but without a 👎 of her own, clicks the same button: the gate's one line, no form.
            await rig.clickNotice(mallory, ask, 'hermes-feedback-why', reply.id);
            expect(rig.openViews(mallory)).toEqual([]);
            expect(rig.ephemerals(mallory, room)).toEqual(['Hermes is not available here.']);
            await rig.clickNotice(bob, ask, 'hermes-feedback-why', reply.id);
            const [form] = rig.openViews(bob);
            expect(form.view.id).toBe(`hermes-feedback|${room.id}|${reply.id}`);
            await rig.submitView(bob, form, { why: { why: 'It blamed the\n\ndatabase,\u202e not the network' } });
            const vote = votes().find((v) => v.answerId === reply.id && v.userId === bob.id) as StoredVote & { why?: string };
            expect(vote).toMatchObject({ vote: 'down', why: expect.stringMatching(/^It blamed the database,.+not the network$/) });
            expect(vote.why).not.toContain('\u202e');
            expect(rig.ephemerals(bob, room)).toContain('Thanks, noted with your vote.');
        } finally {
            await rig.setting('feedback_ask_why', false);
        }
    });
});
