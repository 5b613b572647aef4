import { Rig, StoredRoom, StoredUser } from '../../rig';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 12, end to end: scheduled prompts (created from chat, fired by the app's own sweep,
 * delivered through the turn pipeline), the home channel, automation rooms, reply_mode.
 * The clock is controlled through the job's stored next time; the sweep is fired on demand.
 */
const env = useRigAndHermes({});
let hermes: FakeHermes;
let rig: Rig;
let n = 0;
let admin: StoredUser;

beforeAll(async () => {
    hermes = env.hermes();
    rig = env.rig();
    admin = rig.user('cronadmin');
    await rig.setting('admin_user_ids', admin.id);
});

beforeEach(() => {
    hermes.reset();
    hermes.setReply((msg) => `report: ${msg.split('\n').pop()}`);
});

const bot = () => rig.bot.username;
const person = (name: string) => rig.user(`${name}${++n}`);
const hermesCmd = (who: StoredUser, room: StoredRoom, line: string, tmid?: string) => rig.commandAnswer(who, room, `/hermes ${line}`, { tmid });
const runs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');

type StoredJob = { id: string; name: string; nextAt?: number; paused?: boolean; running?: string };
function jobs(): StoredJob[] {
    return [...rig.server.bridges.persistence.records.values()]
        .filter((r) => r.associations.some((a) => a.getID() === 'hermes-cron-jobs'))
        .map((r) => r.data as StoredJob);
}
/** The controllable clock: the job's time has come. */
function makeDue(name: string): void {
    const job = jobs().find((j) => j.name === name) as StoredJob;
    job.nextAt = Date.now() - 1000;
}
async function sweep(): Promise<void> {
    await rig.server.bridges.scheduler.fireNow('hermes-sweep-run', {});
    await rig.settle();
}
async function deliveries(room: StoredRoom, count: number): Promise<string[]> {
    await rig.waitForMessage(() => rig.botMessages(room).length >= count, 15_000, `${count} deliveries`);
    await rig.settle();
    return rig.botMessages(room).map((m) => m.text);
}

describe('scheduled prompts', () => {
    it('added in a room, fired at its time, delivered once with the header, in its own session; list shows it', async () => {
        const room = rig.room(`cron${n++}`, [admin, rig.bot]);
        expect(await hermesCmd(admin, room, 'cron add every 2h Summarise the open incidents --name incidents')).toMatch(
            /^Scheduled prompt \*incidents\* \(`[0-9a-f]{8}`\) added: every 2h\. Next run: \d{4}-\d\d-\d\d \d\d:\d\d/,
        );
        const [job] = jobs().filter((j) => j.name === 'incidents');
        makeDue('incidents');
        await sweep();
        await sweep();
        const texts = await deliveries(room, 1);
        expect(texts).toEqual(['**[Cron delivery: incidents]**\nreport: Summarise the open incidents']);
        expect(runs()).toHaveLength(1);
        expect(runs()[0].headers['x-hermes-session-key']).toBe(`agent:main:rocketchat:cron:${job.id}`);
        await sweep();
        expect(rig.botMessages(room)).toHaveLength(1);
        const list = await hermesCmd(admin, room, 'cron list');
        expect(list).toContain(`**incidents** (\`${job.id}\`) · every 2h · next `);
        expect(list).toContain('· last delivered ');
    });

    it('pause stops it, resume starts it again, remove ends it; run fires at once', async () => {
        const room = rig.room(`cronp${n++}`, [admin, rig.bot]);
        await hermesCmd(admin, room, 'cron add 0 9 * * 1-5 Standup digest --name standup');
        expect(await hermesCmd(admin, room, 'cron pause standup')).toBe('*standup* is paused.');
        makeDue('standup');
        await sweep();
        expect(runs()).toHaveLength(0);
        expect(await hermesCmd(admin, room, 'cron resume standup')).toMatch(/^\*standup\* runs again\. Next run: /);
        expect(jobs().find((j) => j.name === 'standup')?.nextAt).toBeGreaterThan(Date.now());
        expect(await hermesCmd(admin, room, 'cron run standup')).toBe('*standup* runs now.');
        expect(await deliveries(room, 1)).toEqual(['**[Cron delivery: standup]**\nreport: Standup digest']);
        expect(await hermesCmd(admin, room, 'cron remove standup')).toBe('*standup* is removed.');
        expect(await hermesCmd(admin, room, 'cron list')).toBe('No scheduled prompts deliver to this room.');
    });

    it('[SILENT] posts nothing; a failing Hermes gives one notice and list shows the failure', async () => {
        const room = rig.room(`crons${n++}`, [admin, rig.bot]);
        await hermesCmd(admin, room, 'cron add every 30m Anything new? --name quiet');
        hermes.setReply(() => '[SILENT]');
        makeDue('quiet');
        await sweep();
        await rig.waitForMessage(() => !jobs().find((j) => j.name === 'quiet')?.running, 15_000, 'the silent run to end');
        await rig.settle();
        expect(rig.botMessages(room)).toHaveLength(0);
        expect(await hermesCmd(admin, room, 'cron list')).toContain('nothing to post');
        hermes.script({ method: 'POST', path: '/v1/runs', error: 'internal_error', times: 1 });
        makeDue('quiet');
        await sweep();
        const texts = await deliveries(room, 1);
        expect(texts).toHaveLength(1);
        expect(texts[0]).toMatch(/^\*\*\[Cron delivery: quiet\]\*\*\n:warning: Hermes ran into an error/);
        expect(await hermesCmd(admin, room, 'cron list')).toContain('**last run failed**');
        expect(await hermesCmd(admin, room, 'cron list')).toContain('(server-error)');
    });

    it('a restart of the app process between two runs loses nothing', async () => {
        const room = rig.room(`cronr${n++}`, [admin, rig.bot]);
        await hermesCmd(admin, room, 'cron add every 1h Hourly check --name hourly');
        makeDue('hourly');
        await sweep();
        await deliveries(room, 1);
        await rig.server.killAppProcess(rig.appId);
        makeDue('hourly');
        await sweep();
        expect(await deliveries(room, 2)).toEqual(['**[Cron delivery: hourly]**\nreport: Hourly check', '**[Cron delivery: hourly]**\nreport: Hourly check']);
    }, 60_000);

    it('only admins and cron_user_ids create jobs; --to home delivers to the home channel set with /hermes sethome', async () => {
        const alice = person('alice');
        const room = rig.room(`crona${n}`, [alice, admin, rig.bot]);
        // alice is in the home channel: a job delivers only where its creator may post (issue 31).
        const home = rig.room(`home${n}`, [alice, admin, rig.bot]);
        expect(await hermesCmd(alice, room, 'cron add every 1h hi')).toBe('Only admins and the people an admin listed may create scheduled prompts.');
        expect(await hermesCmd(alice, home, 'sethome')).toBe('The command `/hermes sethome` is not enabled for you here.');
        expect(await hermesCmd(admin, home, 'sethome')).toBe('This room is now the home channel: scheduled prompts with `--to home` deliver here.');
        await rig.settle();
        await rig.setting('cron_user_ids', alice.id);
        try {
            expect(await hermesCmd(alice, room, 'cron add every 1h To the home channel --name tohome --to home')).toContain('added');
            makeDue('tohome');
            await sweep();
            expect(await deliveries(home, 1)).toEqual(['**[Cron delivery: tohome]**\nreport: To the home channel']);
            expect(rig.botMessages(room)).toHaveLength(0);
        } finally {
            await rig.setting('cron_user_ids', '');
        }
    });
});

describe('delivery targets and limits', () => {
    afterEach(async () => {
        await rig.setting('cron_user_ids', '');
        await rig.setting('cron_max_jobs_per_user', 10);
    });

    it('--to a thread link delivers into that thread; the thread session then sees the delivery as context once', async () => {
        const room = rig.room(`crontl${n++}`, [admin, rig.bot]);
        const root = await rig.post(admin, room, 'release thread', { silent: true });
        const link = `http://127.0.0.1:3000/channel/${room.name}/thread/${root.id}`;
        expect(await hermesCmd(admin, room, `cron add every 1h Release status --name relstatus --to ${link}`)).toContain('added');
        makeDue('relstatus');
        await sweep();
        await rig.waitForMessage((m) => m.senderId === rig.bot.id && m.tmid === root.id, 15_000, 'the delivery in the thread');
        await rig.settle();
        await rig.ask(admin, room, `@${bot()} anything to add?`, { tmid: root.id });
        const input = (runs()[1].json as { input: string }).input;
        expect(input).toContain(`${bot()} (you): **[Cron delivery: relstatus]**`);
        expect(await hermesCmd(admin, room, 'cron add every 1h x --to #no-such-room')).toBe(
            'Scheduled prompts deliver only to a room or thread that you and the bot are both in and where you may post: #no-such-room is not one. Use `#room-name`, a thread link, or `home`.',
        );
    });

    it('per-person limits refuse more jobs than cron_max_jobs_per_user (admins are not limited)', async () => {
        const alice = person('alice');
        const room = rig.room(`cronlim${n}`, [alice, rig.bot]);
        await rig.setting('cron_user_ids', alice.id);
        await rig.setting('cron_max_jobs_per_user', 1);
        expect(await hermesCmd(alice, room, 'cron add every 1h one')).toContain('added');
        expect(await hermesCmd(alice, room, 'cron add every 1h two')).toBe('You already have 1 scheduled prompts, the most allowed.');
        expect(await hermesCmd(alice, room, 'cron add every 1m fast')).toMatch(/^That schedule cannot be used: /);
    });
});

describe('automation rooms', () => {
    it('start no turns from messages (a mention gets one private note), and still receive deliveries', async () => {
        const alice = person('alice');
        const room = rig.room(`auto${n}`, [alice, admin, rig.bot]);
        expect(await hermesCmd(admin, room, 'automation on')).toBe(
            'This room is now an automation room: only scheduled deliveries land here; the bot starts no turns from messages.',
        );
        await rig.settle();
        await rig.post(alice, room, `@${bot()} hello?`);
        await rig.post(alice, room, `@${bot()} anyone?`);
        await rig.settle();
        expect(runs()).toHaveLength(0);
        expect(rig.ephemerals(alice, room)).toEqual([
            'This room only receives scheduled deliveries; the bot does not answer here. Ask in another room or a direct message.',
        ]);
        await hermesCmd(admin, room, 'cron add every 1h Numbers --name numbers');
        makeDue('numbers');
        await sweep();
        expect(await deliveries(room, 1)).toEqual(['**[Cron delivery: numbers]**\nreport: Numbers']);
        await hermesCmd(admin, room, 'automation off');
        await rig.settle();
        await rig.ask(alice, room, `@${bot()} back?`);
        expect(runs()).toHaveLength(2);
    });
});

describe('reply_mode', () => {
    afterEach(async () => {
        await rig.setting('reply_mode', 'channel');
    });

    it('thread: a room mention is answered in a new thread on the question, and the thread continues that session', async () => {
        const alice = person('alice');
        const room = rig.room(`rthread${n}`, [alice, rig.bot]);
        await rig.setting('reply_mode', 'thread');
        const question = await rig.post(alice, room, `@${bot()} how do I rotate the keys?`);
        const reply = await rig.waitForBotReply(room, { after: question, tmid: question.id, timeoutMs: 15_000 });
        await rig.settle();
        expect(reply.tmid).toBe(question.id);
        expect(reply.text).toBe('report: how do I rotate the keys?');
        const key = `agent:main:rocketchat:channel:${room.id}:${question.id}`;
        expect(runs()[0].headers['x-hermes-session-key']).toBe(key);
        await rig.ask(alice, room, `@${bot()} and the certificates?`, { tmid: question.id });
        expect(runs()[1].headers['x-hermes-session-key']).toBe(key);
        // The thread's session already holds the question and the answer: nothing of them comes back as context.
        expect((runs()[1].json as { input: string }).input).not.toContain('Recent chat messages');
        // Commands never start threads.
        await rig.post(alice, room, `@${bot()} /status`);
        await rig.settle();
        expect(rig.botMessages(room).filter((m) => !m.tmid)).toHaveLength(1);
    });

    it("auto: the answer names the thread from the asker's words on its first line; a room policy overrides the setting", async () => {
        const alice = person('alice');
        const room = rig.room(`rauto${n}`, [alice, rig.bot]);
        const other = rig.room(`rchan${n}`, [alice, rig.bot]);
        await rig.setting('reply_mode', 'auto');
        await rig.setting('room_policies', `${other.id} reply=channel`);
        try {
            const question = await rig.post(alice, room, `@${bot()} Plan the database migration for next week`);
            const reply = await rig.waitForBotReply(room, { after: question, tmid: question.id, timeoutMs: 15_000 });
            await rig.settle();
            expect(reply.text).toBe('**Plan the database migration for next**\n\nreport: Plan the database migration for next week');
            const { reply: flat } = await rig.ask(alice, other, `@${bot()} in the channel`);
            expect(flat.tmid).toBeUndefined();
        } finally {
            await rig.setting('room_policies', '');
        }
    });
});
