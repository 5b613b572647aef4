/**
 * The playground behind `npm start`: the packaged app in the real Apps-Engine, an in-memory
 * Rocket.Chat, and Hermes — the built-in demo (the test fake, which echoes) or a real one at
 * HERMES_URL (with HERMES_API_KEY). Plays a short conversation and prints it.
 */
import { Rig, StoredMessage, StoredRoom } from '../rig';
import { startFakeHermes } from '../fake-hermes';

const DEMO_KEY = 'playground-demo-key-0123456789';

async function main(): Promise<void> {
    const zipPath = process.argv[2];
    const external = process.env.HERMES_URL;
    const demo = external ? undefined : await startFakeHermes({ apiKey: DEMO_KEY });
    const hermesUrl = external ?? demo!.url;
    const apiKey = external ? (process.env.HERMES_API_KEY ?? '') : DEMO_KEY;
    console.log(`Hermes: ${external ? `${hermesUrl} (HERMES_URL)` : `built-in demo at ${hermesUrl}`}`);

    const rig = await Rig.start({ zipPath, settings: { hermes_url: hermesUrl, hermes_api_key: apiKey, hermes_timeout_seconds: 120 } });
    console.log(`Engine: app ${rig.appId} installed and enabled in ${rig.loadMs} ms; bot user @${rig.bot.username}\n`);
    const name = (id: string) => rig.server.store.users.get(id)?.username ?? id;
    const show = (room: StoredRoom, m: StoredMessage) =>
        console.log(`[${room.name ? `#${room.name}` : 'DM'}${m.tmid ? ' thread' : ''}] ${name(m.senderId)}: ${m.text.split('\n').join('\n    ')}`);

    try {
        const alice = rig.user('alice');
        const bob = rig.user('bob');
        const general = rig.room('general', [alice, bob, rig.bot]);
        const dm = rig.direct([alice, rig.bot]);

        const turns: Array<[typeof alice, StoredRoom, string, string | undefined]> = [
            [alice, dm, 'Hi Hermes, my name is Alice.', undefined],
            [alice, dm, 'What is my name?', undefined],
            [bob, general, `@${rig.bot.username} what is the status of the release?`, undefined],
        ];
        for (const [who, room, text, tmid] of turns) {
            const started = Date.now();
            const question = await rig.post(who, room, text, { tmid });
            show(room, question);
            const reply = await rig.waitForBotReply(room, { after: question, timeoutMs: 130_000 });
            show(room, reply);
            console.log(`    (${Date.now() - started} ms)\n`);
        }
        const root = await rig.post(alice, general, 'The deploy failed on step 3.');
        show(general, root);
        const inThread = await rig.post(bob, general, `@${rig.bot.username} can you look at this?`, { tmid: root.id });
        show(general, inThread);
        show(general, await rig.waitForBotReply(general, { after: inThread, timeoutMs: 130_000 }));
        await rig.settle();
        console.log('\nApp log (the lines the app wrote, as an admin sees them):');
        console.log(
            rig
                .logText({ appLinesOnly: true })
                .split('\n')
                .map((l) => `  ${l}`)
                .join('\n'),
        );
    } finally {
        await rig.stop();
        await demo?.close();
    }
}

main().catch((error) => {
    console.error(error);
    process.exit(1);
});
