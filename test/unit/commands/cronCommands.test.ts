import { options } from '../../../src/commands/cronAdd';
import { cronCommand } from '../../../src/commands/cronCommands';
import { CronCommandPorts, Place } from '../../../src/commands/cronCommandPorts';
import { CronJob } from '../../../src/cron/job';
import { TEST_CONFIG } from '../../support/turnPorts';

/**
 * `/hermes cron …` on memory ports (the e2e files scheduled.test.ts and cronTrust.test.ts run it
 * in the engine): add's checks in their order, list, and who may change which job. Expected texts
 * are written out, never built with the app's own functions.
 */
const NOW = Date.UTC(2026, 11, 7, 8, 0); // Monday 08:00 UTC
const HERE: Place = { roomId: 'ENG', roomType: 'c', roomName: 'eng', kind: 'room' };
const ALICE = { id: 'ALICE', username: 'alice' };
const BOB = { id: 'BOB', username: 'bob' };

function ports(over: Partial<CronCommandPorts> = {}, jobs: CronJob[] = []) {
    const saved = new Map(jobs.map((j) => [j.id, j]));
    const logs: string[] = [];
    const p: CronCommandPorts = {
        config: { ...TEST_CONFIG, cronUserIds: ['ALICE', 'BOB'], adminUserIds: ['ADMIN'], cronMaxJobsPerRoom: 2, cronMaxJobsPerUser: 2, timezone: 'UTC' },
        store: {
            all: async () => [...saved.values()],
            get: async (id) => saved.get(id),
            save: async (j) => void saved.set(j.id, j),
            remove: async (id) => void saved.delete(id),
        },
        fire: {
            log: { info: (m: string) => logs.push(m), warn: () => undefined, debug: () => undefined, error: () => undefined },
            turns: { get: async () => ({ id: 'T' }) },
        } as never,
        resolveTo: async (spec) => (spec === '#ops' ? { roomId: 'OPS', roomType: 'c', roomName: 'ops', kind: 'room' } : undefined),
        botCannotPost: async () => undefined,
        now: () => NOW,
        language: 'en',
        ...over,
    };
    return { p, saved, logs };
}

function job(over: Partial<CronJob>): CronJob {
    return {
        id: 'j1',
        name: 'daily-notes',
        ownerId: 'ALICE',
        ownerUsername: 'alice',
        ...HERE,
        schedule: { kind: 'daily', hour: 9, minute: 0 },
        prompt: 'notes',
        createdAt: NOW - 1000,
        nextAt: Date.UTC(2026, 11, 7, 9, 0),
        ...over,
    };
}

describe('cron add', () => {
    it('adds a job here, owned by its creator, named from its prompt, and says when it runs', async () => {
        const { p, saved, logs } = ports();
        const answer = await cronCommand('add every day 09:00 Summarise the open incidents', ALICE, HERE, p);
        const [added] = [...saved.values()];
        expect(added).toMatchObject({
            name: 'summarise-the-open-incidents',
            ownerId: 'ALICE',
            ownerUsername: 'alice',
            roomId: 'ENG',
            roomName: 'eng',
            kind: 'room',
            prompt: 'Summarise the open incidents',
            schedule: { kind: 'daily', hour: 9, minute: 0 },
            createdAt: NOW,
            nextAt: Date.UTC(2026, 11, 7, 9, 0),
        });
        expect(added.id).toMatch(/^[0-9a-f]{8}$/);
        expect(answer).toBe(`Scheduled prompt *summarise-the-open-incidents* (\`${added.id}\`) added: every day 09:00. Next run: 2026-12-07 09:00 +00:00.`);
        expect(logs).toEqual([`Scheduled prompt ${added.id} (summarise-the-open-incidents) added by ALICE for room ENG.`]);
    });

    it('takes --name and --to, in any place of the line', async () => {
        const { p, saved } = ports();
        await cronCommand('add --name "Daily standup" every day 09:00 standup --to #ops', ALICE, HERE, p);
        expect([...saved.values()][0]).toMatchObject({ name: 'Daily standup', roomId: 'OPS', prompt: 'standup' });
    });

    it('refuses, in this order: not listed, a bad schedule, a bad target, a bot that cannot post, a full room, a full person', async () => {
        const carol = { id: 'CAROL', username: 'carol' };
        expect(await cronCommand('add every day 09:00 x', carol, HERE, ports().p)).toBe(
            'Only admins and the people an admin listed may create scheduled prompts.',
        );
        expect(await cronCommand('add whenever x', ALICE, HERE, ports().p)).toMatch(/^That schedule cannot be used: /);
        expect(await cronCommand('add every day 09:00 x --to #nowhere', ALICE, HERE, ports().p)).toBe(
            'Scheduled prompts deliver only to a room or thread that you and the bot are both in and where you may post: #nowhere is not one. Use `#room-name`, a thread link, or `home`.',
        );
        expect(await cronCommand('add every day 09:00 x', ALICE, HERE, ports({ botCannotPost: async () => 'muted' }).p)).toBe(
            'The bot is muted in that room, so a scheduled prompt there could never deliver. Choose another room with `--to`, or ask a moderator to unmute it.',
        );
        const roomFull = [job({ id: 'a', ownerId: 'BOB' }), job({ id: 'b', ownerId: 'BOB' })];
        expect(await cronCommand('add every day 09:00 x', ALICE, HERE, ports({}, roomFull).p)).toBe(
            'This room already has 2 scheduled prompts, the most allowed.',
        );
        const mineElsewhere = [job({ id: 'a', roomId: 'OPS' }), job({ id: 'b', roomId: 'OPS' })];
        expect(await cronCommand('add every day 09:00 x', ALICE, HERE, ports({}, mineElsewhere).p)).toBe(
            'You already have 2 scheduled prompts, the most allowed.',
        );
        // Another person's jobs elsewhere count for neither.
        const others = [job({ id: 'a', roomId: 'OPS', ownerId: 'BOB' }), job({ id: 'b', roomId: 'OPS', ownerId: 'BOB' })];
        expect(await cronCommand('add every day 09:00 x', ALICE, HERE, ports({}, others).p)).toMatch(/^Scheduled prompt /);
        // An admin is not limited, and need not be listed.
        const admin = { id: 'ADMIN', username: 'root' };
        expect(
            await cronCommand(
                'add every day 09:00 x',
                admin,
                HERE,
                ports({}, [...roomFull, job({ id: 'c', ownerId: 'ADMIN' }), job({ id: 'd', ownerId: 'ADMIN' })]).p,
            ),
        ).toMatch(/^Scheduled prompt /);
        expect(await cronCommand('add at 2020-01-01 09:00 x', ALICE, HERE, ports().p)).toMatch(/^That schedule cannot be used: /);
    });
});

describe('cron list', () => {
    it('lists this room’s jobs, oldest first, with their state; `all` only for an admin', async () => {
        const jobs = [
            job({ id: 'j2', name: 'second', createdAt: NOW - 10, paused: true }),
            job({ id: 'j1', name: 'first', createdAt: NOW - 20, running: 'T1' }),
            job({ id: 'j3', name: 'elsewhere', roomId: 'OPS', roomName: 'ops' }),
            job({ id: 'j4', name: 'failed', createdAt: NOW - 5, last: { at: NOW - 60_000, status: 'failed', error: 'boom' } }),
        ];
        const { p } = ports({}, jobs);
        expect(await cronCommand('list', ALICE, HERE, p)).toBe(
            [
                '*Scheduled prompts of this room* (3):',
                '• **first** (`j1`) · every day 09:00 · next 2026-12-07 09:00 +00:00 · @alice · running now',
                '• **second** (`j2`) · every day 09:00 · paused · @alice',
                '• **failed** (`j4`) · every day 09:00 · next 2026-12-07 09:00 +00:00 · @alice · **last run failed** 2026-12-07 07:59 +00:00 (boom)',
            ].join('\n'),
        );
        expect(await cronCommand('list all', ALICE, HERE, p)).toBe(await cronCommand('list', ALICE, HERE, p));
        const all = await cronCommand('list all', { id: 'ADMIN', username: 'root' }, HERE, p);
        expect(all.split('\n')[0]).toBe('*All scheduled prompts* (4):');
        expect(all).toContain('• **elsewhere** (`j3`) · every day 09:00 · next 2026-12-07 09:00 +00:00 · @alice · #ops');
        expect(await cronCommand('LIST', ALICE, { ...HERE, roomId: 'EMPTY' }, p)).toBe('No scheduled prompts deliver to this room.');
        // `/hermes cron` alone: the usage.
        expect(await cronCommand('', ALICE, HERE, p)).toMatch(/^Usage: `\/hermes cron add/);
        expect(await cronCommand('list all', { id: 'ADMIN', username: 'root' }, HERE, ports().p)).toBe('There are no scheduled prompts.');
    });
});

describe('cron pause, resume, remove, run', () => {
    it('finds a job by id, or by its name in this room (quoted when it has spaces); only its owner or an admin changes it', async () => {
        const jobs = [
            job({ id: 'j1', name: 'Daily standup' }),
            job({ id: 'j2', name: 'twin' }),
            job({ id: 'j3', name: 'twin' }),
            job({ id: 'j4', name: 'away', roomId: 'OPS' }),
        ];
        const { p, saved } = ports({}, jobs);
        expect(await cronCommand('pause "daily standup"', ALICE, HERE, p)).toBe('*Daily standup* is paused.');
        expect(saved.get('j1')?.paused).toBe(true);
        expect(await cronCommand('resume j1', ALICE, HERE, p)).toBe('*Daily standup* runs again. Next run: 2026-12-07 09:00 +00:00.');
        expect(saved.get('j1')).toMatchObject({ paused: false, nextAt: Date.UTC(2026, 11, 7, 9, 0) });
        expect(await cronCommand('pause twin', ALICE, HERE, p)).toBe('More than one scheduled prompt is called “twin”: `j2`, `j3`. Use the id.');
        expect(await cronCommand('pause away', ALICE, HERE, p)).toBe('No scheduled prompt named “away” here. `/hermes cron list` shows them.');
        expect(await cronCommand('pause', ALICE, HERE, p)).toBe('No scheduled prompt named “” here. `/hermes cron list` shows them.');
        expect(await cronCommand('pause j4', ALICE, HERE, p)).toBe('*away* is paused.');
        expect(await cronCommand('remove j1', BOB, HERE, p)).toBe('Only its owner or an admin can change *Daily standup*.');
        expect(saved.has('j1')).toBe(true);
        expect(await cronCommand('remove j1', { id: 'ADMIN', username: 'root' }, HERE, p)).toBe('*Daily standup* is removed.');
        expect(saved.has('j1')).toBe(false);
        expect(await cronCommand('run j2', ALICE, HERE, ports({}, [job({ id: 'j2', name: 'twin', running: 'T9' })]).p)).toBe(
            '*twin* is running right now; try again when it has delivered.',
        );
        expect(await cronCommand('frobnicate', ALICE, HERE, p)).toMatch(/\/hermes cron add/);
    });
});

describe('cron add options and names', () => {
    it('reads --name (quoted or bare) and --to wherever they stand, and leaves the rest for the schedule', () => {
        expect(options('every day 09:00 standup --name "Daily standup" --to #ops')).toEqual({
            name: 'Daily standup',
            to: '#ops',
            rest: 'every day 09:00 standup',
        });
        expect(options('--name daily every 30m ping')).toEqual({ name: 'daily', to: undefined, rest: 'every 30m ping' });
        expect(options('every 30m ping')).toEqual({ name: undefined, to: undefined, rest: 'every 30m ping' });
        // Only whole options: a word that merely ends in --to is prompt text.
        expect(options('every 30m compare a--to b')).toEqual({ name: undefined, to: undefined, rest: 'every 30m compare a--to b' });
        expect(options('every 30m x --to  home')).toEqual({ name: undefined, to: 'home', rest: 'every 30m x' });
        expect(options(`every 30m x --name ${'n'.repeat(60)}`).name).toBe('n'.repeat(40));
        expect(options('every 30m x --name ""').name).toBeUndefined();
    });

    it('names a job from its prompt’s first words, letters and digits only', async () => {
        const named = async (prompt: string) => {
            const { p, saved } = ports();
            await cronCommand(`add every 30m ${prompt}`, ALICE, HERE, p);
            return [...saved.values()][0].name;
        };
        expect(await named('Check the build: status & logs now please')).toBe('check-the-build-status');
        expect(await named('Grüße an das Team')).toBe('grüße-an-das-team');
        expect(await named('!!! ???')).toBe('job');
    });
});
