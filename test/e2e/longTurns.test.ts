import { createServer } from 'http';
import { AddressInfo } from 'net';
import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { expectLogged, FakeHermes, useRigAndHermes } from '../support/e2e';
import { kindOfStored, turnOfStored } from '../../rig/marks';
import { QUICK_MS } from '../../src/turns/tickTimes';

/**
 * Long agent turns end to end: runs, progress, approvals from chat, stop, failures, a killed
 * app process, and many turns at once — the packaged app in the real engine, Hermes faked
 * over real HTTP as recorded (v0.18.2 unless a test says otherwise).
 */
// busy_input_mode queue: these count one answer per question (a person's follow-ups are merged by default: followUps.test.ts).
const env = useRigAndHermes({ hermes_timeout_seconds: 5, status_delay_seconds: 1, busy_input_mode: 'queue' });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    hermes.configure({ slowIntervalMs: 50, approvalTimeoutMs: 60_000 });
});

afterEach(async () => {
    await rig.settle();
});

const person = (name: string) => rig.user(`${name}${++n}`);
const runCreates = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');
const json = (r: { json?: unknown }) => r.json as Record<string, unknown>;
const bot = () => rig.bot.username;

const ask = (who: StoredUser, room: StoredRoom, text: string, tmid?: string) => rig.ask(who, room, text, { tmid });

function approvalMessage(room: StoredRoom): Promise<StoredMessage> {
    return rig.waitForMessage((m) => m.rid === room.id && kindOfStored(m) === 'approval', 10_000, 'the approval message');
}

/** Clicks a button of a bot message as `user`, like the Rocket.Chat client does. */
async function click(user: StoredUser, message: StoredMessage, choice: string): Promise<void> {
    const value = `${turnOfStored(message)}|${choice}`;
    await rig.clickButton(user, message, 'hermes-approval', value);
}

describe('transport', () => {
    it('uses runs on a server that offers them: Idempotency-Key is the message id, history is sent to v0.18.2', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const first = await ask(alice, dm, 'my name is Alice');
        expect(first.reply.text).toBe('ECHO: my name is Alice | user_turns=1 | prev=-');
        const second = await ask(alice, dm, 'what is my name?');
        // The run saw the earlier turn because the app sent it as conversation_history.
        expect(second.reply.text).toBe('ECHO: what is my name? | user_turns=2 | prev=my name is Alice');
        const [a, b] = runCreates();
        expect(a.headers['idempotency-key']).toBe(first.question.id);
        expect(b.headers['idempotency-key']).toBe(second.question.id);
        expect(a.headers['x-hermes-session-key']).toBe(`agent:main:rocketchat:dm:${dm.id}`);
        expect(json(a).session_id).toBe(json(b).session_id);
        expect(json(b).conversation_history).toEqual([
            { role: 'user', content: 'my name is Alice' },
            { role: 'assistant', content: 'ECHO: my name is Alice | user_turns=1 | prev=-' },
        ]);
        expect(hermes.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0);
    });

    it('sends no history to a newer server (it loads the session itself), and uses chat completions on an old one', async () => {
        const alice = person('alice');
        hermes.configure({ mode: 'newer' });
        await rig.setting('hermes_timeout_seconds', 6); // a settings change re-probes Hermes
        await rig.settingsReported();
        try {
            const dm = rig.direct([alice, rig.bot]);
            await ask(alice, dm, 'one');
            await ask(alice, dm, 'two');
            expect(runCreates().map((r) => 'conversation_history' in json(r))).toEqual([false, false]);
            hermes.reset();
            hermes.configure({ mode: 'old' });
            await rig.setting('hermes_timeout_seconds', 5);
            await rig.settingsReported();
            const { reply } = await ask(alice, dm, 'three');
            expect(reply.text).toContain('ECHO: three');
            expect(runCreates()).toHaveLength(0);
            expect(hermes.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
        } finally {
            hermes.configure({ mode: 'v0.18.2' });
            await rig.setting('hermes_timeout_seconds', 5);
            await rig.settingsReported();
        }
    });

    it('a turn that outlives QUICK_MS leaves its message event then; the turn goes on in scheduler jobs', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        // About 4.5 s: longer than the event may hold a turn (tick.ts QUICK_MS, 3 s).
        hermes.configure({ slowIntervalMs: 150 });
        rig.server.callDurations.length = 0;
        const { reply } = await ask(alice, dm, 'SLOW please');
        expect(reply.text).toMatch(/^SLOW:( tick){30}$/);
        const events = rig.server.callDurations.filter((c) => c.method.startsWith('app:executePostMessageSent'));
        const jobs = rig.server.callDurations.filter((c) => c.method.startsWith('scheduler:'));
        expect(events.length).toBeGreaterThan(0);
        events.forEach((c) => expect(c.ms).toBeLessThan(QUICK_MS + 1000));
        expect(jobs.length).toBeGreaterThan(0);
        jobs.forEach((c) => expect(c.ms).toBeLessThan(15_000));
    });
});

describe('while it works', () => {
    it('shows typing as the bot, one status message with the tools, removed when the answer arrives', async () => {
        const alice = person('alice');
        const room = rig.room(`progress${n}`, [alice, rig.bot]);
        const typingBefore = rig.server.typing.length;
        const question = await rig.post(alice, room, `@${bot()} DANGER clean up`);
        const status = await rig.waitForMessage((m) => m.rid === room.id && kindOfStored(m) === 'status', 10_000, 'the status message');
        expect(status.text).toContain('Working');
        // Edited (at most every 2 s) with the tool Hermes runs.
        await rig.waitForMessage(() => (rig.server.store.messages.get(status.id)?.text ?? '').includes('💻 terminal: rm -rf'), 10_000, 'the tool line');
        const approval = await approvalMessage(room);
        await click(alice, approval, 'deny');
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        await rig.settle();
        expect(reply.text).toContain('BLOCKED: Command denied');
        expect(rig.server.store.messages.has(status.id)).toBe(false);
        expect(rig.botMessagesOfKind(room, 'status')).toHaveLength(0);
        const typing = rig.server.typing.slice(typingBefore).filter((t) => t.id === room.id);
        expect(typing.length).toBeGreaterThan(0);
        expect(typing.every((t) => t.username === bot())).toBe(true);
    });

    it("/hermes stop stops the asker's running turn and says so in place of the answer", async () => {
        const alice = person('alice');
        const room = rig.room(`stop${n}`, [alice, rig.bot]);
        hermes.configure({ slowIntervalMs: 500 });
        const question = await rig.post(alice, room, `@${bot()} SLOW story`);
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
        await rig.command(alice, room, '/hermes stop');
        expect(rig.ephemerals(alice, room).pop()).toContain('Stopping');
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        expect(reply.text).toContain(`Stopped by @${alice.username}`);
        expect(hermes.requests.some((r) => r.method === 'POST' && /\/v1\/runs\/run_[0-9a-f]+\/stop$/.test(r.path))).toBe(true);
    });

    it('/hermes stop stops only your own turn: another member is told nothing of theirs runs, an admin may stop it', async () => {
        const alice = person('alice');
        const bob = person('bob');
        const boss = person('boss');
        const room = rig.room(`stoprules${n}`, [alice, bob, boss, rig.bot]);
        // A thread is one shared session: alice's turn is in the conversation bob's command addresses.
        const root = await rig.post(alice, room, 'the plan', { silent: true });
        const stops = () => hermes.requests.filter((r) => r.method === 'POST' && /^\/v1\/runs\/run_[0-9a-f]+\/stop$/.test(r.path));
        await rig.setting('admin_user_ids', boss.id);
        try {
            hermes.configure({ slowIntervalMs: 100 });
            const first = await rig.post(alice, room, `@${bot()} SLOW first`, { tmid: root.id });
            await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
            await rig.command(bob, room, '/hermes stop', { tmid: root.id });
            expect(rig.ephemerals(bob, room).pop()).toBe('Nothing of yours is running here.');
            expect(stops()).toHaveLength(0);
            // Alice's turn goes on to its whole answer.
            const answer = await rig.waitForBotReply(room, { after: first, tmid: root.id, timeoutMs: 15_000 });
            await rig.settle();
            expect(answer.text).toMatch(/^SLOW:( tick){30}$/);
            expect(hermes.getRun(hermes.runIds()[0])?.status).toBe('completed');

            hermes.configure({ slowIntervalMs: 500 });
            const second = await rig.post(alice, room, `@${bot()} SLOW second`, { tmid: root.id });
            await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs' && String(json(r).input).includes('SLOW second'), 5_000);
            await rig.command(boss, room, '/hermes stop', { tmid: root.id });
            expect(rig.ephemerals(boss, room).pop()).toContain('Stopping');
            const stopped = await rig.waitForBotReply(room, { after: second, tmid: root.id, timeoutMs: 15_000 });
            await rig.settle();
            expect(stopped.text).toContain(`Stopped by @${boss.username}`);
            expect(stops()).toHaveLength(1);
            await hermes.waitForRunStatus(hermes.runIds()[1], 'cancelled', 5_000);
        } finally {
            await rig.setting('admin_user_ids', '');
        }
    }, 40_000);
});

describe('approvals in chat', () => {
    it('offers once / session / deny in a room; only the asker decides; the message shows who decided', async () => {
        const alice = person('alice');
        const mallory = person('mallory');
        const room = rig.room(`approve${n}`, [alice, mallory, rig.bot]);
        const question = await rig.post(alice, room, `@${bot()} DANGER tidy the scratch dir`);
        const approval = await approvalMessage(room);
        // What a client that has not yet received the edit still shows: the buttons, naming the app.
        const shown = structuredClone(approval);
        expect(approval.text).toContain('rm -rf');
        const buttons = JSON.stringify(approval.blocks);
        expect(buttons).toContain('Approve once');
        expect(buttons).toContain('Approve for this session');
        expect(buttons).toContain('Deny');
        expect(buttons).not.toContain('Always');

        await click(mallory, approval, 'once');
        expect(rig.ephemerals(mallory, room).pop()).toContain('Only the person who asked');
        await click(alice, approval, 'always');
        expect(rig.ephemerals(alice, room).pop()).toContain('"Always" approvals can only be given by an admin');
        await click(alice, approval, 'once');

        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        expect(reply.text).toContain('approved by the user');
        const edited = rig.server.store.messages.get(approval.id);
        expect(edited?.text).toContain(`Approve once by @${alice.username}`);
        // Still marked as the approval message, without buttons.
        expect(kindOfStored(edited as StoredMessage)).toBe('approval');
        expect((edited?.blocks ?? []).filter((b) => (b as { type?: string }).type === 'actions')).toHaveLength(0);
        const decisions = hermes.requests.filter((r) => r.path.endsWith('/approval'));
        expect(decisions.map((r) => json(r).choice)).toEqual(['once']);

        // A click after the run moved on gets a private notice, and Hermes is asked nothing.
        await click(alice, shown, 'deny');
        expect(rig.ephemerals(alice, room).pop()).toContain('no longer pending');
        expect(hermes.requests.filter((r) => r.path.endsWith('/approval'))).toHaveLength(1);
    });

    it('offers "always" only in an admin\'s own 1:1 DM, and accepts /approve, /deny, yes and no as text', async () => {
        const admin = person('admin');
        await rig.setting('admin_user_ids', admin.id);
        try {
            const dm = rig.direct([admin, rig.bot]);
            const q1 = await rig.post(admin, dm, 'DANGER please');
            const a1 = await approvalMessage(dm);
            expect(JSON.stringify(a1.blocks)).toContain('Always approve');
            await rig.post(admin, dm, 'yes');
            const r1 = await rig.waitForBotReply(dm, { after: q1, timeoutMs: 15_000 });
            expect(r1.text).toContain('approved by the user');
            await rig.settle();

            const alice = person('alice');
            const room = rig.room(`textapprove${n}`, [alice, rig.bot]);
            const q2 = await rig.post(alice, room, `@${bot()} DANGER again`);
            await rig.waitForMessage((m) => m.rid === room.id && kindOfStored(m) === 'approval' && m.createdAt > q2.createdAt, 10_000);
            await rig.post(alice, room, `@${bot()} /deny`);
            const r2 = await rig.waitForBotReply(room, { after: q2, timeoutMs: 15_000 });
            expect(r2.text).toContain('BLOCKED: Command denied');
            expect(hermes.requests.filter((r) => r.path.endsWith('/approval')).map((r) => json(r).choice)).toEqual(['once', 'deny']);
        } finally {
            await rig.setting('admin_user_ids', '');
        }
    });

    it('says so when Hermes times the approval out', async () => {
        const alice = person('alice');
        const room = rig.room(`timeout${n}`, [alice, rig.bot]);
        hermes.configure({ approvalTimeoutMs: 1_000 });
        const question = await rig.post(alice, room, `@${bot()} DANGER wait`);
        const approval = await approvalMessage(room);
        await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        await rig.settle();
        expect(rig.server.store.messages.get(approval.id)?.text).toContain('timed out');
        expect((rig.server.store.messages.get(approval.id)?.blocks ?? []).filter((b) => (b as { type?: string }).type === 'actions')).toHaveLength(0);
    });
});

describe('failures', () => {
    const notice = async (room: StoredRoom, who: StoredUser, text = `@${bot()} hello`) => (await ask(who, room, text)).reply.text;

    it('429 with Retry-After is retried and then answered; beyond the budget the asker is told', async () => {
        const alice = person('alice');
        const room = rig.room(`busy${n}`, [alice, rig.bot]);
        hermes.script({ method: 'POST', path: '/v1/runs', error: 'rate_limit_exceeded', times: 2 });
        expect(await notice(room, alice)).toContain('hello');
        expect(runCreates()).toHaveLength(3);
        hermes.reset();
        hermes.script({ method: 'POST', path: '/v1/runs', error: 'gateway_draining', always: true });
        expect(await notice(room, alice)).toContain('Hermes is restarting');
        expect(runCreates()).toHaveLength(5);
        expectLogged(rig.logText()).toContain('gateway_draining');
    }, 30_000);

    it('401: the credentials notice at once, no retry', async () => {
        const alice = person('alice');
        const room = rig.room(`auth${n}`, [alice, rig.bot]);
        hermes.script({
            method: 'POST',
            path: '/v1/runs',
            status: 401,
            body: { error: { message: 'Invalid API key', type: 'invalid_request_error', code: 'invalid_api_key' } },
        });
        expect(await notice(room, alice)).toContain("Hermes rejected the app's credentials — ask an administrator");
        expect(runCreates()).toHaveLength(1);
    });

    it('413: trims the history and retries once', async () => {
        const alice = person('alice');
        const room = rig.room(`big${n}`, [alice, rig.bot]);
        await rig.post(alice, room, 'some earlier chatter', { silent: true });
        hermes.script({ method: 'POST', path: '/v1/runs', error: 'body_too_large' });
        const text = await notice(room, alice, `@${bot()} summarise`);
        expect(text).toContain('[New message]');
        const [first, second] = runCreates();
        expect(String(json(first).input)).toContain('some earlier chatter');
        expect(String(json(second).input)).not.toContain('some earlier chatter');
        expect(String(json(second).input)).toBe(`[Rocket.Chat room_id: ${room.id}]\n\n[New message]\nsummarise`);
    });

    it('a failed run delivers the partial answer, marked incomplete', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        hermes.script({ method: 'POST', path: '/v1/runs', finishReason: 'error', errorMessage: 'model crashed', reply: 'partial answer' });
        const { reply } = await ask(alice, dm, 'tell me');
        expect(reply.text).toBe('partial answer\n\n_(Hermes could not finish this answer; this is what it had so far.)_');
        expect(rig.logText()).not.toContain('partial answer');
    });

    it('chat completions: 502 agent_incomplete and finish_reason length are told apart from success', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.setting('hermes_transport', 'chat');
        try {
            hermes.script({ method: 'POST', path: '/v1/chat/completions', finishReason: 'length', reply: 'cut off mid' });
            expect((await ask(alice, dm, 'long one')).reply.text).toBe('cut off mid\n\n_(Hermes could not finish this answer; this is what it had so far.)_');
            hermes.script({ method: 'POST', path: '/v1/chat/completions', error: 'agent_incomplete' });
            expect((await ask(alice, dm, 'again')).reply.text).toContain('Hermes could not finish this answer');
        } finally {
            await rig.setting('hermes_transport', 'auto');
        }
    });

    it('chat completions: a command that needs approval is told as such, never as the tool result JSON; answers are trimmed (issue 35 §8)', async () => {
        const alice = person('alice');
        const room = rig.room(`chatok${n}`, [alice, rig.bot]);
        await rig.setting('hermes_transport', 'chat');
        try {
            // As v0.18.2 streams it (transcript 30): the answer after the tool call starts with blank lines and repeats the pending result.
            const question = await rig.post(alice, room, `@${bot()} DANGER clean up`);
            const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
            expect(reply.text).not.toMatch(/approval_pending|TOOL_RESULT_SEEN|\{"/);
            expect(reply.text).toContain('Hermes wanted to run a command that needs approval, and did not run it');
            expect(reply.text).toMatch(/```\nrm -rf \S+\/scratch\n```/);
            expect(reply.text).toContain('Approvals need the runs transport');
            expect(hermes.requests.filter((r) => r.path.endsWith('/approval'))).toHaveLength(0);
            // In a DM the answer is posted as is (no quote of the question before it).
            const { reply: answer } = await ask(alice, rig.direct([alice, rig.bot]), 'RUN_TOOL please');
            expect(answer.text).toMatch(/^TOOL_RESULT_SEEN: \{"output": "RUN_TOOL_OK"/);
        } finally {
            await rig.setting('hermes_transport', 'auto');
        }
    });

    it('malformed JSON, a timeout and a redirect each end in a notice; the redirect is never followed', async () => {
        const alice = person('alice');
        const room = rig.room(`odd${n}`, [alice, rig.bot]);
        hermes.script({ method: 'POST', path: '/v1/runs', malformedJson: true });
        expect(await notice(room, alice)).toContain('could not read');

        const elsewhere: string[] = [];
        const trap = createServer((req, res) => {
            elsewhere.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
            res.end('{}');
        });
        await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
        try {
            hermes.script({ method: 'POST', path: '/v1/runs', redirect: `http://127.0.0.1:${(trap.address() as AddressInfo).port}/steal` });
            expect(await notice(room, alice)).toContain('redirect');
            expect(elsewhere).toEqual([]);
            expectLogged(rig.logText()).toMatch(/HTTP 302 redirect to http:\/\/127\.0\.0\.1:\d+\/steal \(not followed/);
        } finally {
            trap.close();
        }

        hermes.script({ method: 'POST', path: '/v1/runs', delayMs: 6_000 });
        expect(await notice(room, alice)).toContain('did not answer in time');
        expectLogged(rig.logText()).toMatch(/timeout: POST \/v1\/runs: no complete answer within 5 s/);
    }, 30_000);

    it('an unknown host (DNS failure) ends in a notice naming the cause in the log', async () => {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.setting('hermes_url', 'http://hermes-host.invalid:8642');
        try {
            expect((await ask(alice, dm, 'anyone?')).reply.text).toContain('Hermes could not be reached');
            expectLogged(rig.logText()).toMatch(/unreachable: GET \/health: .*(dns|lookup|resolve|getaddrinfo|name)/i);
        } finally {
            await rig.setting('hermes_url', hermes.url);
        }
    });

    it('progress off: no status message at all', async () => {
        const alice = person('alice');
        const room = rig.room(`quiet${n}`, [alice, rig.bot]);
        await rig.setting('progress_in_channel', 'off');
        try {
            await ask(alice, room, `@${bot()} RUN_TOOL quietly`);
            expect(rig.server.store.roomMessages.get(room.id)?.some((m) => kindOfStored(m) === 'status')).toBe(false);
        } finally {
            await rig.setting('progress_in_channel', 'tools');
        }
    });
});

describe('restart and cluster safety', () => {
    it('a killed app process mid-run still delivers the answer exactly once', async () => {
        const alice = person('alice');
        const room = rig.room(`crash${n}`, [alice, rig.bot]);
        hermes.configure({ slowIntervalMs: 100 });
        const question = await rig.post(alice, room, `@${bot()} SLOW through a crash`);
        // Mid-run: the run exists and the status message is up.
        await rig.waitForMessage((m) => m.rid === room.id && kindOfStored(m) === 'status', 5_000, 'the status message');
        await rig.server.killAppProcess(rig.appId);
        // A tick sent to the dead process holds the turn processor until the engine's 30 s call
        // timeout (Agenda runs one job at a time); the sweep then restarts the turn's chain.
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 60_000 });
        await rig.settle();
        expect(reply.text).toMatch(/^\[ \]\(.*\) @alice\d+ SLOW:( tick){30}$/);
        expect(rig.botMessagesOfKind(room, 'answer')).toHaveLength(1);
        expect(rig.botMessagesOfKind(room, 'status')).toHaveLength(0);
        expect(runCreates()).toHaveLength(1);
    }, 80_000);

    it('two scheduler firings and a replayed event give one answer', async () => {
        const alice = person('alice');
        const room = rig.room(`twice${n}`, [alice, rig.bot]);
        hermes.configure({ slowIntervalMs: 30 });
        const question = await rig.post(alice, room, `@${bot()} SLOW twice`);
        await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs', 5_000);
        await Promise.all([
            rig.server.bridges.scheduler.fireNow('hermes-turn', { turnId: question.id }),
            rig.server.bridges.scheduler.fireNow('hermes-turn', { turnId: question.id }),
            rig.replay(question),
        ]);
        await rig.waitForBotReply(room, { after: question, timeoutMs: 15_000 });
        await rig.settle();
        await rig.server.bridges.scheduler.fireNow('hermes-turn', { turnId: question.id });
        await rig.replay(question);
        await rig.settle();
        expect(rig.botMessagesOfKind(room, 'answer')).toHaveLength(1);
        expect(runCreates()).toHaveLength(1);
    });

    it('a message replayed after an app restart is still answered once: the receipt is persisted, not only in memory', async () => {
        const alice = person('alice');
        const room = rig.room(`replayed${n}`, [alice, rig.bot]);
        const { question, reply } = await ask(alice, room, `@${bot()} answer me once`);
        expect(reply.text).toMatch(/answer me once \| user_turns=1/);
        // A new process: the in-memory record of messages seen is gone, only persistence is left.
        await rig.server.killAppProcess(rig.appId);
        await rig.replay(question);
        await rig.settle();
        expect(rig.botMessages(room)).toHaveLength(1);
        expect(runCreates()).toHaveLength(1);
        // The replay did reach the new process (a lost event would pass the lines above), and the persisted receipt turned it away.
        expectLogged(rig.logText()).toContain(`Message ${question.id} was already taken as a turn.`);
    }, 60_000);

    it('20 turns in one thread are answered in order, one at a time', async () => {
        const alice = person('alice');
        const room = rig.room(`queue${n}`, [alice, rig.bot]);
        const root = await rig.post(alice, room, 'the thread', { silent: true });
        const sessionKey = `agent:main:rocketchat:channel:${room.id}:${root.id}`;
        hermes.setReply((msg) => `re ${msg.split('\n').pop()}`);
        // Every run is created 150 ms after its request arrives: a turn sent while the one
        // ahead is still being created or still running would overlap it, and be seen below.
        hermes.script({ method: 'POST', path: '/v1/runs', delayMs: 150, always: true });
        const registered: string[] = [];
        const onRegistered = (runId: string) => registered.push(runId);
        // Checked the moment each run request of the session arrives, before Hermes acts on it.
        const seen: Array<{ question: string; busy: string[]; answered: string[] }> = [];
        const onRequest = (req: { method: string; path: string; headers: Record<string, string>; json?: unknown }) => {
            if (req.method !== 'POST' || req.path !== '/v1/runs' || req.headers['x-hermes-session-key'] !== sessionKey) {
                return;
            }
            const creates = runCreates().filter((r) => r.headers['x-hermes-session-key'] === sessionKey);
            const busy = [
                // Earlier requests of the session whose run does not exist yet.
                ...creates.slice(registered.length, -1).map((r) => `request for ${String(json(r).input).split('\n').pop()} still pending`),
                // Runs of the session that exist and have not ended.
                ...hermes
                    .runIds()
                    .map((id) => hermes.getRun(id) as Record<string, unknown>)
                    .filter((run) => run.session_id === json(req).session_id && !['completed', 'failed', 'cancelled'].includes(String(run.status)))
                    .map((run) => `run ${String(run.run_id)} ${String(run.status)}`),
            ];
            const answered = rig.botMessagesOfKind(room, 'answer').map((m) => m.text.replace(`re [${alice.username}] `, ''));
            seen.push({ question: String(json(req).input).split('\n').pop()?.replace(`[${alice.username}] `, '') ?? '', busy, answered });
        };
        hermes.events.on('runRegistered', onRegistered);
        hermes.events.on('request', onRequest);
        try {
            for (let i = 0; i < 20; i++) {
                await rig.post(alice, room, `@${bot()} q${i}`, { tmid: root.id });
            }
            await rig.waitForMessage((m) => m.rid === room.id && m.text === `re [${alice.username}] q19`, 30_000, 'the 20th answer');
            await rig.settle();
        } finally {
            hermes.events.off('runRegistered', onRegistered);
            hermes.events.off('request', onRequest);
            hermes.setReply(null);
        }
        const asked = Array.from({ length: 20 }, (_, i) => `q${i}`);
        // One at a time: no run request of the session came while another was in Hermes.
        expect(seen.filter((s) => s.busy.length > 0)).toEqual([]);
        // In question order, each sent only once every earlier question had its answer posted (and no later one had).
        expect(seen.map((s) => s.question)).toEqual(asked);
        seen.forEach((s, i) => expect({ question: s.question, answered: s.answered }).toEqual({ question: `q${i}`, answered: asked.slice(0, i) }));
        expect(rig.botMessagesOfKind(room, 'answer').map((m) => m.text.replace(`re [${alice.username}] `, ''))).toEqual(asked);
        expect(registered).toHaveLength(20);
    }, 60_000);

    it('20 turns in 20 rooms run in parallel, never more at once than max_parallel_turns', async () => {
        const alice = person('alice');
        const rooms = Array.from({ length: 20 }, (_, i) => rig.room(`par${n}-${i}`, [alice, rig.bot]));
        await rig.setting('max_parallel_turns', 20);
        try {
            hermes.script({ method: 'POST', path: '/v1/runs', delayMs: 500, always: true });
            const started = Date.now();
            const questions = await Promise.all(rooms.map((room) => rig.post(alice, room, `@${bot()} hello`)));
            await Promise.all(rooms.map((room, i) => rig.waitForBotReply(room, { after: questions[i], timeoutMs: 20_000 })));
            const wall = Date.now() - started;
            await rig.settle();
            rooms.forEach((room) => expect(rig.botMessagesOfKind(room, 'answer')).toHaveLength(1));
            // Twenty 500 ms turns one after another would take 10 s.
            expect(wall).toBeLessThan(5_000);

            // Bounded at 4: the same twenty questions, at most four runs open at Hermes at any moment, all answered once.
            await rig.setting('max_parallel_turns', 4);
            hermes.reset();
            hermes.script({ method: 'POST', path: '/v1/runs', delayMs: 300, always: true });
            const again = await Promise.all(rooms.map((room) => rig.post(alice, room, `@${bot()} again`)));
            await Promise.all(rooms.map((room, i) => rig.waitForBotReply(room, { after: again[i], timeoutMs: 25_000 })));
            await rig.settle();
            rooms.forEach((room) => expect(rig.botMessagesOfKind(room, 'answer')).toHaveLength(2));
            // The upper bound only: how many overlap below it depends on the machine's speed (the exact schedule is test/unit/turns/slots.test.ts).
            expect(hermes.maxOpenRuns).toBeLessThanOrEqual(4);
        } finally {
            await rig.setting('max_parallel_turns', 8);
        }
    }, 60_000);
});
