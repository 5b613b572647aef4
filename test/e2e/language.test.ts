import { readFileSync } from 'fs';
import { join } from 'path';
import { Rig } from '../../rig';
import { startFakeHermes } from '../../fake-hermes';
import { API_KEY } from '../support/e2e';

/** Issue 14 §3: with the server's Language set to German, what the bot writes to people is German. */
let rig: Rig;
let hermes: Awaited<ReturnType<typeof startFakeHermes>>;

beforeAll(async () => {
    hermes = await startFakeHermes({ apiKey: API_KEY });
    rig = await Rig.start({
        zipPath: process.env.HERMES_APP_ZIP as string,
        settings: { hermes_url: hermes.url, hermes_api_key: API_KEY, hermes_timeout_seconds: 10 },
        serverSettings: { Language: 'de' },
    });
}, 60_000);

afterAll(async () => {
    await rig?.stop();
    await hermes?.close();
});

describe('the server language', () => {
    it('answers commands and notices in it', async () => {
        const alice = rig.user('alice');
        const dm = rig.direct([alice, rig.bot]);
        await rig.ask(alice, dm, 'hello');
        await rig.command(alice, dm, '/hermes help');
        const de = JSON.parse(readFileSync(join(__dirname, '..', '..', 'i18n', 'de.json'), 'utf8')) as Record<string, string>;
        expect(rig.ephemerals(alice, dm).pop()).toBe(de.command_help.split('{bot}').join(rig.bot.username));
        hermes.script({ method: 'POST', path: '/v1/runs', error: 'internal_error', times: 1 });
        const { reply } = await rig.ask(alice, dm, 'fail please');
        expect(reply.text).toBe(de['notice_server-error']);
    });
});
