import { readFileSync } from 'fs';

/**
 * Which real Hermes the real-server tests talk to: HERMES_REAL_URL (default the test set-up's
 * http://127.0.0.1:8642) and its key, HERMES_REAL_KEY or the file HERMES_REAL_KEY_FILE names.
 * Without a key the run stops at once with what to set, rather than skipping silently.
 */
export function realHermesTarget(env: NodeJS.ProcessEnv = process.env): { url: string; key: string } {
    const url = env.HERMES_REAL_URL ?? 'http://127.0.0.1:8642';
    const key = env.HERMES_REAL_KEY ?? (env.HERMES_REAL_KEY_FILE ? readFileSync(env.HERMES_REAL_KEY_FILE, 'utf8').trim() : '');
    if (!key) {
        throw new Error('Set HERMES_REAL_KEY (or HERMES_REAL_KEY_FILE) to the API_SERVER_KEY of the real Hermes at ' + url);
    }
    return { url, key };
}
