import { createHmac } from 'crypto';
import { sign } from 'jsonwebtoken';
import { askerToken, verifyAskerToken } from '../../../src/security/askerToken';
import { checkCaller, MAX_TOKEN_LIFETIME_SECONDS } from '../../../src/security/callerJwt';
import { LogPort, SafeLog } from '../../../src/security/safeLog';

/**
 * Security edges the older tests left open (found by mutation testing, `npm run mutate`):
 * the token signature's alphabet, expiry boundaries, the Authorization header's exact
 * shape, and which secrets the log scrubs.
 */
const KEY = 'k'.repeat(40);
const SECRET = 's'.repeat(40);
const NOW = 1_800_000_000;

describe('asker token signature', () => {
    it('is base64url (never + / or =) for every user, exactly as an independent HMAC computes it', () => {
        for (let i = 0; i < 64; i++) {
            const user = `USER${i}`;
            const payload = `v1.${user}.ROOM1.${NOW + 1800}`;
            const expected = createHmac('sha256', KEY).update(payload).digest('base64url').slice(0, 22);
            const token = askerToken(KEY, user, 'ROOM1', NOW);
            expect(token).toBe(`${payload}.${expected}`);
            expect(token).toMatch(/^[A-Za-z0-9._-]+$/);
            expect(verifyAskerToken(KEY, token, NOW)).toMatchObject({ ok: true, userId: user });
        }
    });

    it('is still good at its expiry second, and not one second later', () => {
        const token = askerToken(KEY, 'USER1', 'ROOM1', NOW);
        expect(verifyAskerToken(KEY, token, NOW + 1800)).toEqual({ ok: true, userId: 'USER1', roomId: 'ROOM1', expires: NOW + 1800 });
        expect(verifyAskerToken(KEY, token, NOW + 1801)).toEqual({ ok: false, reason: 'expired' });
    });

    it('refuses anything around a valid token as malformed', () => {
        const token = askerToken(KEY, 'USER1', 'ROOM1', NOW);
        expect(verifyAskerToken(KEY, `x${token}`, NOW)).toEqual({ ok: false, reason: 'malformed token' });
        expect(verifyAskerToken(KEY, ` ${token}`, NOW)).toEqual({ ok: false, reason: 'malformed token' });
        expect(verifyAskerToken('', token, NOW)).toEqual({ ok: false, reason: 'malformed token' });
    });
});

describe('caller token', () => {
    const jwt = (claims: object, opts: object = {}) => sign(claims, SECRET, { algorithm: 'HS256', audience: 'rocketchat-hermes-app', ...opts });
    const valid = () => jwt({ sub: 'history-tool' }, { expiresIn: 60 });

    it('accepts a short-lived token for our audience, with its subject', () => {
        expect(checkCaller(`Bearer ${valid()}`, SECRET)).toEqual({ ok: true, subject: 'history-tool' });
        expect(checkCaller(`bearer ${valid()}`, SECRET)).toEqual({ ok: true, subject: 'history-tool' });
        expect(checkCaller(`Bearer   ${valid()}`, SECRET)).toEqual({ ok: true, subject: 'history-tool' });
        expect(checkCaller(`Bearer ${jwt({}, { expiresIn: 60 })}`, SECRET)).toEqual({ ok: true, subject: undefined });
    });

    it('reads the clock when no time is given', () => {
        const now = Math.floor(Date.now() / 1000);
        expect(checkCaller(`Bearer ${valid()}`, SECRET)).toMatchObject({ ok: true });
        expect(checkCaller(`Bearer ${jwt({ exp: now - 10 })}`, SECRET)).toMatchObject({ ok: false, status: 401 });
        expect(checkCaller(`Bearer ${jwt({ exp: now - 10 })}`, SECRET, now - 20)).toMatchObject({ ok: true });
    });

    it('refuses an Authorization value that is not exactly "Bearer <token>"', () => {
        const missing = { ok: false, status: 401, reason: 'missing bearer token' };
        expect(checkCaller(`Bearer ${valid()} trailing`, SECRET)).toEqual(missing);
        expect(checkCaller(`xBearer ${valid()}`, SECRET)).toEqual(missing);
        expect(checkCaller(`Bearer${valid()}`, SECRET)).toEqual(missing);
        expect(checkCaller(undefined, SECRET)).toEqual(missing);
        expect(checkCaller('', SECRET)).toEqual(missing);
    });

    it('refuses a token for another audience', () => {
        const other = sign({ sub: 'x' }, SECRET, { algorithm: 'HS256', audience: 'another-service', expiresIn: 60 });
        expect(checkCaller(`Bearer ${other}`, SECRET)).toMatchObject({ ok: false, status: 401 });
        const none = sign({ sub: 'x' }, SECRET, { algorithm: 'HS256', expiresIn: 60 });
        expect(checkCaller(`Bearer ${none}`, SECRET)).toMatchObject({ ok: false, status: 401 });
    });

    it('takes a lifetime of exactly the maximum, and refuses a longer one or none', () => {
        const tooLong = { ok: false, status: 401, reason: `token must expire within ${MAX_TOKEN_LIFETIME_SECONDS} s` };
        expect(checkCaller(`Bearer ${jwt({ exp: NOW + MAX_TOKEN_LIFETIME_SECONDS })}`, SECRET, NOW)).toMatchObject({ ok: true });
        expect(checkCaller(`Bearer ${jwt({ exp: NOW + MAX_TOKEN_LIFETIME_SECONDS + 1 })}`, SECRET, NOW)).toEqual(tooLong);
        expect(checkCaller(`Bearer ${jwt({ exp: NOW + 86_400 })}`, SECRET, NOW)).toEqual(tooLong);
        expect(checkCaller(`Bearer ${jwt({ iat: NOW })}`, SECRET, NOW)).toEqual(tooLong);
    });

    it('says why a token is invalid', () => {
        const wrongKey = sign({}, 'w'.repeat(40), { algorithm: 'HS256', audience: 'rocketchat-hermes-app', expiresIn: 60 });
        expect(checkCaller(`Bearer ${wrongKey}`, SECRET)).toEqual({ ok: false, status: 401, reason: 'invalid token (invalid signature)' });
    });
});

describe('the safe log', () => {
    function capture() {
        const lines: Array<[string, string]> = [];
        const sink: LogPort = {
            debug: (m) => lines.push(['debug', m]),
            info: (m) => lines.push(['info', m]),
            warn: (m) => lines.push(['warn', m]),
            error: (m) => lines.push(['error', m]),
        };
        return { log: new SafeLog(sink), lines };
    }

    it('passes every level on, cleaned, to the same level', () => {
        const { log, lines } = capture();
        log.setSecrets(['topsecret']);
        log.debug('d topsecret');
        log.info('i topsecret');
        log.warn('w topsecret');
        log.error('e topsecret');
        expect(lines).toEqual([
            ['debug', 'd [redacted]'],
            ['info', 'i [redacted]'],
            ['warn', 'w [redacted]'],
            ['error', 'e [redacted]'],
        ]);
    });

    it('scrubs secrets of four characters and more, not shorter ones (they would redact ordinary words)', () => {
        const { log, lines } = capture();
        log.setSecrets([undefined, 'abc', 'wxyz', '']);
        log.info('abc wxyz abcd');
        expect(lines).toEqual([['info', 'abc [redacted] abcd']]);
    });

    it('passes a message through unchanged before any secret is set', () => {
        const { log, lines } = capture();
        log.info('nothing secret here: alice asked in GENERAL');
        expect(lines).toEqual([['info', 'nothing secret here: alice asked in GENERAL']]);
    });

    it('scrubs an Authorization value however many spaces follow the scheme', () => {
        const { log } = capture();
        expect(log.clean('Authorization: Bearer    sk-abc.def')).toBe('Authorization: Bearer [redacted]');
        expect(log.clean('basic\tdXNlcjpwdw==')).toBe('basic [redacted]');
    });
});
