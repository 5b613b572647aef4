import { createHash } from 'crypto';

/**
 * The transcript id sent as `X-Hermes-Session-Id`. Hermes rejects ids with `/`, `\`, `..`,
 * CR/LF/NUL or a drive-letter start, and Rocket.Chat ids are not secret but keys are long, so
 * the id is a digest of the key and the session generation (bumped by /new): stable across
 * restarts, new after a reset, always path-safe.
 */
export function sessionIdFor(key: string, generation: number): string {
    const digest = createHash('sha256').update(`${key}#${generation}`).digest('hex').slice(0, 32);
    return `rc_${digest}_g${generation}`;
}

/** The rules Hermes applies to a session id it receives (and returns after compression). */
export function isAcceptableSessionId(id: string): boolean {
    return id.length > 0 && id.length <= 256 && !/[\r\n\0/\\]/.test(id) && !id.includes('..') && !/^[A-Za-z]:/.test(id);
}
