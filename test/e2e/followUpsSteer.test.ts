import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { engineReacts } from '../../rig/environment';
import { FakeHermes, pollUntil, storedTurnHead, useRigAndHermes } from '../support/e2e';

/**
 * Issue 34 §4 on a server that steers (the newer line: `run_steer` in its capabilities, POST
 * /v1/runs/{id}/steer): a message sent while the person's turn runs joins that run, ↪️ on it, and
 * asks nothing of its own; with `busy_input_mode` merge it waits and is merged as on v0.18.2.
 */
const env = useRigAndHermes({ admin_user_ids: '', progress_in_channel: 'off', stream_answers: false, status_delay_seconds: 0 }, { hermes: { mode: 'newer' } });
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

const runs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs').map((r) => r.json as { input: string });
const person = (name: string) => rig.user(`${name}${++n}`);

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    hermes.configure({ slowIntervalMs: 100 });
});

afterAll(() => hermes.configure({ slowIntervalMs: 50 }));

async function slowTurn(who: StoredUser, room: StoredRoom, text: string): Promise<{ question: StoredMessage; runId: string }> {
    const question = await rig.post(who, room, text);
    await hermes.waitForRequest((r) => r.method === 'POST' && r.path === '/v1/runs' && JSON.stringify(r.json).includes(text), 5_000);
    return { question, runId: hermes.runIds().at(-1) as string };
}

it('a message sent during the run joins it: steered, ↪️ on it, no turn of its own', async () => {
    const alice = person('alice');
    const dm = rig.direct([alice, rig.bot]);
    const { question, runId } = await slowTurn(alice, dm, 'SLOW report please');
    const followUp = await rig.post(alice, dm, 'and keep it short');
    await pollUntil('the follow-up steered', () => (hermes.steers(runId).length > 0 ? true : undefined), 10_000);
    expect(hermes.steers(runId)).toEqual(['and keep it short']);
    await pollUntil('the follow-up ended', () => (storedTurnHead(rig, followUp.id) === undefined ? true : undefined), 10_000);
    if (engineReacts()) {
        // Engines 1.58 and 1.59 give apps no reactions.
        await rig.waitForMessage(() => rig.botReactions(followUp).includes('+:arrow_right_hook:'), 10_000, 'the ↪️ on the follow-up');
    }
    await rig.waitForBotReply(dm, { after: question, timeoutMs: 20_000 });
    await rig.settle();
    expect(runs()).toHaveLength(1);
    expect(rig.botMessagesOfKind(dm, 'answer').filter((m) => m.createdAt > question.createdAt)).toHaveLength(1);
    expect(rig.logText({ appLinesOnly: true })).toContain(`steered into run ${runId}`);
}, 30_000);

it('with busy_input_mode merge, the same server gets the follow-ups as one next turn', async () => {
    await rig.setting('busy_input_mode', 'merge');
    try {
        const alice = person('alice');
        const dm = rig.direct([alice, rig.bot]);
        const { question, runId } = await slowTurn(alice, dm, 'SLOW report please');
        await rig.post(alice, dm, 'also the budget');
        await rig.post(alice, dm, 'and the risks');
        await rig.waitForMessage(() => rig.botMessagesOfKind(dm, 'answer').filter((m) => m.createdAt > question.createdAt).length >= 2, 20_000, 'two answers');
        await rig.settle();
        expect(hermes.steers(runId)).toEqual([]);
        expect(runs().map((r) => r.input)).toEqual(['SLOW report please', 'also the budget\n\n[New message]\nand the risks']);
    } finally {
        await rig.setting('busy_input_mode', 'auto');
    }
}, 30_000);
