import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { expectLogged, FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 31, "Tests that make this last": a reply pointer to a bot answer in a room the asker
 * cannot read. A message that links another one gets a `[Replying to …]` line with the linked
 * message's text (context/replyPointer.ts). When the linked message is the bot's answer in bob's
 * private group or in bob's DM with the bot, and alice — in neither — links it from her DM or a
 * room she is in, the answer's text must reach Hermes in no form: her turn goes on without the
 * pointer. The same link posted by bob in his own group does carry the text (the control: the
 * link is one the app follows, so only the room rule keeps it out).
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
});

const SITE = 'http://127.0.0.1:3000';
const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
const runInputs = (from = 0) =>
    hermes.requests
        .slice(from)
        .filter((r) => r.method === 'POST' && r.path === '/v1/runs')
        .map((r) => (r.json as { input: string }).input);
/** Everything Hermes received from request `from` on: bodies (raw and parsed), addresses, headers. */
const receivedSince = (from: number) =>
    hermes.requests
        .slice(from)
        .map((r) => [r.method, r.url, JSON.stringify(r.headers), r.body, JSON.stringify(r.json ?? null)].join('\n'))
        .join('\n');

/** The web client's Quote: a blank-labelled link to the message, then what the person typed. */
const quote = (room: StoredRoom, m: StoredMessage, path: 'group' | 'direct') => `[ ](${SITE}/${path}/${path === 'group' ? room.name : room.id}?msg=${m.id})`;

/** bob's private group and bob's DM with the bot, each holding one bot answer with a secret only bob may read. */
async function bobsAnswers(bob: StoredUser) {
    const group = rig.room(`bobs-group${n}`, [bob, rig.bot], 'p');
    const dm = rig.direct([bob, rig.bot]);
    const secrets = { group: `Quartzheron ${n} ships on the ninth`, dm: `Velvetanchor ${n} passphrase is tangerine` };
    hermes.setReply(() => secrets.group);
    const { reply: inGroup } = await rig.ask(bob, group, `@${bot()} when do we ship?`);
    hermes.setReply(() => secrets.dm);
    const { reply: inDm } = await rig.ask(bob, dm, 'what is the password?');
    expect(inGroup.text).toContain(secrets.group);
    expect(inDm.text).toContain(secrets.dm);
    return { group, dm, inGroup, inDm, secrets };
}

describe('a reply pointer to a bot answer in a room the asker cannot read', () => {
    it('the control: bob linking the answer in his own group gets the pointer with its text', async () => {
        const bob = person('bob');
        const { group, inGroup, secrets } = await bobsAnswers(bob);
        hermes.setReply(() => 'ok');
        const from = hermes.requests.length;
        await rig.ask(bob, group, `${quote(group, inGroup, 'group')} @${bot()} why the ninth?`);
        const [input] = runInputs(from);
        expect(input).toContain(`[Replying to your previous message: "${secrets.group}"]\nwhy the ninth?`);
    });

    it.each([
        ['her DM with the bot', 'dm'],
        ['a channel she is in', 'channel'],
    ] as const)('alice links it from %s: her turn is answered, without the pointer; the text reaches Hermes in no form', async (_, where) => {
        const bob = person('bob');
        const alice = person('alice');
        const { group, dm, inGroup, inDm, secrets } = await bobsAnswers(bob);
        expect(group.members.has(alice.id)).toBe(false);
        expect(dm.members.has(alice.id)).toBe(false);
        const hers = where === 'dm' ? rig.direct([alice, rig.bot]) : rig.room(`alices${n}`, [alice, rig.bot]);
        const mention = where === 'dm' ? '' : `@${bot()} `;
        // The scripted model echoes what it was sent: a pointer that slipped through would be in the answer too.
        hermes.setReply(null);
        const from = hermes.requests.length;
        const { reply: first } = await rig.ask(alice, hers, `${quote(group, inGroup, 'group')} ${mention}what did you tell bob?`);
        const { reply: second } = await rig.ask(alice, hers, `${quote(dm, inDm, 'direct')} ${mention}and the password?`);

        const inputs = runInputs(from);
        expect(inputs).toHaveLength(2);
        expect(inputs[0]).toContain('what did you tell bob?');
        expect(inputs[1]).toContain('and the password?');
        const received = receivedSince(from);
        for (const secret of Object.values(secrets)) {
            expect(received).not.toContain(secret);
            // Nor a piece of it (a pointer cuts and rewrites the text it quotes): its first word is made up.
            expect(received.toLowerCase()).not.toContain(secret.split(' ')[0].toLowerCase());
            expect(first.text).not.toContain(secret);
            expect(second.text).not.toContain(secret);
        }
        for (const input of inputs) {
            expect(input).not.toContain('[Replying to');
        }
        // The links were followed (one read each) and refused for the room, not missed.
        const log = rig.logText();
        expectLogged(log).toContain(`Reply pointer to message ${inGroup.id} left out`);
        expectLogged(log).toContain(`Reply pointer to message ${inDm.id} left out`);
    });
});
