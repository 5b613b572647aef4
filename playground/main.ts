/**
 * `npm start`'s web playground (scripts/start.mjs builds the package and runs this bundled):
 * the packaged app in the real Apps-Engine on the in-memory Rocket.Chat, Hermes (the demo, or
 * HERMES_URL), and the page on http://127.0.0.1:3000 (`--port N` or PORT). Ctrl-C stops it all.
 */
import { startPlaygroundHermes } from './demo';
import { startPlayground } from './server';

function portFromArgs(argv: string[], env: NodeJS.ProcessEnv): number {
    const at = argv.indexOf('--port');
    const raw = at >= 0 ? argv[at + 1] : (argv.find((a) => a.startsWith('--port='))?.slice('--port='.length) ?? env.PORT ?? '3000');
    const port = Number(raw);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new Error(`not a port: ${raw}`);
    }
    return port;
}

async function main(): Promise<void> {
    const [zipPath, ...args] = process.argv.slice(2);
    const port = portFromArgs(args, process.env);
    const hermes = await startPlaygroundHermes();
    const playground = await startPlayground({ zipPath, hermes, port, host: process.env.HOST ?? '127.0.0.1' }).catch(async (error: NodeJS.ErrnoException) => {
        await hermes.close();
        throw error.code === 'EADDRINUSE' ? new Error(`port ${port} is in use: choose another with --port N or PORT=N`) : error;
    });
    console.log(`Hermes: ${hermes.label}`);
    console.log(`Engine: app ${playground.rig.appId} enabled in ${playground.rig.loadMs} ms; bot user @${playground.rig.bot.username}`);
    console.log(`\nPlayground: ${playground.url}   (Ctrl-C stops it)\n`);
    let stopping = 0;
    const stop = () => {
        // Ctrl-C arrives twice (from the terminal and from start.mjs): a second one only forces the exit after a while.
        if (stopping) {
            if (Date.now() - stopping > 3000) {
                process.exit(1);
            }
            return;
        }
        stopping = Date.now();
        console.log('\nStopping…');
        // Ctrl-C also reached the engine's Deno process; calls to it then wait out the engine's 30 s
        // timeout. Give the orderly stop 3 s: on exit the Deno process loses its stdin and ends too.
        const deadline = new Promise((done) => setTimeout(done, 3000).unref());
        void Promise.race([Promise.all([playground.close(), hermes.close()]), deadline]).finally(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
}

main().catch((error) => {
    console.error(error);
    process.exit(1);
});
