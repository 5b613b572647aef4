import { verify } from '../generated/jsonwebtokenBundle';

/** The audience every caller token must name, so a token minted for another service is useless here. */
const ENDPOINT_AUDIENCE = 'rocketchat-hermes-app';

/** The longest lifetime a caller token may claim: a leaked token is short-lived. */
export const MAX_TOKEN_LIFETIME_SECONDS = 300;

export type CallerCheck = { ok: true; subject?: string } | { ok: false; status: 401 | 503; reason: string };

/**
 * Checks the `Authorization: Bearer <jwt>` of an endpoint call: HS256 only (no `none`, no
 * algorithm switching), signed with `endpoint_secret`, our audience, an expiry no further out
 * than five minutes. Without a configured secret every call is refused with 503.
 */
export function checkCaller(authorization: string | undefined, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): CallerCheck {
    if (!secret) {
        return { ok: false, status: 503, reason: 'endpoint_secret is not set' };
    }
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!match) {
        return { ok: false, status: 401, reason: 'missing bearer token' };
    }
    try {
        const claims = verify(match[1], secret, { algorithms: ['HS256'], audience: ENDPOINT_AUDIENCE, clockTimestamp: nowSeconds }) as {
            exp?: number;
            sub?: unknown;
        };
        if (typeof claims.exp !== 'number' || claims.exp - nowSeconds > MAX_TOKEN_LIFETIME_SECONDS) {
            return { ok: false, status: 401, reason: `token must expire within ${MAX_TOKEN_LIFETIME_SECONDS} s` };
        }
        return { ok: true, subject: typeof claims.sub === 'string' ? claims.sub : undefined };
    } catch (error) {
        return { ok: false, status: 401, reason: `invalid token (${error instanceof Error ? error.message : 'unknown'})` };
    }
}
