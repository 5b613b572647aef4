import { createHash, timingSafeEqual } from 'crypto';

/**
 * `Authorization: Bearer <secret>` against the configured secret, in constant time: both sides
 * are hashed first, so neither the secret's length nor its first differing byte shows in the time.
 */
export function bearerMatches(authorization: string | undefined, secret: string): boolean {
    const match = /^Bearer (\S+)$/.exec(authorization ?? '');
    if (!match || !secret) {
        return false;
    }
    const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
    return timingSafeEqual(digest(match[1]), digest(secret));
}
