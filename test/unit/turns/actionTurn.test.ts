/**
 * Issue 31 items 7 and 8: a message action's turn follows the rules a mention's does (the room's
 * `off`, its profile and instruction, the daily budgets), and a private answer never makes the
 * bot follow the thread it was asked about.
 */
import { ActionPorts, ActionTurn, startActionTurn } from '../../../src/actions/actionTurn';
import { renderFor, PersonalText } from '../../../src/i18n/messages';
import { finish } from '../../../src/turns/finish';
import { tick } from '../../../src/turns/tick';
import { TickJob } from '../../../src/turns/tickPorts';
import { UsagePort } from '../../../src/usage/usage';
import { memoryTickPorts, queuedTurn, ScriptedRuns, TEST_CONFIG, VirtualScheduler } from '../../support/turnPorts';

const ROOM = 'Hx7Yq2LmN4pR8sT0v';

const catchUp = (over: Partial<ActionTurn> = {}): ActionTurn => ({
    id: `catchup.${Math.random().toString(36).slice(2)}`,
    kind: 'catchup',
    asker: { id: 'U1', username: 'alice', language: 'de' },
    room: { id: ROOM, type: 'c', name: 'ops' },
    private: true,
    user: 'Catch me up: …',
    ...over,
});

/** Action ports over the memory fakes; `usedToday` turns already used by the asker and the room. */
function setup(config: Partial<typeof TEST_CONFIG>, usedToday = 0) {
    const sched = new VirtualScheduler();
    const transport = new ScriptedRuns();
    const env = memoryTickPorts({ sched, transport, config: { ...TEST_CONFIG, ...config } });
    const notices: PersonalText[] = [];
    const claims: string[] = [];
    const jobs: TickJob[] = [];
    const usage: UsagePort = {
        today: async () => ({ user: { turns: usedToday, in: 0, out: 0 }, room: { turns: usedToday, in: 0, out: 0 } }),
        record: async () => undefined,
        over: async () => ({ turns: 0, in: 0, out: 0 }),
    };
    const ports: ActionPorts = {
        turns: env.store,
        claim: async (id) => (claims.push(id), true),
        schedule: async (job) => (jobs.push(job), sched.schedule(job, 0)),
        now: () => sched.time,
        config: env.ports.config,
        usage,
        notify: async (text) => void notices.push(text),
        log: env.ports.log,
    };
    /** Runs the scheduled ticks: what reaches Hermes. */
    const run = () => sched.runUntil(sched.time + 5_000, (job) => tick(job, env.ports));
    return { ...env, transport, sched, ports, notices, claims, jobs, run };
}

describe('a message action is admitted like a mention', () => {
    it('in a room set to off: refused with one private notice in the asker’s language; nothing claimed, stored or sent', async () => {
        const env = setup({ roomPolicies: `${ROOM} off` });
        expect(await startActionTurn(catchUp(), env.ports)).toBe(false);
        expect(env.notices.map((n) => renderFor(n, 'de'))).toEqual(['Hermes ist in diesem Raum durch seine Raumrichtlinie ausgeschaltet.']);
        expect(env.claims).toEqual([]);
        expect(env.store.records.size).toBe(0);
        await env.run();
        expect(env.transport.requests).toEqual([]);
    });

    it('in a room with a profile and an instruction: the turn carries them and goes to the profile, in a one-off session of that profile', async () => {
        const env = setup({ roomPolicies: `${ROOM} profile=research model=fast prompt="Answer in French."` });
        const a = catchUp();
        expect(await startActionTurn(a, env.ports)).toBe(true);
        const rec = env.store.records.get(a.id);
        expect(rec?.route).toEqual({ profile: 'research', model: 'fast' });
        expect(rec?.system).toContain('The workspace admins set this instruction for this room: Answer in French.');
        expect(rec?.sessionKey).toBe(`agent:research:rocketchat:oneoff:${a.id}`);
        await env.run();
        const run = env.transport.requests.find((r) => r.method === 'POST' && new URL(r.url).pathname.endsWith('/v1/runs'));
        expect(new URL(run?.url ?? 'http://x/').pathname).toBe('/p/research/v1/runs');
        expect(JSON.parse(String(run?.body))).toMatchObject({ model: 'fast' });
        expect(env.notices).toEqual([]);
        // A room without an entry: the default profile, no instruction.
        const plain = setup({});
        const b = catchUp();
        await startActionTurn(b, plain.ports);
        expect(plain.store.records.get(b.id)?.route).toBeUndefined();
        expect(plain.store.records.get(b.id)?.system).not.toContain('instruction for this room');
        expect(plain.store.records.get(b.id)?.sessionKey).toBe(`agent:main:rocketchat:oneoff:${b.id}`);
    });

    it('over the daily budget: refused with the budget’s notice in the asker’s language; no Hermes request', async () => {
        const env = setup({ budgetUserTurns: 3 }, 3);
        expect(await startActionTurn(catchUp(), env.ports)).toBe(false);
        expect(env.notices.map((n) => renderFor(n, 'de'))).toEqual([
            'Du hast deine 3 Anfragen für heute aufgebraucht. Das Budget wird um Mitternacht (UTC) zurückgesetzt.',
        ]);
        expect(env.store.records.size).toBe(0);
        expect(env.jobs).toEqual([]);
        await env.run();
        expect(env.transport.requests).toEqual([]);
        // Under the budget, the same click starts.
        const under = setup({ budgetUserTurns: 3 }, 2);
        expect(await startActionTurn(catchUp(), under.ports)).toBe(true);
    });
});

describe('a private answer never makes the bot follow the thread (item 8)', () => {
    async function answered(privateTo: string | undefined) {
        const sched = new VirtualScheduler();
        const follows: string[] = [];
        const env = memoryTickPorts({ sched, follow: async (threadId, askerId) => void follows.push(`${threadId}:${askerId}`) });
        const rec = queuedTurn(`P${Math.random().toString(36).slice(2)}`, {
            phase: 'running',
            threadId: 'TH',
            privateTo,
            startedAt: sched.time,
            transport: 'runs',
            runId: 'run_1',
        });
        await env.store.save(rec);
        await finish(rec, { kind: 'answer', text: 'the summary' }, env.ports);
        return follows;
    }

    it('a private summary of a thread: not followed; the same answer posted in the thread: followed', async () => {
        expect(await answered('U1')).toEqual([]);
        expect(await answered(undefined)).toEqual(['TH:U1']);
    });
});

describe('a background task is placed once admitted and claimed (`place`)', () => {
    const task = (place: ActionTurn['place']): ActionTurn =>
        catchUp({ id: 'bg.0badc0de', kind: 'background', private: false, user: 'write the report', place });

    it('refused or a second submit: never placed (no "started" message for a task that does not run)', async () => {
        let placed = 0;
        const place = async () => (placed++, { threadId: 'STARTED', question: 'STARTED' });
        const refused = setup({ roomPolicies: `${ROOM} off` });
        expect(await startActionTurn(task(place), refused.ports)).toBe(false);
        const doubled = setup({});
        doubled.ports.claim = async () => false;
        expect(await startActionTurn(task(place), doubled.ports)).toBe(false);
        expect(placed).toBe(0);
    });

    it('admitted: the record is where `place` put it, a background turn quoting that message', async () => {
        const env = setup({});
        expect(
            await startActionTurn(
                task(async () => ({ threadId: 'STARTED', question: 'STARTED' })),
                env.ports,
            ),
        ).toBe(true);
        const rec = env.store.records.get('bg.0badc0de');
        expect(rec).toMatchObject({ threadId: 'STARTED', question: 'STARTED', background: true, sessionKey: 'agent:main:rocketchat:oneoff:bg.0badc0de' });
        expect(rec?.system).toContain('thread id STARTED');
        // Any other action keeps its own thread and is no background turn.
        const other = setup({});
        const a = catchUp({ threadId: 'TH' });
        await startActionTurn(a, other.ports);
        expect(other.store.records.get(a.id)?.threadId).toBe('TH');
        expect(other.store.records.get(a.id)?.background).toBeUndefined();
    });
});

describe('the record an action starts', () => {
    it('offers "Post to thread" only for a private summary of a thread; starts with no progress; a refusal is logged with ids', async () => {
        const env = setup({});
        const summary = catchUp({ id: 'summary.1', kind: 'summary', threadId: 'TH' });
        await startActionTurn(summary, env.ports);
        expect(env.store.records.get('summary.1')).toMatchObject({ offerPost: true, progress: [] });
        await startActionTurn(catchUp({ id: 'summary.2', kind: 'summary' }), env.ports);
        expect(env.store.records.get('summary.2')?.offerPost).toBeUndefined();
        await startActionTurn(catchUp({ id: 'catchup.3', threadId: 'TH' }), env.ports);
        expect(env.store.records.get('catchup.3')?.offerPost).toBeUndefined();

        const logs: string[] = [];
        const off = setup({ roomPolicies: `${ROOM} off` });
        off.ports.log = { ...off.ports.log, info: (m: string) => void logs.push(m) };
        await startActionTurn(catchUp({ id: 'catchup.4' }), off.ports);
        expect(logs).toEqual([expect.stringMatching(new RegExp(`^Message action catchup by U1 in room ${ROOM} refused: .+\\.$`))]);
    });
});
