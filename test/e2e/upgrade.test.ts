import { Rig } from '../../rig';
import { FakeHermes, useRigAndHermes } from '../support/e2e';
import { kindOfStored } from '../../rig/marks';

/**
 * README "Upgrade": updating the installed app while a turn is running keeps the settings,
 * the sessions and the turn in flight (it is answered once, by the new code).
 */
const env = useRigAndHermes({ status_delay_seconds: 1, timezone: 'Europe/Berlin' });
let hermes: FakeHermes;
let rig: Rig;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

describe('upgrade', () => {
    it('an update while a turn runs: the turn is answered once, settings and sessions stay', async () => {
        const alice = rig.user('alice');
        const dm = rig.direct([alice, rig.bot]);
        const room = rig.room('upgrade', [alice, rig.bot]);
        hermes.setReply(null);
        const { reply: first } = await rig.ask(alice, dm, 'remember me');
        expect(first.text).toMatch(/user_turns=1/);
        hermes.configure({ slowIntervalMs: 100 });
        const question = await rig.post(alice, room, `@${rig.bot.username} SLOW across the update`);
        await rig.waitForMessage((m) => m.rid === room.id && kindOfStored(m) === 'status', 10_000, 'the status message');
        await rig.update(process.env.HERMES_APP_ZIP as string);
        const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 60_000 });
        await rig.settle();
        expect(reply.text).toMatch(/SLOW:( tick){30}$/);
        expect(rig.botMessagesOfKind(room, 'answer')).toHaveLength(1);
        expect(rig.botMessagesOfKind(room, 'status')).toHaveLength(0);
        expect(hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs').length).toBe(2);
        // Settings survived (the app still answers with them) and the DM session continues.
        expect(rig.server.manager.getSettingsManager().getAppSetting(rig.appId, 'timezone').value).toBe('Europe/Berlin');
        const { reply: again } = await rig.ask(alice, dm, 'still there?');
        expect(again.text).toMatch(/user_turns=2 \| prev=remember me/);
    }, 90_000);
});
