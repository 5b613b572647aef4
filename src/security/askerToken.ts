import { createHmac, timingSafeEqual } from 'crypto';

/** How long a token is good for: it is reissued every turn. */
const ASKER_TOKEN_TTL_SECONDS = 30 * 60;

/** The first 22 characters of base64url(HMAC-SHA256(key, payload)), no padding. */
function signature(key: string, payload: string): string {
    return createHmac('sha256', key).update(payload).digest('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '').slice(0, 22);
}

/** `v1.<user id>.<room id>.<expiry>.<signature>`: who addressed the bot, and where. */
export function askerToken(key: string, userId: string, roomId: string, nowSeconds: number): string {
    const payload = `v1.${userId}.${roomId}.${nowSeconds + ASKER_TOKEN_TTL_SECONDS}`;
    return `${payload}.${signature(key, payload)}`;
}

/** The line a turn carries right after the room-id line; the key itself never reaches Hermes. */
export function askerLine(token: string): string {
    return `[Rocket.Chat asker: ${token}]`;
}

export type AskerCheck = { ok: true; userId: string; roomId: string; expires: number } | { ok: false; reason: string };

/** Verifies a token: shape, signature (constant-time), expiry. */
export function verifyAskerToken(key: string, token: string, nowSeconds: number): AskerCheck {
    const m = /^v1\.([A-Za-z0-9]{1,64})\.([A-Za-z0-9]{1,64})\.(\d{9,12})\.([A-Za-z0-9_-]{22})$/.exec(token);
    if (!key || !m) {
        return { ok: false, reason: 'malformed token' };
    }
    const [, userId, roomId, exp, given] = m;
    const expected = signature(key, `v1.${userId}.${roomId}.${exp}`);
    if (!timingSafeEqual(Buffer.from(expected), Buffer.from(given))) {
        return { ok: false, reason: 'bad signature' };
    }
    if (Number(exp) < nowSeconds) {
        return { ok: false, reason: 'expired' };
    }
    return { ok: true, userId, roomId, expires: Number(exp) };
}
