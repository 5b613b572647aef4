import { PostingRefusal } from '../../../src/admission/botPosting';
import { cronCommand } from '../../../src/commands/cronCommands';
import { CronCommandPorts, Place } from '../../../src/commands/cronCommandPorts';
import { fireDue, FirePorts } from '../../../src/cron/fire';
import { CronJob, CronStore } from '../../../src/cron/job';
import { deliveryHeader, plainName } from '../../../src/delivery/cronDelivery';
import { AccessRefusal } from '../../../src/admission/access';
import { HermesConfig } from '../../../src/settings/config';
import { Totals, UsagePort } from '../../../src/usage/usage';
import { MemoryTurnStore, TEST_CONFIG } from '../../support/turnPorts';

/** Issue 31 (5, 6, 7): a job runs with its owner's rights, asked again at every firing; its name is shown as plain text. */
class MemoryCron implements CronStore {
    public readonly jobs = new Map<string, CronJob>();
    public async all() {
        return [...this.jobs.values()].map((j) => ({ ...j }));
    }
    public async get(id: string) {
        const j = this.jobs.get(id);
        return j && { ...j };
    }
    public async save(job: CronJob) {
        this.jobs.set(job.id, { ...job });
    }
    public async remove(id: string) {
        this.jobs.delete(id);
    }
}

const T = Date.parse('2026-12-01T09:00:00Z');
const HOUR = 3600_000;

function setup(over: Partial<HermesConfig> = {}, today: { user?: Totals; room?: Totals } = {}) {
    const store = new MemoryCron();
    const turns = new MemoryTurnStore();
    const scheduled: string[] = [];
    const logs: string[] = [];
    const standing: { refusal?: AccessRefusal } = {};
    const usage: UsagePort = { record: async () => undefined, today: async () => today, over: async () => ({ turns: 0, in: 0, out: 0 }) };
    const config: HermesConfig = { ...TEST_CONFIG, timezone: 'UTC', cronUserIds: ['U1'], ...over };
    const ports: FirePorts = {
        store,
        turns,
        claimedAt: async () => undefined,
        claim: async () => true,
        schedule: async (job) => scheduled.push(job.turnId),
        config,
        standing: async () => standing.refusal,
        usage,
        log: { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m), error: (m: string) => logs.push(m), debug: () => undefined } as never,
        now: () => T,
    };
    const job: CronJob = {
        id: 'j1',
        name: '@all URGENT',
        ownerId: 'U1',
        ownerUsername: 'alice',
        roomId: 'R1',
        roomType: 'p',
        kind: 'room',
        schedule: { kind: 'every', everyMs: HOUR },
        prompt: 'check',
        createdAt: T - HOUR,
        nextAt: T,
    };
    return { store, turns, scheduled, logs, standing, ports, job, config };
}

describe('every firing asks again whether the owner may still deliver there', () => {
    const revoked: Array<[string, Partial<HermesConfig>, AccessRefusal | undefined, string]> = [
        ['the owner left allowed_user_ids', { allowedUserIds: ['U9'] }, undefined, 'owner-not-allowed'],
        ['the owner left cron_user_ids', { cronUserIds: [] }, undefined, 'owner-not-allowed'],
        ['cron left command_allowlist', { commandAllowlist: ['new', 'status'] }, undefined, 'owner-not-allowed'],
        ['the owner is now an ignored sender', { ignoreSenders: ['alice'] }, undefined, 'owner-not-allowed'],
        ['the room is off in room_policies', { roomPolicies: 'R1 off' }, undefined, 'room-policy'],
        ["the room's entry in room_policies is unreadable", { roomPolicies: 'R1 mode=loud' }, undefined, 'room-policy'],
        ['the owner left the room', {}, 'caller-not-member', 'owner-not-member'],
        ['the room became read-only for the owner', {}, 'may-not-post', 'owner-cannot-post'],
        ['the bot was removed from the room', {}, 'bot-not-member', 'bot-not-member'],
        ['the room is gone', {}, 'no-room', 'bot-not-member'],
        ["the owner's account is gone or deactivated", {}, 'not-allowed', 'owner-not-allowed'],
    ];

    it.each(revoked)('%s: the job pauses with that reason, nothing reaches Hermes, the log names ids only', async (_what, over, refusal, reason) => {
        const env = setup(over);
        env.standing.refusal = refusal;
        await env.store.save(env.job);
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([]);
        expect(await env.turns.get(`cron.j1.${T}`)).toBeUndefined();
        expect(await env.store.get('j1')).toMatchObject({ paused: true, pausedWhy: reason, nextAt: T });
        expect(env.logs).toEqual([`Scheduled prompt j1 of U1 in room R1 paused: ${reason}.`]);
        // Paused: the next sweep does not ask again.
        await fireDue(env.ports);
        expect(env.logs).toHaveLength(1);
    });

    it('a used-up daily budget skips that time only (not paused, nothing sent), with a logged reason; admins are exempt (and need no cron_user_ids)', async () => {
        const env = setup({ budgetUserTurns: 3 }, { user: { turns: 3, in: 0, out: 0 } });
        await env.store.save(env.job);
        await fireDue(env.ports);
        expect(env.scheduled).toEqual([]);
        expect(await env.store.get('j1')).toMatchObject({ nextAt: T + HOUR, last: { at: T, status: 'skipped', why: 'budget' } });
        expect((await env.store.get('j1'))?.paused).toBeUndefined();
        expect(env.logs).toEqual(['Scheduled prompt j1 of U1 skipped a run in room R1: daily budget user_turns (3) reached.']);

        const room = setup({ budgetRoomTokens: 100 }, { room: { turns: 1, in: 60, out: 40 } });
        await room.store.save(room.job);
        await fireDue(room.ports);
        expect(room.scheduled).toEqual([]);

        const admin = setup({ budgetUserTurns: 3, adminUserIds: ['U1'], cronUserIds: [] }, { user: { turns: 3, in: 0, out: 0 } });
        await admin.store.save(admin.job);
        await fireDue(admin.ports);
        expect(admin.scheduled).toEqual([`cron.j1.${T}`]);
    });

    it("the run follows the room's policy as a mention does: its profile and model, its instruction, its profile's session", async () => {
        const env = setup({ roomPolicies: 'R1 profile=ops model=fast prompt="Answer in French."' });
        await env.store.save(env.job);
        await fireDue(env.ports);
        const rec = await env.turns.get(`cron.j1.${T}`);
        expect(rec?.route).toEqual({ profile: 'ops', model: 'fast' });
        expect(rec?.sessionKey).toBe('agent:ops:rocketchat:cron:j1');
        expect(rec?.system.split('\n').pop()).toBe('The workspace admins set this instruction for this room: Answer in French.');
    });
});

describe("a job's name is plain text wherever it is shown", () => {
    it('mentions get a zero-width space, Markdown markup is dropped, underscores become hyphens, brackets and breaks go', () => {
        expect(deliveryHeader('@all URGENT')).toBe('[Cron delivery: @\u200Ball URGENT]');
        expect(plainName('@here #general')).toBe('@\u200Bhere #\u200Bgeneral');
        expect(plainName('*bold* ~strike~ `code` ||spoiler||')).toBe('bold strike code spoiler');
        expect(plainName('[click](https://evil.example)')).toBe('click(https://evil.example)');
        expect(plainName('<https://evil.example|x> $x$ a\\b')).toBe('https://evil.examplex x ab');
        expect(plainName('_italic_ daily_report')).toBe('-italic- daily-report');
        expect(plainName('two\nlines')).toBe('two lines');
        expect(plainName('***')).toBe('job');
        expect(plainName('incidents')).toBe('incidents');
        // Shown twice (a header built from a shown name), it stays the same.
        expect(plainName(plainName('@all *x*'))).toBe('@\u200Ball x');
    });
});

describe('/hermes cron, as its owner sees it', () => {
    const here: Place = { roomId: 'R1', roomType: 'p', kind: 'room' };
    function commandPorts(
        env: ReturnType<typeof setup>,
        resolved?: Place,
        refusal?: PostingRefusal,
    ): CronCommandPorts & { asked: Array<[string, string]>; checked: Place[] } {
        const asked: Array<[string, string]> = [];
        const checked: Place[] = [];
        return {
            asked,
            checked,
            config: env.config,
            store: env.store,
            fire: env.ports,
            resolveTo: async (spec, userId) => (asked.push([spec, userId]), resolved),
            botCannotPost: async (place) => (checked.push(place), refusal),
            now: () => T,
        };
    }

    it('a room the bot cannot post in takes no job, here or --to, and the creator is told why', async () => {
        const env = setup();
        const there: Place = { roomId: 'R2', roomType: 'c', roomName: 'news', kind: 'room' };
        const readOnly = commandPorts(env, there, 'read-only');
        expect(await cronCommand('add every 1h hi --to #news', { id: 'U1', username: 'alice' }, here, readOnly)).toBe(
            'The bot may not post in that room (it is read-only), so a scheduled prompt there could never deliver. Choose another room with `--to`, or ask a moderator to let the bot post.',
        );
        expect(readOnly.checked).toEqual([there]);
        const muted = commandPorts(env, undefined, 'muted');
        expect(await cronCommand('add every 1h hi', { id: 'U1', username: 'alice' }, here, muted)).toBe(
            'The bot is muted in that room, so a scheduled prompt there could never deliver. Choose another room with `--to`, or ask a moderator to unmute it.',
        );
        expect(muted.checked).toEqual([here]);
        expect(await cronCommand('add every 1h hi', { id: 'U1', username: 'alice' }, here, commandPorts(env, undefined, 'encrypted'))).toBe(
            'The bot does not post in end-to-end encrypted rooms, so a scheduled prompt there could never deliver. Choose another room with `--to`.',
        );
        expect(env.store.jobs.size).toBe(0);
        // Where it may post, the same line is added.
        expect(await cronCommand('add every 1h hi', { id: 'U1', username: 'alice' }, here, commandPorts(env))).toMatch(/^Scheduled prompt \*hi\* \(`/);
        expect(env.store.jobs.size).toBe(1);
    });

    it('--to is resolved for the creator, and every refusal reads the same', async () => {
        const env = setup();
        const ports = commandPorts(env);
        expect(await cronCommand('add every 1h hi --to #secret', { id: 'U1', username: 'alice' }, here, ports)).toBe(
            'Scheduled prompts deliver only to a room or thread that you and the bot are both in and where you may post: #secret is not one. Use `#room-name`, a thread link, or `home`.',
        );
        expect(ports.asked).toEqual([['#secret', 'U1']]);
        expect(env.store.jobs.size).toBe(0);
    });

    it('list shows the name as plain text and why the app paused a job; added and run replies too', async () => {
        const env = setup();
        const ports = commandPorts(env);
        const added = await cronCommand('add every 1h hi --name "@all *now*"', { id: 'U1', username: 'alice' }, here, ports);
        expect(added.startsWith('Scheduled prompt *@\u200Ball now* (`')).toBe(true);
        const [job] = env.store.jobs.values();
        env.standing.refusal = 'caller-not-member';
        expect(await cronCommand(`run ${job.id}`, { id: 'U1', username: 'alice' }, here, ports)).toBe(
            '*@\u200Ball now* did not run and is paused: its owner is no longer in the room. `/hermes cron resume` starts it again once that is fixed.',
        );
        expect(env.scheduled).toEqual([]);
        const list = await cronCommand('list', { id: 'U1', username: 'alice' }, here, ports);
        expect(list).toBe(
            `*Scheduled prompts of this room* (1):\n• **@\u200Ball now** (\`${job.id}\`) · every 1h · paused: its owner is no longer in the room · @alice`,
        );
        // Resumed, the reason goes; the next firing asks again.
        await cronCommand('resume @all *now*', { id: 'U1', username: 'alice' }, here, ports);
        expect(env.store.jobs.get(job.id)?.pausedWhy).toBeUndefined();
    });
});
