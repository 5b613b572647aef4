import { Rig, StoredRoom, StoredUser } from '../../rig';
import { hermesToolCall } from '../../fake-hermes';
import { turnOfStored } from '../../rig/marks';
import { expectLogged, FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 11, end to end: titles, the session list, resume (also of a session made in the
 * Hermes CLI), automatic resets and search, from `/hermes …`; every answer private; two
 * people never see each other's sessions.
 */
const env = useRigAndHermes({ admin_user_ids: '' });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    hermes.setReply((msg) => `re: ${msg.split('\n').pop()}`);
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
/** Runs a /hermes sub-command and returns the private answer the person got. */
const hermesCmd = (who: StoredUser, room: StoredRoom, line: string, tmid?: string) => rig.commandAnswer(who, room, `/hermes ${line}`, { tmid });
const runSessionIds = () =>
    hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs').map((r) => (r.json as { session_id: string }).session_id);

/** Moves a session record's last activity back in time: the app's clock runs on, the record says when it was last used. */
function ageSession(key: string, ms: number): void {
    for (const record of rig.server.bridges.persistence.records.values()) {
        if (record.associations.some((a) => a.getID() === `hermes-session:${key}`)) {
            const data = record.data as { lastActiveAt?: number };
            data.lastActiveAt = (data.lastActiveAt ?? Date.now()) - ms;
        }
    }
}

describe('titles', () => {
    it('a title set before the session exists is applied with its first answer; shown on request; a taken one is refused with a suggestion', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        expect(await hermesCmd(alice, dm, 'title')).toContain('has no title yet');
        expect(await hermesCmd(alice, dm, 'title Release  planning\u200B')).toBe(
            "Title *Release planning* noted: it is set when this conversation's session starts, with its first answer.",
        );
        await rig.ask(alice, dm, 'first question');
        const [sessionId] = runSessionIds();
        expect(hermes.getSession(sessionId)?.title).toBe('Release planning');
        expect(await hermesCmd(alice, dm, 'title')).toBe("This conversation's session is titled *Release planning*.");

        const bob = person('bob');
        const bobDm = rig.direct([bob, rig.bot]);
        await rig.ask(bob, bobDm, 'hello');
        expect(await hermesCmd(bob, bobDm, 'title Release planning')).toBe(
            'The title *Release planning* is already taken by another session (titles are unique). Try *Release planning #2*.',
        );
        expect(await hermesCmd(bob, bobDm, 'title Release planning #2')).toBe('Title set: *Release planning #2*.');
        // Nothing of this reached the room: the answers were private.
        expect(rig.botMessages(dm).map((m) => m.text)).toEqual(['re: first question']);
    });
});

describe('the session list', () => {
    it("lists the asker's sessions here, newest first with the current one marked; another person sees none of them", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`list${n}`, [alice, bob, rig.bot]);
        await rig.ask(alice, room, `@${bot()} about the budget`);
        await hermesCmd(alice, room, 'new');
        await rig.ask(alice, room, `@${bot()} about the roadmap`);
        const text = await hermesCmd(alice, room, 'sessions');
        const lines = text.split('\n');
        expect(lines[0]).toBe('*Your sessions here* (2), newest first:');
        expect(lines[1]).toMatch(/^• \*\*about the roadmap\*\* · \d{4}-\d\d-\d\d \d\d:\d\d \S+ · 2 messages · `rc_[0-9a-f]+_g1` · \*\*current\*\*$/);
        expect(lines[2]).toMatch(/^• \*\*about the budget\*\* · .* · 2 messages · `rc_[0-9a-f]+_g0`$/);
        expect(await hermesCmd(bob, room, 'sessions')).toBe('You have no sessions in this conversation yet.');
        expect(await hermesCmd(bob, room, 'sessions all')).toBe('You have no sessions through this app yet.');
        // Text commands about sessions are whispered too.
        await rig.post(alice, room, `@${bot()} /sessions`);
        await rig.settle();
        expect(rig.ephemerals(alice, room).pop()).toContain('*Your sessions here* (2)');
        expect(rig.botMessages(room).filter((m) => m.text.includes('Your sessions'))).toHaveLength(0);
    });

    it('10 per page with the command for more; "all" spans rooms', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        for (let i = 1; i <= 11; i++) {
            await rig.ask(alice, dm, `topic number ${i}`);
            await hermesCmd(alice, dm, 'new');
        }
        const room = rig.room(`all${n}`, [alice, rig.bot]);
        await rig.ask(alice, room, `@${bot()} in a room`);
        const page1 = (await hermesCmd(alice, dm, 'sessions')).split('\n');
        expect(page1).toHaveLength(12);
        expect(page1[1]).toContain('topic number 11');
        expect(page1[11]).toBe('Page 1 of 2. More: `/hermes sessions 2`');
        const page2 = (await hermesCmd(alice, dm, 'sessions 2')).split('\n');
        expect(page2.slice(1)).toHaveLength(1);
        expect(page2[1]).toContain('topic number 1**');
        const all = await hermesCmd(alice, dm, 'sessions all');
        expect(all.split('\n')[0]).toBe('*All your sessions* (12), newest first:');
        expect(all).toContain('in a room');
    }, 60_000);
});

describe('resume', () => {
    it('resumes an earlier session of the asker by title (newest of its lineage), the next answer starting with where it stood; /new starts fresh again', async () => {
        const alice = person('alice');
        const room = rig.room(`resume${n}`, [alice, rig.bot]);
        await rig.ask(alice, room, `@${bot()} plan the offsite`);
        const [first] = runSessionIds();
        await hermesCmd(alice, room, 'title Offsite');
        await hermesCmd(alice, room, 'new');
        await rig.ask(alice, room, `@${bot()} something else`);
        expect(await hermesCmd(alice, room, 'resume offsite')).toBe(
            'Resumed *Offsite* here: your next message continues it, and its answer starts with where it stood. `/hermes new` starts fresh again.',
        );
        const { reply } = await rig.ask(alice, room, `@${bot()} where were we?`);
        expect(runSessionIds().pop()).toBe(first);
        expect(reply.text).toContain('*Resumed “Offsite”. Where it stood:*\n> **You:** plan the offsite\n> **Hermes:** re: plan the offsite');
        expect(reply.text).toContain('re: where were we?');
        // Only the first answer after the resume carries the recap.
        const { reply: next } = await rig.ask(alice, room, `@${bot()} and then?`);
        expect(next.text).not.toContain('Resumed');
        await hermesCmd(alice, room, 'new');
        await rig.ask(alice, room, `@${bot()} fresh`);
        expect(runSessionIds().pop()).not.toBe(first);
    });

    it("another person's session cannot be resumed, by id or title; an admin resumes a Hermes CLI session by id, tool calls collapsed in the recap", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const admin = person('admin');
        const room = rig.room(`resume2${n}`, [alice, bob, admin, rig.bot]);
        await rig.ask(alice, room, `@${bot()} alice's secret plan`);
        const [alices] = runSessionIds();
        await hermesCmd(alice, room, 'title Secret plan');
        expect(await hermesCmd(bob, room, `resume ${alices}`)).toBe(`None of your sessions matches “${alices}”. \`/hermes sessions all\` lists them.`);
        expect(await hermesCmd(bob, room, 'resume Secret plan')).toContain('None of your sessions matches');

        hermes.seedSession({
            id: '20250305_091523_a1b2c3',
            source: 'cli',
            title: 'Deploy notes',
            messages: [
                { role: 'user', content: 'deploy the staging stack' },
                {
                    role: 'assistant',
                    content: '',
                    tool_calls: [hermesToolCall('terminal', { command: 'make deploy' }), hermesToolCall('web_search', { q: 'x' })],
                },
                { role: 'tool', content: '{"output": "TOOL-OUTPUT"}', tool_name: 'terminal' },
                { role: 'assistant', content: 'Staging is deployed.' },
            ],
        });
        expect(await hermesCmd(admin, room, 'resume 20250305_091523_a1b2c3')).toContain('None of your sessions matches');
        await rig.setting('admin_user_ids', admin.id);
        try {
            expect(await hermesCmd(admin, room, 'resume 20250305_091523_a1b2c3')).toContain('Resumed *Deploy notes* here');
            const { reply } = await rig.ask(admin, room, `@${bot()} status?`);
            expect(reply.text).toContain('> **You:** deploy the staging stack\n> **Hermes:** [2 tool calls: terminal, web_search] Staging is deployed.');
            expect(reply.text).not.toContain('TOOL-OUTPUT');
            expect(runSessionIds().pop()).toBe('20250305_091523_a1b2c3');
            // It is now one of the admin's sessions here.
            expect(await hermesCmd(admin, room, 'sessions')).toContain('Deploy notes');
        } finally {
            await rig.setting('admin_user_ids', '');
        }
    });
});

describe('automatic resets (session_reset)', () => {
    afterEach(async () => {
        await rig.setting('session_reset', 'none');
    });

    it('idle: a session idle longer than session_idle_minutes starts over, the Hermes session is marked ended, the answer says so once', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.setting('session_idle_minutes', 30);
        await rig.setting('session_reset', 'idle');
        await rig.ask(alice, dm, 'one');
        await rig.ask(alice, dm, 'two');
        const [a, b] = runSessionIds();
        expect(b).toBe(a);
        ageSession(`agent:main:rocketchat:dm:${dm.id}`, 31 * 60_000);
        const { reply } = await rig.ask(alice, dm, 'three');
        const c = runSessionIds().pop();
        expect(c).not.toBe(a);
        expect(reply.text.startsWith('_New session: the previous one had been idle longer than the configured time._\n\nre: three')).toBe(true);
        expect(hermes.getSession(a)).toMatchObject({ end_reason: 'session_reset' });
        const { reply: next } = await rig.ask(alice, dm, 'four');
        expect(next.text).toBe('re: four');
        expect(runSessionIds().pop()).toBe(c);
    });

    it('daily: activity before the last reset hour starts over; none: never', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.setting('session_reset', 'daily');
        await rig.ask(alice, dm, 'today');
        const [a] = runSessionIds();
        ageSession(`agent:main:rocketchat:dm:${dm.id}`, 25 * 3600_000);
        const { reply } = await rig.ask(alice, dm, 'tomorrow');
        expect(reply.text.startsWith('_New session: sessions start over daily at the configured hour._')).toBe(true);
        expect(runSessionIds().pop()).not.toBe(a);
        await rig.setting('session_reset', 'none');
        ageSession(`agent:main:rocketchat:dm:${dm.id}`, 25 * 3600_000);
        const { reply: kept } = await rig.ask(alice, dm, 'later');
        expect(kept.text).toBe('re: later');
    });

    it('a session with a turn in flight is never reset under it', async () => {
        const alice = person('alice');
        const room = rig.room(`inflight${n}`, [alice, rig.bot]);
        await rig.setting('session_reset', 'idle');
        await rig.setting('session_idle_minutes', 5);
        await rig.ask(alice, room, `@${bot()} warm`);
        const [a] = runSessionIds();
        hermes.configure({ slowIntervalMs: 50 });
        hermes.setReply(null);
        const slow = await rig.post(alice, room, `@${bot()} SLOW long one`);
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs' && runSessionIds().length === 2, 5_000);
        ageSession(`agent:main:rocketchat:channel:${room.id}:${alice.id}`, 10 * 60_000);
        const queued = await rig.post(alice, room, `@${bot()} queued behind`);
        await rig.waitForBotReply(room, { after: queued, timeoutMs: 30_000 });
        await rig.settle();
        expect(runSessionIds()).toEqual([a, a, a]);
        expect(rig.botMessages(room).some((m) => m.text.includes('New session'))).toBe(false);
        // The queued turn was answered after the slow one, in the same session.
        const replies = rig.botMessages(room);
        const answers = replies.map((m) => m.text);
        expect(answers[1]).toContain('SLOW:');
        expect(answers[2]).toContain('queued behind');
        // The slow answer is the slow question's; the queued question came while it was in flight,
        // and its run was started only once that answer was out, not beside it in a fresh session.
        expect(turnOfStored(replies[1])).toBe(slow.id);
        expect(queued.createdAt.getTime()).toBeLessThan(replies[1].createdAt.getTime());
        const creates = hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');
        expect(creates[2].at).toBeGreaterThanOrEqual(replies[1].createdAt.getTime());
    }, 40_000);
});

describe('search', () => {
    it("finds words in the asker's sessions here or everywhere, with a link to the conversation; never another person's", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`search${n}`, [alice, bob, rig.bot]);
        const root = await rig.post(alice, room, 'thread root', { silent: true });
        await rig.ask(alice, room, `@${bot()} the kubernetes upgrade is due`, { tmid: root.id });
        await rig.ask(bob, room, `@${bot()} bob also mentions kubernetes`);
        const found = await hermesCmd(alice, room, 'search kubernetes upgrade', root.id);
        expect(found.split('\n')[0]).toBe('*Sessions with “kubernetes upgrade”* (2 matches, newest first):');
        expect(found).toContain('“the **kubernetes** **upgrade** is due”');
        expect(found).toContain(`[open](http://127.0.0.1:3000/channel/${room.name}/thread/${root.id})`);
        expect(found).not.toContain('bob also');
        expect(await hermesCmd(alice, room, 'search nothing-like-this', root.id)).toBe('No message with “nothing-like-this” in the 1 sessions searched.');
        expect(await hermesCmd(alice, room, 'search all kubernetes')).toContain('the **kubernetes** upgrade');
        expect(await hermesCmd(bob, room, 'search all upgrade')).toBe('No message with “upgrade” in the 1 sessions searched.');
    });

    it('when Hermes cannot be read, the answer is that state, never "no results"', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.ask(alice, dm, 'remember the password policy');
        hermes.script({ method: 'GET', path: /^\/api\/sessions\/[^/]+\/messages$/, error: 'internal_error', always: true });
        expect(await hermesCmd(alice, dm, 'search password')).toBe(
            'Search is not available right now: Hermes could not be read (server-error). Nothing was searched; try again later.',
        );
        expectLogged(rig.logText()).toContain('Session search for');
    });
});
