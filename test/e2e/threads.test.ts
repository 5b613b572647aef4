import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { expectLogged, FakeHermes, useRigAndHermes } from '../support/e2e';

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

describe('the reply pointer', () => {
    const link = (room: StoredRoom, id: string) => `[ ](http://127.0.0.1:3000/channel/${room.name}?msg=${id})`;
    const newMessagePart = (input: string) => input.slice(input.indexOf('\n\n[New message]\n') + 2).split('\n');
    const messageReads = () => rig.server.calls.snapshot()['read:message.getById'] ?? 0;

    it("a quote of the bot's answer: Hermes reads which answer, right before the question; one read for it", async () => {
        const alice = person('alice');
        const room = rig.room(`quote${n}`, [alice, rig.bot]);
        hermes.setReply(() => 'Deploy on Friday.\nThen "celebrate".');
        const { reply } = await rig.ask(alice, room, `@${bot()} when do we deploy?`);
        rig.server.calls.reset();
        hermes.setReply(() => 'ok');
        await rig.ask(alice, room, `${link(room, reply.id)} @${bot()} why then?`);
        expect(newMessagePart(runInputs()[1])).toEqual([
            '[New message]',
            `[Replying to your previous message: "Deploy on Friday. Then 'celebrate'."]`,
            'why then?',
        ]);
        expect(messageReads()).toBe(1);
    });

    it('a quote of a person: their name and their words, cut at 500 characters; a message without a quote reads nothing', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`quotep${n}`, [alice, bob, rig.bot]);
        const said = await rig.post(bob, room, `the build is red ${'x'.repeat(600)}`, { silent: true });
        hermes.setReply(() => 'ok');
        await rig.ask(alice, room, `${link(room, said.id)} @${bot()} can you look?`);
        const [, pointer, trigger] = newMessagePart(runInputs()[0]);
        expect(pointer).toBe(`[Replying to ${bob.username}: "the build is red ${'x'.repeat(500 - 'the build is red '.length)}…"]`);
        expect(trigger).toBe('can you look?');
        expect(messageReads()).toBe(1);
        rig.server.calls.reset();
        await rig.ask(alice, room, `@${bot()} and without a quote?`);
        expect(messageReads()).toBe(0);
        expect(newMessagePart(runInputs()[1])).toEqual(['[New message]', 'and without a quote?']);
    });

    it('a quote of a deleted message costs the pointer, never the turn', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`quoted${n}`, [alice, bob, rig.bot]);
        const said = await rig.post(bob, room, 'DELETED-WORDS', { silent: true });
        rig.server.deleteMessage(said.id, bob);
        hermes.setReply(() => 'ok');
        const { reply } = await rig.ask(alice, room, `${link(room, said.id)} @${bot()} what did bob say?`);
        expect(reply.text).toContain('ok');
        expect(newMessagePart(runInputs()[0])).toEqual(['[New message]', 'what did bob say?']);
        expect(runInputs()[0]).not.toContain('DELETED-WORDS');
        expectLogged(rig.logText()).toContain(`Reply pointer to message ${said.id} left out`);
    });
});

describe('edits that count', () => {
    afterEach(async () => {
        await rig.setting('allowed_user_ids', '');
    });

    it('adding the mention by an edit opens one turn; editing it again opens none', async () => {
        const alice = person('alice');
        const room = rig.room(`edit${n}`, [alice, rig.bot]);
        hermes.setReply(() => 'answered');
        const question = await rig.post(alice, room, 'what is the status?');
        await rig.settle();
        expect(runInputs()).toHaveLength(0);
        await rig.edit(alice, question, `@${bot()} what is the status?`);
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        await rig.settle();
        expect(reply.text).toContain('answered');
        expect(runInputs()).toHaveLength(1);
        expect(newMessagePartOf(runInputs()[0])).toBe('what is the status?');
        await rig.edit(alice, question, `@${bot()} what is the status now?`);
        await rig.settle();
        expect(runInputs()).toHaveLength(1);
        expect(rig.botMessages(room)).toHaveLength(1);
    });

    it('an edit of a mention already answered opens no second turn', async () => {
        const alice = person('alice');
        const room = rig.room(`edita${n}`, [alice, rig.bot]);
        hermes.setReply(() => 'once');
        const { question } = await rig.ask(alice, room, `@${bot()} first`);
        await rig.edit(alice, question, `@${bot()} first, edited`);
        expect(runInputs()).toHaveLength(1);
        expect(rig.botMessages(room)).toHaveLength(1);
    });

    it('an edit older than max_message_age_seconds (measured from the edit) is ignored', async () => {
        const alice = person('alice');
        const room = rig.room(`editold${n}`, [alice, rig.bot]);
        const question = await rig.post(alice, room, 'late');
        const stored = rig.server.store.messages.get(question.id) as typeof question;
        Object.assign(stored, { text: `@${bot()} late`, editedAt: new Date(Date.now() - 10 * 60_000), editorId: alice.id });
        rig.server.emitUpdated(stored);
        await rig.settle();
        expect(runInputs()).toHaveLength(0);
        expect(rig.botMessages(room)).toHaveLength(0);
    });

    it('an edit by someone not in allowed_user_ids opens nothing, and says nothing', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`editallow${n}`, [alice, bob, rig.bot]);
        await rig.setting('allowed_user_ids', alice.id);
        const question = await rig.post(bob, room, 'hello');
        await rig.edit(bob, question, `@${bot()} hello`);
        expect(runInputs()).toHaveLength(0);
        expect(rig.botMessages(room)).toHaveLength(0);
    });

    it("someone else's edit of a message (an admin's) opens nothing", async () => {
        const alice = person('alice');
        const admin = person('admin');
        const room = rig.room(`editother${n}`, [alice, admin, rig.bot]);
        const question = await rig.post(alice, room, 'hello');
        await rig.edit(admin, question, `@${bot()} hello`);
        expect(runInputs()).toHaveLength(0);
    });
});

function newMessagePartOf(input: string): string {
    return input.slice(input.indexOf('\n\n[New message]\n') + '\n\n[New message]\n'.length);
}

describe('per-room policy', () => {
    afterEach(async () => {
        await rig.setting('room_policies', '');
        await rig.setting('thread_follow', 'off');
        await rig.setting('admin_user_ids', '');
    });

    const runs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');

    it('a room with a profile and a model alias: its turns reach /p/<profile>/ with that model, the instruction in the system text, the key in the profile', async () => {
        const alice = person('alice');
        const room = rig.room(`policy${n}`, [alice, rig.bot]);
        const plain = rig.room(`plain${n}`, [alice, rig.bot]);
        await rig.setting('room_policies', `# research\n${room.id} profile=research model=fast prompt="Answer in French."`);
        hermes.setReply(() => 'bonjour');
        await rig.ask(alice, room, `@${bot()} hello`);
        await rig.ask(alice, plain, `@${bot()} hello`);
        expect(hermes.turns.map((t) => ({ profile: t.profile, model: t.model }))).toEqual([
            { profile: 'research', model: 'fast' },
            { profile: undefined, model: 'hermes-agent' },
        ]);
        const [first, second] = runs();
        expect(first.url.startsWith('/p/research/v1/runs')).toBe(true);
        expect((first.json as { instructions: string }).instructions).toContain('The workspace admins set this instruction for this room: Answer in French.');
        expect((second.json as { instructions: string }).instructions).not.toContain('instruction for this room');
        expect(first.headers['x-hermes-session-key']).toBe(`agent:research:rocketchat:channel:${room.id}:${alice.id}`);
        expect(second.headers['x-hermes-session-key']).toBe(`agent:main:rocketchat:channel:${plain.id}:${alice.id}`);
        await rig.command(alice, room, '/hermes status');
        expect(rig.ephemerals(alice, room).pop()).toContain('Room policy: profile research, model fast, mode mention, room instruction set');
    });

    it('a malformed entry refuses service in that room only, with a notice, and the log names the line', async () => {
        const alice = person('alice');
        const broken = rig.room(`broken${n}`, [alice, rig.bot]);
        const fine = rig.room(`fine${n}`, [alice, rig.bot]);
        await rig.setting('room_policies', `${fine.id} model=fast\n${broken.id} mode=loud`);
        await rig.settingsReported();
        expectLogged(rig.logText()).toContain(`room_policies line 2:`);
        expectLogged(rig.logText()).toContain(`room ${broken.id} refuses service until the line is fixed`);
        hermes.setReply(() => 'ok');
        const { reply } = await rig.ask(alice, broken, `@${bot()} hello`);
        expect(reply.text).toContain('its room policy has an error');
        expect(runs()).toHaveLength(0);
        const { reply: answered } = await rig.ask(alice, fine, `@${bot()} hello`);
        expect(answered.text).toContain('ok');
        expect(hermes.turns.map((t) => t.model)).toEqual(['fast']);
        await rig.command(alice, broken, '/hermes status');
        expect(rig.ephemerals(alice, broken).pop()).toContain('Room policy: malformed entry, service refused');
    });

    it('free: every message is a turn; off: nothing is, and an admin who mentions the bot hears why once', async () => {
        const alice = person('alice');
        const admin = person('admin');
        const free = rig.room(`free${n}`, [alice, rig.bot]);
        const off = rig.room(`off${n}`, [alice, admin, rig.bot]);
        await rig.setting('admin_user_ids', admin.id);
        await rig.setting('room_policies', `${free.id} mode=free\n${off.id} off`);
        hermes.setReply(() => 'free answer');
        const { reply } = await rig.ask(alice, free, 'no mention needed here');
        expect(reply.text).toContain('free answer');
        await rig.post(alice, off, `@${bot()} hello?`);
        await rig.post(admin, off, `@${bot()} hello?`);
        await rig.post(admin, off, `@${bot()} still there?`);
        await rig.settle();
        expect(runs()).toHaveLength(1);
        expect(rig.botMessages(off)).toHaveLength(0);
        expect(rig.ephemerals(alice, off)).toEqual([]);
        expect(rig.ephemerals(admin, off)).toEqual(['The bot is switched off in this room by its room policy (room_policies). Only admins see this note.']);
    });

    it('thread follow (asker): after an answer in a thread, the asker goes on without a mention, others do not, until /hermes unfollow', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`follow${n}`, [alice, bob, rig.bot]);
        await rig.setting('thread_follow', 'asker');
        const root = await rig.post(alice, room, 'the incident', { silent: true });
        hermes.setReply((msg) => `re ${msg.split('\n').pop()}`);
        await rig.ask(alice, room, `@${bot()} what happened?`, { tmid: root.id });
        const { reply } = await rig.ask(alice, room, 'and who is on call?', { tmid: root.id });
        expect(reply.text).toContain('who is on call?');
        await rig.post(bob, room, 'I am', { tmid: root.id });
        await rig.settle();
        expect(runs()).toHaveLength(2);
        await rig.command(bob, room, '/hermes unfollow', { tmid: root.id });
        expect(rig.ephemerals(bob, room).pop()).toBe('The bot no longer follows this thread: mention it to ask again.');
        await rig.post(alice, room, 'thanks', { tmid: root.id });
        await rig.settle();
        expect(runs()).toHaveLength(2);
    });
});

describe('the order of a thread’s questions', () => {
    it('follows the messages when an earlier message’s event is slower than a later one’s (issue 32 §2)', async () => {
        const alice = person('alice');
        const room = rig.room(`order${n}`, [alice, rig.bot]);
        const root = await rig.post(alice, room, 'the thread', { silent: true });
        hermes.setReply((msg) => `re ${msg.split('\n').pop()}`);
        // The first question's store calls that name it (its receipt) wait 60 ms more: its event
        // reads and would store its turn after the second one's, as on a busy server.
        let slowId = '';
        const onMessage = (m: StoredMessage) => {
            if (m.text.endsWith(' q0')) {
                slowId = m.id;
            }
        };
        rig.server.events.on('message', onMessage);
        rig.server.extraLatency = (_method, args) => (slowId && JSON.stringify(args).includes(slowId) ? 60 : 0);
        try {
            await rig.post(alice, room, `@${bot()} q0`, { tmid: root.id });
            await rig.post(alice, room, `@${bot()} q1`, { tmid: root.id });
            await rig.waitForMessage((m) => m.rid === room.id && m.text === `re [${alice.username}] q1`, 15_000, 'the answer to q1');
            await rig.settle();
        } finally {
            rig.server.events.off('message', onMessage);
            rig.server.extraLatency = undefined;
            hermes.setReply(null);
        }
        expect(runInputs().map((input) => input.split('\n').pop())).toEqual([`[${alice.username}] q0`, `[${alice.username}] q1`]);
    }, 30_000);
});
