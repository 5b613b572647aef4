import { existsSync } from 'fs';

/** The flags every launch gets: headless in a container, nothing fetched from the network. */
const ARGS = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
];

interface Bundled {
    executablePath(): Promise<string>;
    args: string[];
}

/**
 * The Chromium the browser tests drive: CHROMIUM_PATH, else Debian's (/usr/bin/chromium), else
 * the build that ships inside the `@sparticuz/chromium` npm package (unpacked to the temp dir on
 * first use, a few seconds), so `npm ci && npm test` needs nothing but Node.
 * `HERMES_BUNDLED_CHROMIUM=1` takes the bundled one even where a system Chromium exists.
 */
export async function testChromium(): Promise<{ executablePath: string; args: string[]; source: string }> {
    const system = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    if (process.env.HERMES_BUNDLED_CHROMIUM !== '1' && existsSync(system)) {
        return { executablePath: system, args: ARGS, source: system };
    }
    // An ES module: Node 20.19+ loads it with require (jest hands over its default export itself).
    const loaded = require('@sparticuz/chromium') as Bundled & { default?: Bundled };
    const bundled = loaded.default ?? loaded;
    return { executablePath: await bundled.executablePath(), args: [...new Set([...bundled.args, ...ARGS])], source: '@sparticuz/chromium' };
}
