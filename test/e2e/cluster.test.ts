import { StoredMessage, StoredRoom } from '../../rig';
import { RigCluster } from '../../rig/cluster';
import { turnOfStored } from '../../rig/marks';
import { expectLogged, FakeHermes, useClusterAndHermes } from '../support/e2e';

/**
 * Issue 16 §3: two Rocket.Chat instances on one database, each with its own engine and app
 * process, sharing messages, the app's persistence and the scheduler's jobs. Every accepted
 * turn is answered exactly once, a session's turns stay in order, a stop or an approval
 * clicked on the other instance works, and a killed instance's turns are finished by the other.
 */
const env = useClusterAndHermes({ max_parallel_turns: 20 });
let hermes: FakeHermes;
let cluster: RigCluster;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    cluster = env.cluster();
});

beforeEach(() => {
    hermes.reset();
    hermes.configure({ maxConcurrentRuns: 40 });
});

const [a, b] = [() => cluster.instances[0], () => cluster.instances[1]];
const bot = () => a().bot.username;
const answers = (room: StoredRoom) => a().botMessagesOfKind(room, 'answer');
const runCreates = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');

describe('two instances', () => {
    it('run one app: mentions arriving at either instance are each answered once, and both instances work on turns', async () => {
        const alice = a().user(`alice${++n}`);
        const rooms = Array.from({ length: 12 }, (_, i) => a().room(`both${n}-${i}`, [alice, a().bot]));
        const eventsBefore = [a(), b()].map((x) => x.server.callDurations.length);
        const questions = await Promise.all(rooms.map((room, i) => (i % 2 === 0 ? a() : b()).post(alice, room, `@${bot()} hello ${i}`)));
        await Promise.all(rooms.map((room, i) => a().waitForBotReply(room, { after: questions[i], timeoutMs: 20_000 })));
        await cluster.settle();
        rooms.forEach((room, i) => {
            expect(answers(room)).toHaveLength(1);
            expect(turnOfStored(answers(room)[0])).toBe(questions[i].id);
        });
        expect(runCreates()).toHaveLength(12);
        // Nothing handed over between the instances is left behind.
        const leftovers = [...a().server.bridges.persistence.records.values()].filter((r) =>
            r.associations.some((x) => x.getID().startsWith('hermes-turn-sent:')),
        );
        expect(leftovers).toHaveLength(0);
        // Quick turns are carried in the event of the instance that got the message (tick.ts carryOn): both worked.
        [a(), b()].forEach((instance, i) => {
            const events = instance.server.callDurations.slice(eventsBefore[i]).filter((c) => c.method.startsWith('app:executePostMessageSent'));
            expect(events).toHaveLength(6);
        });
    });

    it('keeps a session’s turns in order when its questions arrive at different instances', async () => {
        const alice = a().user(`alice${++n}`);
        const room = a().room(`order${n}`, [alice, a().bot]);
        hermes.configure({ slowIntervalMs: 30 });
        const first = await a().post(alice, room, `@${bot()} SLOW first`);
        // The second arrives (at the other instance) while the first is at Hermes.
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
        const second = await b().post(alice, room, `@${bot()} second`);
        await a().waitForBotReply(room, { after: second, timeoutMs: 20_000 });
        await cluster.settle();
        const [one, two] = answers(room);
        expect([turnOfStored(one), turnOfStored(two)]).toEqual([first.id, second.id]);
        // The second reached Hermes only after the first was answered.
        const creates = runCreates();
        expect(creates).toHaveLength(2);
        expect(creates[1].at).toBeGreaterThanOrEqual(one.createdAt.getTime());
    });

    it('never has two turns of one session at Hermes at once when they arrive at both instances in the same instant', async () => {
        const alice = a().user(`alice${++n}`);
        const room = a().room(`same${n}`, [alice, a().bot]);
        hermes.configure({ slowIntervalMs: 20 });
        // Each instance stores its turn claimed (turns/freshClaim.ts) and then reads the other's:
        // one goes, the other waits for it, whichever read first.
        const questions = await Promise.all([a().post(alice, room, `@${bot()} SLOW one`), b().post(alice, room, `@${bot()} SLOW two`)]);
        for (const q of questions) {
            await a().waitForBotReply(room, { after: q, timeoutMs: 20_000 });
        }
        await cluster.settle();
        const replies = answers(room);
        expect(replies.map((m) => turnOfStored(m)).sort()).toEqual(questions.map((q) => q.id).sort());
        const creates = runCreates();
        expect(creates).toHaveLength(2);
        expect(creates[1].at).toBeGreaterThanOrEqual(Math.min(...replies.map((m) => m.createdAt.getTime())));
    });

    it('stops a turn from the other instance', async () => {
        const alice = a().user(`alice${++n}`);
        const room = a().room(`stop${n}`, [alice, a().bot]);
        hermes.configure({ slowIntervalMs: 200 });
        hermes.setReply(null);
        const question = await a().post(alice, room, `@${bot()} SLOW please`);
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
        await b().command(alice, room, '/hermes stop');
        const reply = await a().waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        await cluster.settle();
        expect(reply.text).toContain('Stopped by');
        expect(hermes.requests.filter((r) => r.path.endsWith('/stop'))).toHaveLength(1);
    });

    it('takes an approval clicked on the other instance', async () => {
        const alice = a().user(`alice${++n}`);
        const room = a().room(`approve${n}`, [alice, a().bot]);
        const question = await a().post(alice, room, `@${bot()} DANGER tidy the scratch dir`);
        const approval = await a().waitForMessage((m) => m.rid === room.id && m.text.includes('rm -rf'), 10_000, 'the approval message');
        await b().clickButton(alice, approval, 'hermes-approval', `${question.id}|once`);
        const reply = await a().waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        await cluster.settle();
        expect(reply.text).toContain('approved by the user');
        expect(hermes.requests.filter((r) => r.path.endsWith('/approval')).map((r) => (r.json as { choice: string }).choice)).toEqual(['once']);
    });

    it('a setting the app writes on one instance reaches the other: /hermes automation on, then a mention there via the other (issue 35 §6)', async () => {
        const admin = a().user(`setadmin${++n}`);
        const alice = a().user(`setalice${n}`);
        const room = a().room(`auto${n}`, [admin, alice, a().bot]);
        await cluster.setting('admin_user_ids', admin.id);
        await cluster.settle();
        expect(await a().commandAnswer(admin, room, '/hermes automation on')).toContain('automation');
        await cluster.settle();
        await b().post(alice, room, `@${bot()} are you there?`);
        await cluster.settle();
        expect(runCreates()).toHaveLength(0);
        expect(b().ephemerals(alice, room)).toEqual([expect.stringContaining('only receives scheduled deliveries')]);
        expect(await a().commandAnswer(admin, room, '/hermes automation off')).toContain('automation');
        await cluster.settle();
        await cluster.setting('admin_user_ids', '');
    });

    it('finishes the turns of an instance killed in the middle of them, each answered once', async () => {
        const alice = a().user(`alice${++n}`);
        const rooms = Array.from({ length: 6 }, (_, i) => a().room(`kill${n}-${i}`, [alice, a().bot]));
        hermes.configure({ slowIntervalMs: 100 });
        const questions: StoredMessage[] = [];
        for (const room of rooms) {
            questions.push(await b().post(alice, room, `@${bot()} SLOW please`));
        }
        await hermes.waitForRequest(() => runCreates().length === rooms.length, 10_000);
        cluster.kill(1);
        await Promise.all(rooms.map((room, i) => a().waitForBotReply(room, { after: questions[i], timeoutMs: 45_000 })));
        await cluster.settle();
        rooms.forEach((room) => expect(answers(room)).toHaveLength(1));
        // A run whose id died with the instance before it was recorded is sent again once its
        // sender's claim lapses (v0.18.2 cannot be asked which runs exist): at most two per turn.
        const perTurn = new Map<string, number>();
        for (const r of runCreates()) {
            const key = String((r.json as { session_id: string }).session_id);
            perTurn.set(key, (perTurn.get(key) ?? 0) + 1);
        }
        expect(perTurn.size).toBe(rooms.length);
        expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(2);
        // The last turn at least was killed before its record was written again (0.5 s after its
        // run started): its text was only in the dead process, and the instance that carried it on
        // built it again (turns/rebuildText.ts) and sent the same question.
        const resent = runCreates().filter((r) => perTurn.get(String((r.json as { session_id: string }).session_id)) === 2);
        expect(resent.length).toBeGreaterThan(0);
        expectLogged(a().logText()).toContain('its text was built again');
        for (const r of resent) {
            expect(String((r.json as { input: string }).input)).toContain('SLOW please');
        }
    }, 60_000);
});
