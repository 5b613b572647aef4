import { Rig, StoredRoom, StoredUser } from '../../rig';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 17: `/hermes` is registered server-wide, so anyone can type it in any room. It is
 * admitted like a message: allowed_user_ids, ignore_senders and rooms the bot is in. A
 * refused caller gets one private "not available here" line and nothing else: no session
 * key or id, no Hermes version, no new session.
 */
const env = useRigAndHermes({ hermes_transport: 'chat', progress_in_channel: 'off' });
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
const NOT_AVAILABLE = '`/hermes` is not available here.';
const chats = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions');
const header = (r: { headers: Record<string, string | string[] | undefined> }, name: string) => String(r.headers[name]);

/** Runs the command and returns what only `who` saw in that room because of it. */
async function command(who: StoredUser, room: StoredRoom, line: string, tmid?: string): Promise<string[]> {
    const before = rig.ephemerals(who, room).length;
    await rig.command(who, room, line, { tmid });
    await rig.settle();
    return rig.ephemerals(who, room).slice(before);
}

/** Nothing a refused caller sees may name the session or Hermes. */
function expectNothingLeaked(seen: string[]): void {
    const text = seen.join('\n');
    expect(text).not.toMatch(/agent:main|rc_[0-9a-f]{8}|Session|version|reachable/i);
}

describe('/hermes admission', () => {
    it('refuses a person outside allowed_user_ids: no status, no help, no reset of the shared thread', async () => {
        const alice = person('alice');
        const outsider = person('outsider');
        const room = rig.room(`allow${n}`, [alice, outsider, rig.bot]);
        const root = await rig.post(alice, room, 'thread root', { silent: true });
        await rig.setting('allowed_user_ids', alice.id);
        try {
            await rig.ask(alice, room, `@${rig.bot.username} hello`, { tmid: root.id });
            const sessionId = header(chats()[0], 'x-hermes-session-id');
            const healthBefore = hermes.requests.filter((r) => /health/.test(r.path)).length;

            for (const sub of ['status', 'help', 'new', 'stop']) {
                const seen = await command(outsider, room, `/hermes ${sub}`, root.id);
                expect([sub, seen]).toEqual([sub, [NOT_AVAILABLE]]);
                expectNothingLeaked(seen);
            }
            expect(hermes.requests.filter((r) => /health/.test(r.path)).length).toBe(healthBefore);

            // The thread's shared session was not reset by the outsider's /hermes new.
            await rig.ask(alice, room, `@${rig.bot.username} again`, { tmid: root.id });
            expect(header(chats()[1], 'x-hermes-session-id')).toBe(sessionId);
            // The allowed person still gets the real status.
            const status = await command(alice, room, '/hermes status', root.id);
            expect(status.join('\n')).toContain(sessionId);
        } finally {
            await rig.setting('allowed_user_ids', '');
        }
    });

    it('refuses an ignored sender', async () => {
        const otherBot = person('otherbot');
        const room = rig.room(`ignored${n}`, [otherBot, rig.bot]);
        await rig.setting('ignore_senders', otherBot.username);
        try {
            const seen = await command(otherBot, room, '/hermes status');
            expect(seen).toEqual([NOT_AVAILABLE]);
            expectNothingLeaked(seen);
        } finally {
            await rig.setting('ignore_senders', '');
        }
    });

    it('refuses in a room the bot is not a member of, and in a group DM without it', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const botless = rig.room(`botless${n}`, [alice, bob]);
        for (const sub of ['status', 'new', 'help']) {
            const seen = await command(alice, botless, `/hermes ${sub}`);
            expect([sub, seen]).toEqual([sub, [NOT_AVAILABLE]]);
            expectNothingLeaked(seen);
        }
        const group = rig.direct([alice, bob, person('carol')]);
        expect(await command(alice, group, '/hermes status')).toEqual([NOT_AVAILABLE]);
        expect(chats()).toHaveLength(0);
    });

    it('still answers a member where the bot is, in a room and in the DM', async () => {
        const alice = person('alice');
        const room = rig.room(`member${n}`, [alice, rig.bot]);
        expect((await command(alice, room, '/hermes status')).join('\n')).toContain('Hermes status');
        const dm = rig.direct([alice, rig.bot]);
        expect((await command(alice, dm, '/hermes help')).join('\n')).toContain('how to use me');
        expect((await command(alice, dm, '/hermes new')).join('\n')).toContain('Started a new conversation');
    });
});
