import { Rig, StoredUser } from '../../rig';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 35 §2: every command of the README typed as a person types it, with quotes, apostrophes
 * and Unicode. Rocket.Chat splits the line before the app sees it (the rig does it the same
 * way: rig/slashCommandLine.ts): quoted spans lose their quotes, two apostrophes form a span.
 */
const env = useRigAndHermes({ admin_user_ids: '' });
let hermes: FakeHermes;
let rig: Rig;
let alice: StoredUser;

beforeAll(async () => {
    hermes = env.hermes();
    rig = env.rig();
    alice = rig.user('alice');
    await rig.setting('cron_user_ids', alice.id);
});

beforeEach(() => {
    hermes.reset();
    hermes.setReply((msg) => `re: ${msg.split('\n').pop()}`);
});

describe('commands as typed', () => {
    it('cron add --name "Daily standup": the whole quoted name, and the apostrophe of the prompt kept', async () => {
        const room = rig.room('standup', [alice, rig.bot]);
        const added = await rig.commandAnswer(alice, room, `/hermes cron add every day 09:00 Summarise yesterday's open incidents --name "Daily standup"`);
        expect(added).toContain('Daily standup');
        const list = await rig.commandAnswer(alice, room, '/hermes cron list');
        expect(list).toContain('Daily standup');
        // The prompt, apostrophe and all, is what Hermes is asked when the job runs.
        expect(await rig.commandAnswer(alice, room, '/hermes cron run "Daily standup"')).toBe('*Daily standup* runs now.');
        await hermes.waitForRequest((r) => r.method === 'POST' && JSON.stringify(r.json).includes("Summarise yesterday's open incidents"), 10_000);
        expect(await rig.commandAnswer(alice, room, '/hermes cron pause "Daily standup"')).toContain('Daily standup');
    });

    it('title "Q3 plan: Café ☕": quotes group the words, Unicode kept; resume by that title', async () => {
        const dm = rig.direct([alice, rig.bot]);
        await rig.ask(alice, dm, 'first question');
        expect(await rig.commandAnswer(alice, dm, '/hermes title "Q3 plan: Café ☕"')).toBe('Title set: *Q3 plan: Café ☕*.');
        expect(await rig.commandAnswer(alice, dm, '/hermes title')).toBe("This conversation's session is titled *Q3 plan: Café ☕*.");
        await rig.commandAnswer(alice, dm, '/hermes new');
        expect(await rig.commandAnswer(alice, dm, '/hermes resume "Q3 plan: Café ☕"')).toContain('Q3 plan: Café ☕');
    });

    it("title Bob's and Carol's plan: the server makes the two apostrophes a quoted span", async () => {
        const room = rig.room('apostrophes', [alice, rig.bot]);
        await rig.ask(alice, room, `@${rig.bot.username} hello`);
        expect(await rig.commandAnswer(alice, room, "/hermes title Bob's and Carol's plan")).toBe('Title set: *Bobs and Carols plan*.');
    });

    it('search "deploy window": the quoted words are searched', async () => {
        const me = rig.user('searcher');
        const dm = rig.direct([me, rig.bot]);
        await rig.ask(me, dm, 'When is the deploy window?');
        expect(await rig.commandAnswer(me, dm, '/hermes search "deploy window"')).toContain('deploy');
    });
});
