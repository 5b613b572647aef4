/**
 * The Hermes behind the playground: the built-in demo (the fake Hermes the tests use, tuned so
 * each keyword shows one thing on the page) or a real one at HERMES_URL with HERMES_API_KEY.
 */
import { startFakeHermes } from '../fake-hermes';

export interface PlaygroundHermes {
    url: string;
    apiKey: string;
    /** What the page says it talks to. */
    label: string;
    /** The demo keywords and what each shows; empty for a real Hermes. */
    keywords: Array<{ word: string; shows: string }>;
    close(): Promise<void>;
}

const DEMO_KEY = 'playground-demo-key-0123456789';

const KEYWORDS = [
    { word: 'DANGER', shows: 'Hermes asks to run `rm -rf`: approve or deny it with the buttons' },
    { word: 'RUN_TOOL', shows: 'a tool runs for a few seconds: the status message shows it' },
    { word: 'SLOW', shows: 'a slow answer: stop it with `/hermes stop` or the Hermes panel' },
    { word: 'FAIL', shows: 'Hermes answers 500: the bot posts a notice' },
];

/** The last line of what the app handed Hermes: the person's words, after the context the app puts first. */
function lastUserLine(body: unknown): string {
    const json = (body ?? {}) as { input?: unknown; messages?: Array<{ role?: string; content?: unknown }> };
    const content = json.input ?? [...(json.messages ?? [])].reverse().find((m) => m.role === 'user')?.content;
    const text = typeof content === 'string' ? content : JSON.stringify(content ?? '');
    return text.trim().split('\n').pop() ?? '';
}

export async function startPlaygroundHermes(env: NodeJS.ProcessEnv = process.env): Promise<PlaygroundHermes> {
    if (env.HERMES_URL) {
        return { url: env.HERMES_URL, apiKey: env.HERMES_API_KEY ?? '', label: `Hermes at ${env.HERMES_URL}`, keywords: [], close: async () => undefined };
    }
    // Slow enough to watch and to stop (30 words, 0.3 s apart), a tool that takes 3 s.
    // Keywords count in the person's own words only, not in the channel history the app sends along.
    const hermes = await startFakeHermes({ apiKey: DEMO_KEY, slowIntervalMs: 300, toolRunMs: 3000, keywordsOnLastLine: true });
    // FAIL: Hermes's own 500 envelope, on both transports, every time the keyword is asked.
    hermes.script({
        method: 'POST',
        path: /^\/v1\/(runs|chat\/completions)$/,
        bodyMatch: (json) => lastUserLine(json).includes('FAIL'),
        error: 'internal_error',
        always: true,
    });
    // Plain questions get a short Markdown answer (the keywords fall through to the scripted model).
    hermes.setReply((message, ctx) => {
        const line = message.trim().split('\n').pop() ?? '';
        if (KEYWORDS.some((k) => line.includes(k.word))) {
            return undefined;
        }
        return [
            `**Demo Hermes** heard: _${line.replace(/[_*~`]/g, '')}_`,
            `• turn ${ctx.userTurns} of this session${ctx.prev ? `; the one before: “${(ctx.prev.split('\n').pop() ?? '').slice(0, 80)}”` : ''}`,
        ].join('\n');
    });
    return { url: hermes.url, apiKey: DEMO_KEY, label: 'the built-in demo Hermes', keywords: KEYWORDS, close: () => hermes.close() };
}
