import { Rig, StoredMessage } from '../../rig';
import { kindOfStored, turnOfStored } from '../../rig/marks';
import { expectLogged, FakeHermes, pollUntil, storedTurnHead, useRigAndHermes } from '../support/e2e';

/**
 * When a turn's answer and status come. An app process killed at the moments a turn is most often in — its first second, before the
 * status message; while a long answer is being posted — and started again by the engine at
 * once: the answer comes within 30 s of the process being back, once (issue 32 §1). The
 * settings are the defaults that matter: a sending claim lasts hermes_timeout_seconds (120 s),
 * which a gone process's turn no longer waits out (src/turns/beats.ts).
 */
// busy_input_mode queue: these restarts count one answer per question (a person's questions
// waiting behind their running turn are merged by default: followUps.test.ts).
const env = useRigAndHermes({ hermes_timeout_seconds: 120, status_delay_seconds: 3, busy_input_mode: 'queue' });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    // SLOW answers 30 words, one every 100 ms: Hermes answers 3 s after the run starts.
    hermes.configure({ slowIntervalMs: 100 });
});

afterEach(async () => {
    await rig.settle();
});

/**
 * The issue's bound: the answer within 30 s of the process being back. A new process sweeps once
 * the one it replaced counts as gone (src/engine/entry/TurnJobs.ts sweepAfterStart, 11 s): idle
 * runs answer in 10-15 s. Two loaded full-suite runs (8d8e14a, 6ab25a7) once hung here: the
 * process died between the two writes of the run's save, and every tick of the turn then threw
 * on its missing text (the "half saved" case below).
 */
const RESTART_BOUND_MS = 30_000;

const person = (name: string) => rig.user(`${name}${++n}`);
const runCreates = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');

const storedTurn = (id: string) => storedTurnHead(rig, id);
const until = pollUntil;

/** The SLOW answer came once, within the bound after `back`, from `runs` run requests in all. */
function expectSlowAnsweredOnce(reply: StoredMessage, afterMs: number, room: Parameters<Rig['botMessagesOfKind']>[0], runs: number): void {
    expect(reply.text).toBe(`SLOW:${' tick'.repeat(30)}`);
    expect(afterMs).toBeLessThan(RESTART_BOUND_MS);
    expect(rig.botMessagesOfKind(room, 'answer')).toHaveLength(1);
    expect(runCreates()).toHaveLength(runs);
}

/** Kills the app's process and resolves when the engine has it back: the moment the 30 s start. */
async function killAndRestart(): Promise<number> {
    await rig.server.killAppProcess(rig.appId);
    return Date.now();
}

async function answerAfter(
    question: StoredMessage,
    room: Parameters<Rig['waitForBotReply']>[0],
    back: number,
): Promise<{ reply: StoredMessage; afterMs: number }> {
    const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 100_000 });
    return { reply, afterMs: Date.now() - back };
}

// First in the file: on engine 1.58 it failed once after the seven kills below (the status message
// never came within 10 s; not yet understood, see the session note of 2026-12-05).
describe('the status message', () => {
    it('shows at status_delay_seconds (3 s), not at the chain tick after it', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        hermes.configure({ slowIntervalMs: 200 });
        const question = await rig.post(alice, dm, 'SLOW status please');
        const status = await rig.waitForMessage((m) => m.rid === dm.id && kindOfStored(m) === 'status', 10_000, 'the status message');
        const shownAfter = status.createdAt.getTime() - question.createdAt.getTime();
        // The run starts a few ms after the message; the chain's ticks are 2 s apart (it showed at about 5 s).
        expect(shownAfter).toBeGreaterThanOrEqual(3_000);
        expect(shownAfter).toBeLessThan(4_300);
        await rig.waitForBotReply(dm, { after: question, timeoutMs: 15_000 });
    }, 30_000);
});

describe('a process killed in a turn’s first second', () => {
    it('after its run is written: the run is followed to its end (no second run), answered once', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const question = await rig.post(alice, dm, 'SLOW killed after the run is written');
        const runId = await until('stored run', () => storedTurn(question.id)?.runId as string | undefined);
        // Before the status message (3 s): the turn is still in its message event.
        expect(rig.botMessagesOfKind(dm, 'status')).toHaveLength(0);
        const killedAt = Date.now();
        const back = await killAndRestart();
        const { reply, afterMs } = await answerAfter(question, dm, back);
        await rig.settle();
        expect(reply.text).toBe(`SLOW:${' tick'.repeat(30)}`);
        expect(afterMs).toBeLessThan(RESTART_BOUND_MS);
        // The new process's own sweep, not the recurring one, took it over (TurnJobs.ts sweepAfterStart).
        const armedSinceKill = rig.server.bridges.scheduler.runs.filter((r) => r.id.startsWith('hermes-sweep-start') && r.due - r.planned >= killedAt);
        expect(armedSinceKill).toHaveLength(1);
        expect(rig.botMessagesOfKind(dm, 'answer')).toHaveLength(1);
        expect(runCreates()).toHaveLength(1);
        // v0.18.2 drops a run's events once their first stream ends: the run was read by its status.
        expect(hermes.requests.filter((r) => r.method === 'GET' && r.path === `/v1/runs/${runId}`).length).toBeGreaterThan(0);
        expectLogged(rig.logText()).toMatch(
            new RegExp(`Turn message ${question.id} in room ${dm.id} its app process is gone \\(no sign of it for \\d+ s\\); restarted\\.`),
        );
    }, 150_000);

    it('as its run was half saved (its head stored, its text not): the run is followed to its end, answered once', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const question = await rig.post(alice, dm, 'SLOW killed between the two writes of a save');
        await until('stored run', () => storedTurn(question.id)?.runId as string | undefined);
        const back = await killAndRestart();
        // A save is two writes, head and payload, sent side by side: a process killed between them
        // leaves a head that names the run and no text (seen in a loaded run: every tick of the turn then threw).
        const payload = [...rig.server.bridges.persistence.records.values()].find((r) =>
            r.associations.some((a) => a.getID() === `hermes-turn-payload:${question.id}`),
        );
        delete (payload?.data as Record<string, unknown> | undefined)?.user;
        delete (payload?.data as Record<string, unknown> | undefined)?.system;
        const { reply, afterMs } = await answerAfter(question, dm, back);
        await rig.settle();
        expectSlowAnsweredOnce(reply, afterMs, dm, 1);
    }, 150_000);

    it('while its run request is on its way: sent again (v0.18.2 cannot be asked for it), answered once', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        // Hermes takes 1 s to answer the run request: the process dies before it knows the run.
        hermes.script({ method: 'POST', path: '/v1/runs', delayMs: 1_000 });
        const question = await rig.post(alice, dm, 'SLOW killed while sending');
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
        const back = await killAndRestart();
        const { reply, afterMs } = await answerAfter(question, dm, back);
        await rig.settle();
        expectSlowAnsweredOnce(reply, afterMs, dm, 2);
    }, 150_000);
});

describe('a process killed in a message’s first milliseconds, before its turn is stored', () => {
    // AppListenerManager.executePostMessageSent sends checkPostMessageSent, then executePostMessageSent;
    // a call into a killed process ends at the engine's 30 s timeout (AppsEngineDenoRuntime) as
    // "no", and the engine sends the message no more (a DM has a first call of its own,
    // executePostMessageSentToBot, so there executePostMessageSent comes 30 s later). The new
    // process reads the minute before its start again (src/engine/entry/missedMessages.ts).
    it.each([
        ['a channel', false],
        ['a DM', true],
    ])(
        'in %s: answered once, within 30 s of the process being back',
        async (_where, direct) => {
            const alice = person('alice');
            const room = direct ? rig.direct([alice, rig.bot]) : rig.room(`early${n}`, [alice, rig.bot]);
            const question = await rig.post(alice, room, `${direct ? '' : `@${rig.bot.username} `}SLOW killed before my turn is stored`);
            const back = await killAndRestart();
            expect(storedTurn(question.id)).toBeUndefined();
            const { reply, afterMs } = await answerAfter(question, room, back);
            expect(reply.text).toContain(`SLOW:${' tick'.repeat(30)}`);
            expect(afterMs).toBeLessThan(RESTART_BOUND_MS);
            if (direct) {
                // The DM's executePostMessageSent, sent once the engine gave up on the dead process's call (30 s), finds it taken.
                await rig.server.orphansSettled();
            }
            await rig.settle();
            expect(rig.botMessagesOfKind(room, 'answer')).toHaveLength(1);
            expect(runCreates()).toHaveLength(1);
        },
        150_000,
    );
});

describe('a busy room whose events died with the process', () => {
    // Stored, no event (`silent`): what the engine leaves of messages posted while the process was
    // down or starting. 30 mentions and 30 answers are more than the 20 newest messages the start
    // once read of a room: its first ten questions were never answered (the chaos run, seed 3).
    it('every question of the minute before the start is answered once, in the order asked', async () => {
        const alice = person('alice');
        const room = rig.room(`busy${n}`, [alice, rig.bot]);
        const asked: StoredMessage[] = [];
        for (let i = 0; i < 30; i++) {
            asked.push(await rig.post(alice, room, `@${rig.bot.username} busy q${i}`, { silent: true }));
        }
        const back = await killAndRestart();
        await until('30 answers', () => (rig.botMessagesOfKind(room, 'answer').length >= 30 ? true : undefined), 60_000);
        const afterMs = Date.now() - back;
        await rig.settle();
        const answers = rig.botMessagesOfKind(room, 'answer').map((m) => /busy q(\d+) \|/.exec(m.text)?.[1]);
        expect(answers).toEqual(asked.map((_, i) => String(i)));
        expect(afterMs).toBeLessThan(RESTART_BOUND_MS);
    }, 150_000);
});

describe('a question whose event died, and one asked right after the restart', () => {
    // The new process answered the later question at once and the earlier one 11 s later, when its
    // start's sweep found it (npm run chaos: 1-6 questions per long run out of their conversation's order).
    it('are sent to Hermes and answered in the order asked', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.post(alice, dm, 'order lost-first', { silent: true });
        const back = await killAndRestart();
        await rig.post(alice, dm, 'order asked-after');
        await until('2 answers', () => (rig.botMessagesOfKind(dm, 'answer').length >= 2 ? true : undefined), 60_000);
        const afterMs = Date.now() - back;
        await rig.settle();
        const inputs = runCreates().map((r) => /order (\S+)/.exec(String((r.json as { input?: unknown }).input))?.[1]);
        expect(inputs).toEqual(['lost-first', 'asked-after']);
        const answers = rig.botMessagesOfKind(dm, 'answer').map((m) => /order (\S+)/.exec(m.text)?.[1]);
        expect(answers).toEqual(['lost-first', 'asked-after']);
        // Well before the start's sweep (11 s after the start): the room was looked at by its first event.
        expect(afterMs).toBeLessThan(8_000);
    }, 90_000);
});

describe('a process killed while a long answer is posted', () => {
    it('posts each part once', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(30).trim()}.`);
        hermes.setReply(() => paragraphs.join('\n\n'));
        rig.server.store.serverSettings.set('Message_MaxAllowedSize', 200);
        try {
            const question = await rig.post(alice, dm, 'a long answer please');
            // The bot's first part (the question itself is unmarked in a DM too: matched by sender).
            await rig.waitForMessage((m) => m.rid === dm.id && m.senderId === rig.bot.id && m.text.startsWith('Paragraph 0:'), 10_000, 'the first part');
            const back = await killAndRestart();
            await rig.waitForMessage((m) => m.rid === dm.id && m.text.startsWith('Paragraph 11:'), 60_000, 'the last part');
            expect(Date.now() - back).toBeLessThan(RESTART_BOUND_MS);
            await rig.settle();
            const texts = rig.botMessagesOfKind(dm, 'answer').map((m) => m.text);
            expect(texts).toEqual(paragraphs);
            expect(runCreates()).toHaveLength(1);
            expect(rig.botMessages(dm).filter((m) => m.createdAt >= question.createdAt)).toHaveLength(12);
        } finally {
            rig.server.store.serverSettings.set('Message_MaxAllowedSize', 5000);
        }
    }, 150_000);
});

describe('a process killed while a turn waits for an approval', () => {
    it('the approval still decides the run, and the answer comes once after the click', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const question = await rig.post(alice, dm, 'DANGER tidy up, then restart');
        const approval = await rig.waitForMessage((m) => m.rid === dm.id && kindOfStored(m) === 'approval', 10_000, 'the approval message');
        // Killed once the turn's record says it waits for that approval (the moment people click in).
        await until('stored approval', () => (storedTurn(question.id)?.approval ? true : undefined));
        await killAndRestart();
        await rig.clickButton(alice, approval, 'hermes-approval', `${turnOfStored(approval)}|deny`);
        const clicked = Date.now();
        const reply = await rig.waitForBotReply(dm, { after: question, timeoutMs: 60_000 });
        const afterMs = Date.now() - clicked;
        await rig.settle();
        expect(afterMs).toBeLessThan(RESTART_BOUND_MS);
        expect(hermes.requests.filter((r) => r.path.endsWith('/approval')).map((r) => (r.json as { choice?: string }).choice)).toEqual(['deny']);
        expect(rig.botMessagesOfKind(dm, 'answer').map((m) => m.text)).toEqual([reply.text]);
        expect(runCreates()).toHaveLength(1);
    }, 150_000);
});
