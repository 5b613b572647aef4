import { Rig, StoredRoom, StoredUser } from '../../rig';
import { expectLogged, FakeHermes, useRigAndHermes } from '../support/e2e';
import { kindOfStored } from '../../rig/marks';

/**
 * The app's configuration in the running engine: installed without a Hermes URL it answers
 * only with the "not configured" notice, and once configured an invalid change keeps the
 * previous valid settings (README, Settings). Its own engine: the first test needs an app
 * that has never had a valid configuration, and a valid one cannot be taken back (that is
 * the point of the second).
 */
const NOT_CONFIGURED = ':warning: Hermes is not configured yet. Ask an administrator to set the Hermes URL and API key in the app settings.';

const env = useRigAndHermes({ hermes_url: '', progress_in_channel: 'off' });
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

afterEach(async () => {
    await rig.settle();
});

const person = (name: string) => rig.user(`${name}${++n}`);
const bot = () => rig.bot.username;

/** Posts and lets the app finish with it: for messages that must get no answer at all. */
async function unanswered(who: StoredUser, room: StoredRoom, text: string): Promise<void> {
    const question = await rig.post(who, room, text);
    await rig.settle();
    expect(rig.botMessages(room).filter((m) => m.createdAt >= question.createdAt)).toEqual([]);
}

describe('before any valid configuration', () => {
    it('answers a DM, a mention and /hermes only with the "not configured" notice, and asks Hermes nothing', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const { reply } = await rig.ask(alice, dm, 'hello?');
        expect(reply.text).toBe(NOT_CONFIGURED);
        expect(kindOfStored(reply)).toBe('notice');

        const room = rig.room(`unconfigured${n}`, [alice, rig.bot]);
        const mention = await rig.ask(alice, room, `@${bot()} anyone?`);
        expect(mention.reply.text).toContain(NOT_CONFIGURED);

        await rig.command(alice, room, '/hermes status');
        expect(rig.ephemerals(alice, room).pop()).toBe(NOT_CONFIGURED);
        expect(hermes.requests).toEqual([]);
        // The log names the setting at fault (never its value) and why each turn was refused.
        const log = rig.logText({ appLinesOnly: true });
        expectLogged(log).toMatch(/Settings invalid: .*hermes_url/);
        expectLogged(log).toContain('refused: the app has no valid configuration');
    });
});

describe('last good settings', () => {
    it('an invalid change keeps the previous valid settings in force: the bot still answers, the allowlist stays closed', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const aliceDm = rig.direct([alice, rig.bot]);
        const bobDm = rig.direct([bob, rig.bot]);
        await rig.setting('hermes_url', hermes.url);
        try {
            expect((await rig.ask(alice, aliceDm, 'first')).reply.text).toMatch(/^ECHO: first \| user_turns=1/);
            await rig.setting('allowed_user_ids', alice.id);
            await unanswered(bob, bobDm, 'let me in');

            const kept = () =>
                rig
                    .logText({ appLinesOnly: true })
                    .split('\n')
                    .filter((l) => l.includes('Settings not applied, the previous valid settings stay in force'));
            const keptBefore = kept().length;
            await rig.setting('allowed_user_ids', 'not an id!');
            await rig.settingsReported();
            // Still configured (no "not configured" notice), still the same session...
            expect((await rig.ask(alice, aliceDm, 'second')).reply.text).toMatch(/^ECHO: second \| user_turns=2 \| prev=first/);
            // ...and the typo did not open the bot to everyone: the previous allowlist holds.
            await unanswered(bob, bobDm, 'and now?');
            // The log says so, naming the setting, never its value.
            expect(kept()).toHaveLength(keptBefore + 1);
            expect(kept().pop()).toContain('allowed_user_ids');
            expect(rig.logText({ appLinesOnly: true })).not.toContain('not an id!');
        } finally {
            await rig.setting('allowed_user_ids', '');
        }
        // A valid change applies again: the allowlist is gone.
        expect((await rig.ask(bob, bobDm, 'hello')).reply.text).toMatch(/^ECHO: hello/);
    });
});

describe('a quiet log', () => {
    it('one save of the whole form gives one "settings applied" line, one shared-bot warning and one Hermes probe; messages add no engine noise', async () => {
        await rig.setting('hermes_url', hermes.url);
        await rig.settingsReported();
        const lines = () => rig.logText({ appLinesOnly: true }).split('\n');
        const count = (needle: string) => lines().filter((l) => l.includes(needle)).length;
        const before = { applied: count('Settings applied'), shared: count('More than one person can reach this bot'), probe: count('reachable;') };
        // What Rocket.Chat does when an admin saves the form: one update (and one onSettingUpdated) per changed setting, back to back.
        for (const [id, value] of [
            ['timezone', 'Europe/Berlin'],
            ['history_max_messages', 40],
            ['history_min_messages', 5],
            ['hermes_timeout_seconds', 90],
            ['usage_footer', true],
            ['reply_mode', 'channel'],
        ] as Array<[string, unknown]>) {
            await rig.server.updateAppSetting(rig.appId, id, value);
        }
        await rig.settingsReported();
        expect(count('Settings applied') - before.applied).toBe(1);
        expect(count('More than one person can reach this bot') - before.shared).toBe(1);
        expect(count('reachable;') - before.probe).toBe(1);
        // Every message event used to cost a "method not found" line from the engine (checkPostMessageSent).
        const alice = person('alice');
        await rig.ask(alice, rig.room(`quiet${n}`, [alice, rig.bot]), `@${bot()} hello`);
        expect(rig.logText()).not.toMatch(/Invalid event interface|Method not found/);
        for (const [id, value] of [
            ['timezone', 'UTC'],
            ['history_max_messages', 50],
            ['history_min_messages', 10],
            ['hermes_timeout_seconds', 10],
            ['usage_footer', false],
        ] as Array<[string, unknown]>) {
            await rig.server.updateAppSetting(rig.appId, id, value);
        }
        await rig.settingsReported();
    });
});
