import { sign } from 'jsonwebtoken';
import { Rig, StoredUser } from '../../rig';
import { FakeHermes, SECRETS_IN_TESTS, useRigAndHermes } from '../support/e2e';

/**
 * Issue 17, the shared-session token attack: in a shared thread every asker's token lands in
 * one Hermes transcript, so without a scope rule the next asker's turn (or text injected into
 * it) could use an earlier asker's token to read that person's DM with the bot. A token is
 * usable only while it is the newest issued in its conversation.
 */
const ENDPOINT_SECRET = 'endpoint-secret-0123456789abcdef-0123456789';
const ASKER_KEY = 'asker-key-0123456789abcdef-0123456789abcdef';
SECRETS_IN_TESTS.add(ASKER_KEY);

const env = useRigAndHermes({ hermes_transport: 'chat', endpoint_secret: ENDPOINT_SECRET, asker_key: ASKER_KEY, progress_in_channel: 'off' });
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
const jwt = () => sign({ sub: 'history-tool' }, ENDPOINT_SECRET, { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 60 });
const history = (body: unknown) =>
    fetch(`${rig.server.apiUrl}/api/apps/public/${rig.appId}/history`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${jwt()}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
    });

describe('asker token scope in a shared thread', () => {
    it("an earlier asker's token stops working once the next asker's turn is submitted: no reading their DM", async () => {
        const alice = person('alice');
        const bob = person('bob');
        const room = rig.room(`shared${n}`, [alice, bob, rig.bot]);
        const dm = rig.direct([alice, rig.bot]);
        await rig.post(alice, dm, 'alice private note', { silent: true });
        const root = await rig.post(alice, room, 'plans for friday', { silent: true });
        const ask = (who: StoredUser, text: string) => rig.ask(who, room, `@${rig.bot.username} ${text}`, { tmid: root.id });

        await ask(alice, 'what is planned?');
        const tokenA = lastToken();
        expect(tokenA.split('.')[1]).toBe(alice.id);
        // While alice's turn is the newest of the thread, her token reads what she may read, her DM included.
        expect((await history({ asker: tokenA, room_id: dm.id })).status).toBe(200);

        await ask(bob, 'and who brings cake?');
        const tokenB = lastToken();
        expect(tokenB.split('.')[1]).toBe(bob.id);
        // Bob's turn (and the transcript it sees) holds alice's token: it no longer opens anything.
        const replay = await history({ asker: tokenA, room_id: dm.id });
        expect(replay.status).toBe(403);
        expect(await replay.json()).toEqual({ error: 'forbidden' });
        expect((await history({ asker: tokenA })).status).toBe(403);

        const own = await history({ asker: tokenB, room_id: room.id });
        expect(own.status).toBe(200);
        expect(((await own.json()) as { room_id: string }).room_id).toBe(room.id);
        // Bob's valid token still cannot read alice's DM.
        expect((await history({ asker: tokenB, room_id: dm.id })).status).toBe(403);
    });
});
