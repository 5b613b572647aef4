import { sign } from 'jsonwebtoken';
import { Rig, StoredRoom, StoredUser } from '../../rig';
import { FakeHermes, SECRETS_IN_TESTS, useRigAndHermes } from '../support/e2e';

/**
 * Issue 31, the session rules end to end: a shared session stays in its conversation and with
 * its members of now (item 3), a resumed transcript retires the earlier asker's token (item 3),
 * a session goes on in one conversation at a time (item 4), `/hermes search` answers "here" or
 * "all" of the asker's own sessions of rooms they are still in, and titles someone else chose
 * are plain text in the others' lists (item 8).
 */
const ENDPOINT_SECRET = 'endpoint-secret-0123456789abcdef-0123456789';
const ASKER_KEY = 'asker-key-0123456789abcdef-0123456789abcdef';
SECRETS_IN_TESTS.add(ASKER_KEY);

const env = useRigAndHermes({
    admin_user_ids: '',
    hermes_transport: 'chat',
    endpoint_secret: ENDPOINT_SECRET,
    asker_key: ASKER_KEY,
    progress_in_channel: 'off',
});
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

const person = (name: string) => rig.user(`${name}${++n}`);
const mention = (text: string) => `@${rig.bot.username} ${text}`;
/** Runs a /hermes sub-command and returns the private answer the person got. */
const hermesCmd = (who: StoredUser, room: StoredRoom, line: string, tmid?: string) => rig.commandAnswer(who, room, `/hermes ${line}`, { tmid });
/** The Hermes session the newest turn went to. */
const lastSession = (): string => hermes.turns.at(-1)?.sessionId as string;
const chats = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions');
/** The asker token of the newest turn Hermes received: the app's header line of its user message. */
const lastToken = (): string => {
    const messages = (chats().at(-1)?.json as { messages: Array<{ role: string; content: string }> }).messages;
    const text = messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    const m = /^\[Rocket\.Chat asker: (v1\.[A-Za-z0-9]+\.[A-Za-z0-9]+\.\d+\.[A-Za-z0-9_-]{22})\]$/m.exec(text);
    if (!m) {
        throw new Error('the turn carried no asker token');
    }
    return m[1];
};
const history = (body: unknown) =>
    fetch(`${rig.server.apiUrl}/api/apps/public/${rig.appId}/history`, {
        method: 'POST',
        headers: {
            Authorization: `Bearer ${sign({ sub: 'history-tool' }, ENDPOINT_SECRET, { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 60 })}`,
            'Content-Type': 'application/json',
        },
        body: JSON.stringify(body),
    });
/** Posts without waiting for the answer, and resolves once Hermes has the turn (it is running). */
async function running(who: StoredUser, room: StoredRoom, text: string, delayMs: number) {
    hermes.script({ method: 'POST', path: '/v1/chat/completions', delayMs });
    const before = chats().length;
    const question = await rig.post(who, room, text);
    await hermes.waitForRequest(() => chats().length > before, 5_000);
    return question;
}
const elsewhere = (title: string) =>
    `*${title}* is in use in another conversation (it is that conversation's session, or a turn of it is still running there). A session goes on in one conversation at a time: start a new one there first (\`/hermes new\`), or resume another.`;

describe("a group thread's shared session (item 3)", () => {
    it('is not resumed in a member’s DM; removed from the group, she no longer lists, searches or resumes it, and reads nothing said after', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const group = rig.room(`grp${n}`, [alice, bob, rig.bot], 'p');
        const dm = rig.direct([alice, rig.bot]);
        const root = await rig.post(bob, group, 'offsite plans', { silent: true });
        await rig.ask(bob, group, mention('the offsite budget is 900'), { tmid: root.id });
        const shared = lastSession();
        await hermesCmd(bob, group, 'title Offsite', root.id);
        await rig.ask(alice, group, mention('and the venue?'), { tmid: root.id });
        await rig.ask(alice, dm, 'hello');
        expect(await hermesCmd(alice, dm, 'sessions all')).toContain(`\`${shared}\``);

        expect(await hermesCmd(alice, dm, `resume ${shared}`)).toBe(
            '*Offsite* is the shared session of a room or thread: only its members can resume it, and only there.',
        );

        rig.removeFromRoom(group, alice);
        const listed = await hermesCmd(alice, dm, 'sessions all');
        expect(listed.split('\n')[0]).toBe('*All your sessions* (1), newest first:');
        expect(listed).not.toContain(shared);
        expect(await hermesCmd(alice, dm, 'search all offsite')).toBe('No message with “offsite” in the 1 sessions searched.');
        expect(await hermesCmd(alice, dm, `resume ${shared}`)).toBe(`None of your sessions matches “${shared}”. \`/hermes sessions all\` lists them.`);

        await rig.ask(bob, group, mention('the secret venue is the lighthouse'), { tmid: root.id });
        const { reply } = await rig.ask(alice, dm, 'what was said in the thread?');
        expect(lastSession()).not.toBe(shared);
        expect(reply.text).not.toContain('lighthouse');
    });
});

describe('asker tokens after a resume (item 3, the token reuse)', () => {
    it("a turn in the conversation that resumed alice's session retires the token her DM turn left in its transcript", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`tok${n}`, [alice, bob, rig.bot]);
        const dm = rig.direct([alice, rig.bot]);
        await rig.post(alice, dm, 'alice private note', { silent: true });
        await rig.ask(alice, dm, 'remember my note');
        const hers = lastSession();
        const tokenA = lastToken();
        expect((await history({ asker: tokenA, room_id: dm.id })).status).toBe(200);

        await hermesCmd(alice, dm, 'new');
        const root = await rig.post(alice, room, 'sharing my notes', { silent: true });
        expect(await hermesCmd(alice, room, `resume ${hers}`, root.id)).toContain('Resumed *remember my note* here');
        await rig.ask(bob, room, mention('what did she note?'), { tmid: root.id });
        expect(lastSession()).toBe(hers);
        expect(lastToken().split('.')[1]).toBe(bob.id);

        const replay = await history({ asker: tokenA, room_id: dm.id });
        expect(replay.status).toBe(403);
        expect(await replay.json()).toEqual({ error: 'forbidden' });
    });
});

describe('one session, one conversation at a time (item 4)', () => {
    it("alice's DM session is not resumed in a room while it is the DM's; after /new in the DM it is", async () => {
        const alice = person('alice');
        const room = rig.room(`two${n}`, [alice, rig.bot]);
        const dm = rig.direct([alice, rig.bot]);
        await rig.ask(alice, dm, 'dm topic');
        const hers = lastSession();
        expect(await hermesCmd(alice, room, `resume ${hers}`)).toBe(elsewhere('dm topic'));
        await rig.ask(alice, room, mention('room question'));
        expect(lastSession()).not.toBe(hers);
        await rig.ask(alice, dm, 'dm again');
        expect(lastSession()).toBe(hers);

        await hermesCmd(alice, dm, 'new');
        expect(await hermesCmd(alice, room, `resume ${hers}`)).toContain('Resumed *dm topic* here');
        await rig.ask(alice, room, mention('continue here'));
        expect(lastSession()).toBe(hers);
    });

    it('nor while a turn sent on it is still running in the DM it left', async () => {
        const alice = person('alice');
        const room = rig.room(`run${n}`, [alice, rig.bot]);
        const dm = rig.direct([alice, rig.bot]);
        await rig.ask(alice, dm, 'dm topic');
        const hers = lastSession();
        const question = await running(alice, dm, 'a long one', 2_500);
        await hermesCmd(alice, dm, 'new');
        expect(await hermesCmd(alice, room, `resume ${hers}`)).toBe(elsewhere('dm topic'));
        await rig.waitForBotReply(dm, { after: question, timeoutMs: 10_000 });
        await rig.settle();
    });

    it('resume waits for a turn running in its own conversation', async () => {
        const alice = person('alice');
        const room = rig.room(`busy${n}`, [alice, rig.bot]);
        await rig.ask(alice, room, mention('first topic'));
        const first = lastSession();
        await hermesCmd(alice, room, 'new');
        const question = await running(alice, room, mention('second topic'), 2_500);
        expect(await hermesCmd(alice, room, `resume ${first}`)).toBe(
            'A turn is still running in this conversation. Wait for its answer (or `/hermes stop` it), then resume.',
        );
        await rig.waitForBotReply(room, { after: question, timeoutMs: 10_000 });
        await rig.settle();
        expect(await hermesCmd(alice, room, `resume ${first}`)).toContain('Resumed *first topic* here');
    });
});

describe('/hermes search: here or all, the asker’s own, of rooms they are in now', () => {
    it('two people with several sessions each', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`search${n}`, [alice, bob, rig.bot]);
        const aliceDm = rig.direct([alice, rig.bot]);
        const bobDm = rig.direct([bob, rig.bot]);
        await rig.ask(alice, aliceDm, 'kiwi alpha');
        await hermesCmd(alice, aliceDm, 'new');
        await rig.ask(alice, aliceDm, 'kiwi beta');
        await rig.ask(alice, room, mention('kiwi gamma'));
        await rig.ask(bob, bobDm, 'kiwi delta');
        await rig.ask(bob, room, mention('kiwi epsilon'));

        const aliceHere = await hermesCmd(alice, aliceDm, 'search kiwi');
        expect(aliceHere.split('\n')[0]).toBe('*Sessions with “kiwi”* (2 matches, newest first):');
        expect(aliceHere).toContain('**kiwi** beta');
        expect(aliceHere).toContain('**kiwi** alpha');
        expect(aliceHere).not.toMatch(/gamma|delta|epsilon/);
        const aliceAll = await hermesCmd(alice, aliceDm, 'search all kiwi');
        expect(aliceAll.split('\n')[0]).toBe('*Sessions with “kiwi”* (3 matches, newest first):');
        expect(aliceAll).toContain('**kiwi** gamma');
        expect(aliceAll).not.toMatch(/delta|epsilon/);
        const bobHere = await hermesCmd(bob, room, 'search kiwi');
        expect(bobHere.split('\n')[0]).toBe('*Sessions with “kiwi”* (1 matches, newest first):');
        expect(bobHere).toContain('**kiwi** epsilon');
        expect(bobHere).not.toMatch(/alpha|beta|gamma|delta/);
        expect((await hermesCmd(bob, bobDm, 'search all kiwi')).split('\n')[0]).toBe('*Sessions with “kiwi”* (2 matches, newest first):');

        // Out of the room, its session is no longer hers to search.
        rig.removeFromRoom(room, alice);
        const afterLeaving = await hermesCmd(alice, aliceDm, 'search all kiwi');
        expect(afterLeaving.split('\n')[0]).toBe('*Sessions with “kiwi”* (2 matches, newest first):');
        expect(afterLeaving).not.toContain('gamma');
    }, 40_000);
});

describe('titles in a shared thread (item 8)', () => {
    it("a title one member set is plain text in the other's list and search results", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`titles${n}`, [alice, bob, rig.bot]);
        const root = await rig.post(bob, room, 'thread root', { silent: true });
        await rig.ask(bob, room, mention('the quarterly numbers'), { tmid: root.id });
        await hermesCmd(bob, room, 'title [click](https://evil.example) @all **now**', root.id);
        await rig.ask(alice, room, mention('more quarterly numbers'), { tmid: root.id });

        const listed = await hermesCmd(alice, room, 'sessions', root.id);
        expect(listed).toContain('• **click (https:\u200B//evil.example) @\u200Ball now** · ');
        expect(listed).not.toContain('[click]');
        const found = await hermesCmd(alice, room, 'search quarterly', root.id);
        expect(found).toContain('• **click (https:\u200B//evil.example) @\u200Ball now** · ');
        expect(found).not.toContain('](https://');
        expect(await hermesCmd(alice, room, 'title', root.id)).toBe(
            "This conversation's session is titled *click (https:\u200B//evil.example) @\u200Ball now*.",
        );
    });
});
