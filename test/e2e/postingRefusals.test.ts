import { Rig, StoredRoom, StoredUser } from '../../rig';
import { expectLogged, FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 35 §3, rooms the bot cannot post in. The rig refuses the bot's posts as the server does
 * (rig/rules.ts canSendMessage after canSendMessage.ts, assertEncryptionAllows after
 * methods/sendMessage.ts): read-only without `post-readonly` unless unmuted, muted, a blocked DM,
 * an encrypted room that takes only e2e messages. The app starts no turn it cannot deliver, tells
 * the asker privately once, and never retries a refusal; e2e messages stay out of turns.
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
    rig.server.store.serverSettings.set('E2E_Enable', false);
    rig.server.store.serverSettings.set('E2E_Allow_Unencrypted_Messages', false);
    await rig.settle();
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
const runs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');
/** An admin may post in a read-only room; the bot (role `app`) may not. */
const admin = () => {
    const a = person('admin');
    a.roles.push('admin');
    return a;
};

async function mention(who: StoredUser, room: StoredRoom, text: string): Promise<void> {
    await rig.post(who, room, `@${bot()} ${text}`);
    await rig.settle();
}

describe('the server refuses the bot: the rig as strict as canSendMessage.ts', () => {
    it('refuses the bot in a read-only room unless unmuted, where it is muted, and in a blocked DM; with E2E on, clear text in an encrypted room', async () => {
        const owner = admin();
        const room = rig.room(`rules${++n}`, [owner, rig.bot], 'c', { readOnly: true });
        const bySender = (r: StoredRoom) => rig.server.sendAppMessage({ room: { id: r.id }, sender: { id: rig.bot.id }, text: 'hi' } as never);
        expect(() => bySender(room)).toThrow("You can't send messages because the room is readonly.");
        room.unmuted = [bot()];
        expect(() => bySender(room)).not.toThrow();
        const open = rig.room(`muted${n}`, [owner, rig.bot]);
        open.muted = [bot()];
        expect(() => bySender(open)).toThrow('You_have_been_muted');
        const dm = rig.direct([owner, rig.bot]);
        dm.blocked = true;
        expect(() => bySender(dm)).toThrow('room_is_blocked');
        const secret = rig.room(`enc${n}`, [owner, rig.bot], 'p');
        secret.encrypted = true;
        expect(() => bySender(secret)).not.toThrow();
        rig.server.store.serverSettings.set('E2E_Enable', true);
        expect(() => bySender(secret)).toThrow('Not allowed to send un-encrypted messages in an encrypted room');
        rig.server.store.serverSettings.set('E2E_Allow_Unencrypted_Messages', true);
        expect(() => bySender(secret)).not.toThrow();
    });
});

describe('a mention where the bot may not post', () => {
    it('a read-only room: no turn, one private notice per person, however often they ask; unmuted, the bot answers', async () => {
        const owner = admin();
        const room = rig.room(`ro${++n}`, [owner, rig.bot], 'c', { readOnly: true });
        await mention(owner, room, 'status?');
        await mention(owner, room, 'status again?');
        expect(runs()).toHaveLength(0);
        expect(rig.botMessages(room)).toHaveLength(0);
        expect(rig.ephemerals(owner, room)).toEqual([expect.stringContaining('this room is read-only and the bot may not post in it')]);
        room.unmuted = [bot()];
        const { reply } = await rig.ask(owner, room, `@${bot()} and now?`);
        expect(reply.text).toContain('answer to:');
    });

    it('a room where the bot is muted: no turn, the asker is told why, in their language', async () => {
        const alice = rig.user(`anna${++n}`, { language: 'de' });
        const room = rig.room(`mute${++n}`, [alice, rig.bot]);
        room.muted = [bot()];
        await mention(alice, room, 'hallo?');
        expect(runs()).toHaveLength(0);
        expect(rig.ephemerals(alice, room)).toEqual([expect.stringContaining('Er ist in diesem Raum stummgeschaltet')]);
    });

    it('an encrypted room: a clear-text mention is not answered; an e2e message (ciphertext) is not a turn and gets no notice', async () => {
        const alice = person('alice');
        const room = rig.room(`e2e${++n}`, [alice, rig.bot], 'p');
        room.encrypted = true;
        rig.server.store.serverSettings.set('E2E_Enable', true);
        await rig.post(alice, room, 'eyJhbGciOiJBMjU2R0NNIn0.cipher', { t: 'e2e' });
        await rig.settle();
        expect(rig.ephemerals(alice, room)).toEqual([]);
        // A person's clear text reaches the room only where the admin allows it.
        await expect(rig.post(alice, room, `@${bot()} hello`)).rejects.toThrow('un-encrypted');
        rig.server.store.serverSettings.set('E2E_Allow_Unencrypted_Messages', true);
        await mention(alice, room, 'hello');
        expect(runs()).toHaveLength(0);
        expect(rig.botMessages(room)).toHaveLength(0);
        expect(rig.ephemerals(alice, room)).toEqual([expect.stringContaining('does not answer in end-to-end encrypted rooms')]);
    });
});

describe('encrypted messages never reach Hermes', () => {
    it('a room whose encryption was turned off: its earlier e2e messages stay out of the context block', async () => {
        const alice = person('alice');
        const room = rig.room(`was-e2e${++n}`, [alice, rig.bot], 'p');
        await rig.post(alice, room, 'before encryption, in clear', { silent: true });
        await rig.post(alice, room, 'CIPHERTEXT-eyJhbGciOiJBMjU2R0NNIn0', { t: 'e2e', silent: true });
        const { reply } = await rig.ask(alice, room, `@${bot()} what did I say?`);
        expect(reply.text).toContain('answer to:');
        const input = (runs()[0].json as { input: string }).input;
        expect(input).toContain('before encryption, in clear');
        expect(input).not.toContain('CIPHERTEXT');
    });
});

describe('a refusal found only when the answer is posted', () => {
    it('the person blocks the bot while Hermes works: one private notice, no notice in the room, no retry', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        hermes.setReply(() => {
            dm.blocked = true;
            return 'an answer nobody may post';
        });
        await rig.post(alice, dm, 'tell me something');
        const notice = await rig.waitForEphemeral((e) => e.userId === alice.id && e.roomId === dm.id);
        expect(notice.text).toContain('the server refused the bot');
        await rig.settle();
        expect(rig.botMessages(dm).map((m) => m.text)).not.toContain('an answer nobody may post');
        expect(runs()).toHaveLength(1);
        expect(rig.ephemerals(alice, dm)).toHaveLength(1);
        expectLogged(rig.logText()).toMatch(/room_is_blocked/);
    });
});

describe('a scheduled prompt where the bot may not post', () => {
    it('cron add here or --to a read-only or muted room is refused with the reason, and no job is kept', async () => {
        const owner = admin();
        await rig.setting('admin_user_ids', owner.id);
        const readOnly = rig.room(`news${++n}`, [owner, rig.bot], 'c', { readOnly: true });
        const muted = rig.room(`quiet${n}`, [owner, rig.bot]);
        muted.muted = [bot()];
        const open = rig.room(`open${n}`, [owner, rig.bot]);
        const cron = (room: StoredRoom, line: string) => rig.commandAnswer(owner, room, `/hermes cron ${line}`);
        expect(await cron(readOnly, 'add every 1h Headlines')).toBe(
            'The bot may not post in that room (it is read-only), so a scheduled prompt there could never deliver. Choose another room with `--to`, or ask a moderator to let the bot post.',
        );
        expect(await cron(open, `add every 1h Headlines --to #${muted.name}`)).toBe(
            'The bot is muted in that room, so a scheduled prompt there could never deliver. Choose another room with `--to`, or ask a moderator to unmute it.',
        );
        expect(await cron(open, 'list all')).toBe('There are no scheduled prompts.');
        // Unmuted by a moderator, the same line is taken.
        readOnly.unmuted = [bot()];
        expect(await cron(readOnly, 'add every 1h Headlines')).toContain('added');
        await rig.setting('admin_user_ids', '');
    });
});
