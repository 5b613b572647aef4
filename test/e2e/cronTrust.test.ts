import { Rig, StoredRoom, StoredUser } from '../../rig';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 31 (5, 6 and the cron half of 7), end to end: a scheduled prompt delivers only where its
 * creator may post, shows its name as plain text, and runs with its owner's rights as they are
 * at each firing (allowlists, membership, the bot's membership, room_policies, daily budgets).
 * Driven like scheduled.test.ts: the job's stored next time is moved, the sweep fired on demand.
 */
const env = useRigAndHermes({});
let hermes: FakeHermes;
let rig: Rig;
let n = 0;
let admin: StoredUser;
let adminRoom: StoredRoom;

beforeAll(async () => {
    hermes = env.hermes();
    rig = env.rig();
    admin = rig.user('trustadmin');
    adminRoom = rig.room('trust-admin', [admin, rig.bot]);
    await rig.setting('admin_user_ids', admin.id);
});

beforeEach(() => {
    hermes.reset();
    hermes.setReply((msg) => `report: ${msg.split('\n').pop()}`);
});

afterEach(async () => {
    for (const id of ['cron_user_ids', 'allowed_user_ids', 'room_policies']) {
        await rig.setting(id, '');
    }
    await rig.setting('budget_user_turns_per_day', 0);
    await rig.settle();
});

const hermesCmd = (who: StoredUser, room: StoredRoom, line: string) => rig.commandAnswer(who, room, `/hermes ${line}`);
const runs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');

type StoredJob = { id: string; name: string; nextAt?: number; ownerId: string };
function jobs(): StoredJob[] {
    return [...rig.server.bridges.persistence.records.values()]
        .filter((r) => r.associations.some((a) => a.getID() === 'hermes-cron-jobs'))
        .map((r) => r.data as StoredJob);
}
function makeDue(id: string): void {
    (jobs().find((j) => j.id === id) as StoredJob).nextAt = Date.now() - 1000;
}
async function sweep(): Promise<void> {
    await rig.server.bridges.scheduler.fireNow('hermes-sweep-run', {});
    await rig.settle();
}

/** A person in cron_user_ids with a job delivering to a fresh private group of theirs; its id. */
async function ownerWithJob(name: string): Promise<{ owner: StoredUser; room: StoredRoom; id: string }> {
    const owner = rig.user(`owner${++n}`);
    const room = rig.room(`trust${n}`, [owner, admin, rig.bot], 'p');
    await rig.setting('cron_user_ids', owner.id);
    await rig.settle();
    expect(await hermesCmd(owner, room, `cron add every 1h Status please --name ${name}`)).toContain('added');
    const id = (jobs().find((j) => j.name === name) as StoredJob).id;
    return { owner, room, id };
}

/** The line of `cron list all` (an admin's view from their own room) for one job. */
async function listed(id: string): Promise<string> {
    const list = await hermesCmd(admin, adminRoom, 'cron list all');
    return list.split('\n').find((l) => l.includes(`(\`${id}\`)`)) ?? list;
}

describe('where a job may deliver', () => {
    it('--to a private group its creator is not in is refused, word for word as a room that does not exist', async () => {
        const mallory = rig.user(`mallory${++n}`);
        const own = rig.room(`mine${n}`, [mallory, rig.bot]);
        rig.room(`secret${n}`, [admin, rig.bot], 'p');
        await rig.setting('cron_user_ids', mallory.id);
        await rig.settle();
        expect(await hermesCmd(mallory, own, `cron add every 1h Leak it --to #secret${n}`)).toBe(
            `Scheduled prompts deliver only to a room or thread that you and the bot are both in and where you may post: #secret${n} is not one. Use \`#room-name\`, a thread link, or \`home\`.`,
        );
        expect(await hermesCmd(mallory, own, `cron add every 1h Leak it --to #nothing${n}`)).toBe(
            `Scheduled prompts deliver only to a room or thread that you and the bot are both in and where you may post: #nothing${n} is not one. Use \`#room-name\`, a thread link, or \`home\`.`,
        );
        expect(jobs().filter((j) => j.ownerId === mallory.id)).toEqual([]);
    });

    it("--to a thread link into another person's DM with the bot is refused", async () => {
        const alice = rig.user(`alice${++n}`);
        const mallory = rig.user(`mallory${n}`);
        const dm = rig.direct([alice, rig.bot]);
        const own = rig.room(`mine${n}`, [mallory, rig.bot]);
        const root = await rig.post(alice, dm, 'my private plans', { silent: true });
        await rig.setting('cron_user_ids', mallory.id);
        await rig.settle();
        const link = `http://127.0.0.1:3000/direct/${dm.id}?msg=${root.id}`;
        expect(await hermesCmd(mallory, own, `cron add every 1h What did alice say? --to ${link}`)).toBe(
            `Scheduled prompts deliver only to a room or thread that you and the bot are both in and where you may post: ${link} is not one. Use \`#room-name\`, a thread link, or \`home\`.`,
        );
        expect(jobs().filter((j) => j.ownerId === mallory.id)).toEqual([]);
    });
});

describe("a job's name", () => {
    it('is plain text in the public header and in cron list: @all notifies nobody', async () => {
        const owner = rig.user(`owner${++n}`);
        const room = rig.room(`named${n}`, [owner, rig.bot]);
        await rig.setting('cron_user_ids', owner.id);
        await rig.settle();
        expect(await hermesCmd(owner, room, 'cron add every 1h Status please --name "@all URGENT"')).toMatch(
            /^Scheduled prompt \*@\u200Ball URGENT\* \(`[0-9a-f]{8}`\) added: every 1h\./,
        );
        const { id } = jobs().find((j) => j.ownerId === owner.id) as StoredJob;
        makeDue(id);
        await sweep();
        await rig.waitForMessage(() => rig.botMessages(room).length >= 1, 15_000, 'the delivery');
        await rig.settle();
        expect(rig.botMessages(room).map((m) => m.text)).toEqual(['**[Cron delivery: @\u200Ball URGENT]**\nreport: Status please']);
        expect(await hermesCmd(owner, room, 'cron list')).toContain(`• **@\u200Ball URGENT** (\`${id}\`) · every 1h · `);
    });
});

describe('every firing asks again', () => {
    it('the owner taken out of allowed_user_ids: the job pauses and cron list says why', async () => {
        const { id } = await ownerWithJob('allowlisted');
        await rig.setting('allowed_user_ids', admin.id);
        await rig.settle();
        makeDue(id);
        await sweep();
        expect(runs()).toHaveLength(0);
        expect(await listed(id)).toMatch(/ · every 1h · paused: its owner may no longer schedule prompts · @owner\d+ · #trust\d+$/);
    });

    it('the bot removed from the room: the job pauses', async () => {
        const { room, id } = await ownerWithJob('botgone');
        rig.server.store.rooms.get(room.id)?.members.delete(rig.bot.id);
        makeDue(id);
        await sweep();
        expect(runs()).toHaveLength(0);
        expect(rig.botMessages(room)).toHaveLength(0);
        expect(await listed(id)).toMatch(/ · paused: the bot is no longer in the room · /);
    });

    it('the room turns read-only for the bot, or mutes it: the job pauses rather than run for nothing (issue 35 §3)', async () => {
        const { room, id } = await ownerWithJob('readonly');
        // The owner created the room: as its owner they still may post; the bot (role `app`) may not.
        room.readOnly = true;
        makeDue(id);
        await sweep();
        expect(runs()).toHaveLength(0);
        expect(await listed(id)).toMatch(/ · paused: the bot may not post in the room · /);
        const muted = await ownerWithJob('muted');
        muted.room.muted = [rig.bot.username];
        makeDue(muted.id);
        await sweep();
        expect(runs()).toHaveLength(0);
        expect(await listed(muted.id)).toMatch(/ · paused: the bot may not post in the room · /);
    });

    it('the owner removed from the room: the job pauses', async () => {
        const { owner, room, id } = await ownerWithJob('ownergone');
        rig.server.store.rooms.get(room.id)?.members.delete(owner.id);
        makeDue(id);
        await sweep();
        expect(runs()).toHaveLength(0);
        expect(await listed(id)).toMatch(/ · paused: its owner is no longer in the room · /);
    });

    it('the room set to off in room_policies: the job pauses', async () => {
        const { room, id } = await ownerWithJob('policyoff');
        await rig.setting('room_policies', `${room.id} off`);
        await rig.settle();
        makeDue(id);
        await sweep();
        expect(runs()).toHaveLength(0);
        expect(await listed(id)).toMatch(/ · paused: room_policies does not let the bot work in the room · /);
    });

    it("the owner's daily budget used up: that run never reaches Hermes, and the job keeps its schedule", async () => {
        const { room, id } = await ownerWithJob('budgeted');
        await rig.setting('budget_user_turns_per_day', 1);
        await rig.settle();
        makeDue(id);
        await sweep();
        await rig.waitForMessage(() => rig.botMessages(room).length >= 1, 15_000, 'the first delivery');
        await rig.settle();
        expect(runs()).toHaveLength(1);
        makeDue(id);
        await sweep();
        expect(runs()).toHaveLength(1);
        expect(rig.botMessages(room)).toHaveLength(1);
        expect(await listed(id)).toMatch(
            /^• \*\*budgeted\*\* \(`[0-9a-f]{8}`\) · every 1h · next [^·]+ · @owner\d+ · #trust\d+ · last time skipped [^·]+ \(a daily budget was used up\)$/,
        );
    });
});
