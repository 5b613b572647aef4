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

describe('the reader’s language (issue 14 §3: private answers and notices in the asker’s Rocket.Chat preference)', () => {
    const catalog = (lang: string) => JSON.parse(readFileSync(join(__dirname, '..', '..', 'i18n', `${lang}.json`), 'utf8')) as Record<string, string>;

    it('answers a command in the caller’s language, falling back to the server’s for a language the app lacks', async () => {
        const fr = catalog('fr');
        const de = catalog('de');
        const en = catalog('en');
        const marie = rig.user('marie', { language: 'fr' });
        const john = rig.user('john', { language: 'en-US' });
        const kenji = rig.user('kenji', { language: 'ja' });
        for (const [who, expected] of [
            [marie, fr],
            [john, en],
            [kenji, de],
        ] as const) {
            const dm = rig.direct([who, rig.bot]);
            await rig.command(who, dm, '/hermes new');
            expect(rig.ephemerals(who, dm).pop()).toBe(expected.command_new);
        }
    });

    it('keeps what the room reads in the server’s language, and a private answer’s notice in the asker’s', async () => {
        const fr = catalog('fr');
        const de = catalog('de');
        const marie = rig.user('marie2', { language: 'fr' });
        const room = rig.room('sprechzimmer', [marie, rig.bot]);
        hermes.script({ method: 'POST', path: '/v1/runs', error: 'internal_error', times: 1 });
        const { reply } = await rig.ask(marie, room, `@${rig.bot.username} fail please`);
        expect(reply.text).toContain(de['notice_server-error']);
        await rig.post(marie, room, 'the release moved to Friday', { silent: true, createdAt: new Date(Date.now() - 60_000) });
        hermes.script({ method: 'POST', path: '/v1/runs', error: 'internal_error', times: 1 });
        const clicked = Date.now();
        await rig.clickActionButton(marie, { actionId: 'hermes-catch-up', room });
        const notice = await rig.waitForEphemeral((e) => e.userId === marie.id && e.roomId === room.id && e.at >= clicked);
        expect(notice.text).toBe(fr['notice_server-error']);
        await rig.settle();
    });

    it('shows the Hermes panel in the reader’s language', async () => {
        const fr = catalog('fr');
        const marie = rig.user('marie3', { language: 'fr' });
        const room = rig.room('salon', [marie, rig.bot]);
        const panel = await rig.clickActionButton(marie, { actionId: 'hermes-panel', room });
        const blocks = JSON.stringify(panel.views.find((v) => v.type === 'contextualBar')?.view?.blocks);
        expect(blocks).toContain(fr.panel_turns);
        expect(blocks).toContain(fr.panel_refresh);
    });
});
