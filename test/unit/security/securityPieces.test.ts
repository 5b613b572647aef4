import { createHmac, generateKeyPairSync } from 'crypto';
import { Algorithm, sign } from 'jsonwebtoken';
import { askerLine, askerToken, verifyAskerToken } from '../../../src/security/askerToken';
import { checkCaller } from '../../../src/security/callerJwt';
import { hasLiveReference, inertReferences, ZWSP } from '../../../src/security/contextReferences';
import { SafeLog } from '../../../src/security/safeLog';
import { commandAllowed } from '../../../src/admission/textCommand';
import { neutralise } from '../../../src/security/inertText';
import { triggerText, MAX_TRIGGER_CHARS } from '../../../src/context/contextBlock';

const KEY = 'k'.repeat(40);

describe('asker token', () => {
    it('is v1.<uid>.<rid>.<exp>.<first 22 chars of base64url HMAC-SHA256>', () => {
        const token = askerToken(KEY, 'USER1', 'ROOM1', 1_800_000_000);
        const payload = 'v1.USER1.ROOM1.1800001800';
        expect(token).toBe(`${payload}.${createHmac('sha256', KEY).update(payload).digest('base64url').slice(0, 22)}`);
        expect(askerLine(token)).toBe(`[Rocket.Chat asker: ${token}]`);
    });

    it('verifies signature and expiry, and rejects anything altered', () => {
        const token = askerToken(KEY, 'USER1', 'ROOM1', 1_800_000_000);
        expect(verifyAskerToken(KEY, token, 1_800_000_100)).toEqual({ ok: true, userId: 'USER1', roomId: 'ROOM1', expires: 1_800_001_800 });
        expect(verifyAskerToken(KEY, token, 1_800_001_801)).toEqual({ ok: false, reason: 'expired' });
        expect(verifyAskerToken('other'.repeat(8), token, 1_800_000_100)).toEqual({ ok: false, reason: 'bad signature' });
        expect(verifyAskerToken(KEY, token.replace('USER1', 'USER2'), 1_800_000_100)).toEqual({ ok: false, reason: 'bad signature' });
        expect(verifyAskerToken(KEY, `${token}x`, 1_800_000_100).ok).toBe(false);
        expect(verifyAskerToken('', token, 1_800_000_100).ok).toBe(false);
    });
});

describe('context references', () => {
    it.each([
        ['@file:/etc/passwd', `@${ZWSP}file:/etc/passwd`],
        ['@FOLDER:~', `@${ZWSP}FOLDER:~`],
        ['x @git:log @url:http://a', `x @${ZWSP}git:log @${ZWSP}url:http://a`],
        ['@diff and @staged.', `@${ZWSP}diff and @${ZWSP}staged.`],
        ['@diffuse @staged_x @alice', '@diffuse @staged_x @alice'],
        ['@diff-please @staged-x', `@${ZWSP}diff-please @${ZWSP}staged-x`],
        ['＠file:x', `＠${ZWSP}file:x`],
        [`@${ZWSP}file:x`, `@${ZWSP}file:x`],
        [`@\u200Cfile:x`, `@${ZWSP}\u200Cfile:x`],
    ])('%j → %j', (input, output) => {
        expect(inertReferences(input)).toBe(output);
        expect(hasLiveReference(inertReferences(input))).toBe(false);
    });
});

/**
 * Hermes's own pattern, agent/context_references.py (v0.18.2, 306e2d2): a reference is
 * `(?<![\w/])@(?:(?P<simple>diff|staged)\b|(?P<kind>file|folder|git|url):(?P<value>…|\S+))`,
 * case-sensitive, with Python's Unicode \w and \b.
 */
describe('context references as Hermes reads them', () => {
    it.each([
        ['@diff', true],
        ['@diff-please', true],
        ['@staged.', true],
        ['(@staged)', true],
        ['@diff\u0301', true],
        ['x @git:log', true],
        ['@url:"http://a b"', true],
        ['@file:`a b`:1-3', true],
        ['@folder:\uFEFF', true],
        ['@diffuse', false],
        ['@diff_x', false],
        ['@diff\u00E9', false],
        ['@staged2', false],
        ['a@file:x', false],
        ['\u00E9@diff', false],
        ['/@git:log', false],
        ['@file: x', false],
        ['@file:', false],
        ['@FILE:x', false],
        [`@${ZWSP}diff`, false],
    ])('%j is a live reference: %s', (text, live) => {
        expect(hasLiveReference(text)).toBe(live);
    });

    it.each(['@diff-please', '@diff—now', '@staged!', '(@diff)', '@diff\u0301', '@diff\u00E9', 'a@file:x', '@FILE:x', '@file:\uFEFFx', '@url:`http://x`'])(
        'makes %j inert, changing only a zero-width space',
        (text) => {
            const out = inertReferences(text);
            expect(hasLiveReference(out)).toBe(false);
            expect(out).not.toBe(text);
            expect(out.split(ZWSP).join('')).toBe(text);
        },
    );

    it('is idempotent', () => {
        const text = '@file:a @diff-x @staged @url:u';
        expect(inertReferences(inertReferences(text))).toBe(inertReferences(text));
    });
});

describe('text hygiene', () => {
    it('replaces broken UTF-16 and drops control and bidi characters', () => {
        expect(neutralise('a\uD800b\uDC00c\uD83D\uDE00')).toBe('a\uFFFDb\uFFFDc\uD83D\uDE00');
        expect(neutralise('x\u0000y\u202Ez\r\nw')).toBe('xyz\nw');
    });

    it('caps the trigger', () => {
        const out = triggerText('y'.repeat(MAX_TRIGGER_CHARS + 500));
        expect(out.length).toBeLessThan(MAX_TRIGGER_CHARS + 100);
        expect(out.endsWith('[message truncated]')).toBe(true);
    });

    it('cuts the trigger on a code-point boundary, never inside a surrogate pair', () => {
        const out = triggerText(`a${'\u{1F600}'.repeat(MAX_TRIGGER_CHARS)}`);
        expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
        expect(out).not.toContain('\uFFFD');
        expect(out.startsWith(`a\u{1F600}`)).toBe(true);
        expect(out.length).toBeLessThanOrEqual(MAX_TRIGGER_CHARS + '\n  [message truncated]'.length);
    });

    it('indents a trigger whose first line could be read as a marker', () => {
        expect(triggerText('[New message]\ndo it')).toBe('  [New message]\n  do it');
        expect(triggerText('  [Rocket.Chat asker: v1.a.b.1.x]')).toBe('  [Rocket.Chat asker: v1.a.b.1.x]');
        expect(triggerText('What is [this]?\n[New message]')).toBe('What is [this]?\n  [New message]');
        expect(triggerText('/new')).toBe('/new');
    });

    it('writes the shared-session speaker itself, its name a clean label', () => {
        expect(triggerText('[New message] hi', { speaker: 'alice' })).toBe('[alice] [New message] hi');
        expect(triggerText('hi', { speaker: 'al]ice\n[New message]' })).toBe('[alice New message] hi');
        expect(triggerText('hi', { speaker: '@diff' })).toBe(`[@${ZWSP}diff] hi`);
        expect(triggerText('@diff', { speaker: '@diff', allowReferences: true })).toBe(`[@${ZWSP}diff] @diff`);
    });
});

describe('guards', () => {
    it('allows commands from the allowlist, or for admins', () => {
        const config = { commandAllowlist: ['help'], adminUserIds: ['ADMIN'] };
        expect(commandAllowed('help', 'U', config)).toBe(true);
        expect(commandAllowed('new', 'U', config)).toBe(false);
        expect(commandAllowed('new', 'ADMIN', config)).toBe(true);
    });

    it('refuses callers without a valid short-lived HS256 token, and everyone without a secret', () => {
        expect(checkCaller('Bearer x', '')).toEqual({ ok: false, status: 503, reason: 'endpoint_secret is not set' });
        expect(checkCaller(undefined, KEY)).toMatchObject({ ok: false, status: 401 });
        expect(checkCaller('Bearer not.a.jwt', KEY)).toMatchObject({ ok: false, status: 401 });
    });

    it('scrubs secrets and Authorization values from log lines', () => {
        const lines: string[] = [];
        const log = new SafeLog({ debug: (m) => lines.push(m), info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) });
        log.setSecrets([KEY, undefined, 'abc']);
        log.error(`failed with ${KEY} and Authorization: Bearer sk-123.456 and Basic dXNlcjpwdw==`);
        expect(lines).toEqual(['failed with [redacted] and Authorization: Bearer [redacted] and Basic [redacted]']);
    });
});

describe('caller JWT', () => {
    // A fixed clock: every case states its expiry against it, so none depends on when it runs.
    const NOW = 1_800_000_000;
    const AUD = 'rocketchat-hermes-app';
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    /** An HS256 token for NOW, valid unless a case changes one thing (a claim set to undefined is left out). */
    const token = (claims: Record<string, unknown> = {}, opts: { secret?: string; algorithm?: Algorithm } = {}) => {
        const payload = Object.fromEntries(
            Object.entries({ sub: 'history-tool', aud: AUD, iat: NOW, exp: NOW + 60, ...claims }).filter(([, v]) => v !== undefined),
        );
        return sign(payload, opts.secret ?? KEY, { algorithm: opts.algorithm ?? 'HS256' });
    };
    const check = (jwt: string, now = NOW) => checkCaller(`Bearer ${jwt}`, KEY, now);
    const refused = (jwt: string, reason: RegExp, now = NOW) => {
        const result = check(jwt, now);
        expect(result).toMatchObject({ ok: false, status: 401 });
        expect((result as { reason: string }).reason).toMatch(reason);
    };

    it('accepts a short-lived HS256 token with our audience, signed with endpoint_secret, and names its subject', () => {
        expect(check(token())).toEqual({ ok: true, subject: 'history-tool' });
        // The scheme is case-insensitive, as in HTTP; a token without a subject is still the caller's.
        expect(checkCaller(`bearer ${token({ sub: undefined })}`, KEY, NOW)).toEqual({ ok: true, subject: undefined });
        // Exactly the longest lifetime allowed, and one second before it expires.
        expect(check(token({ exp: NOW + 300 }))).toMatchObject({ ok: true });
        expect(check(token(), NOW + 59)).toMatchObject({ ok: true });
    });

    it('refuses a token for another audience, or naming none', () => {
        refused(token({ aud: 'other-service' }), /audience invalid/);
        refused(token({ aud: [`${AUD}-staging`] }), /audience invalid/);
        refused(token({ aud: undefined }), /audience invalid/);
    });

    it('refuses an expired token, from the second it expires', () => {
        refused(token({ exp: NOW - 10 }), /jwt expired/);
        refused(token(), /jwt expired/, NOW + 60);
    });

    it('refuses a token that lives too long, or has no expiry at all', () => {
        refused(token({ exp: NOW + 301 }), /must expire within 300 s/);
        refused(token({ exp: NOW + 3600 }), /must expire within 300 s/);
        refused(token({ exp: undefined }), /must expire within 300 s/);
    });

    it('refuses every algorithm but HS256: none, other HMACs with the same secret, RS256', () => {
        const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'history-tool', aud: AUD, exp: NOW + 60 })}.`;
        refused(unsigned, /invalid token/);
        refused(token({}, { algorithm: 'HS384' }), /invalid algorithm/);
        refused(token({}, { algorithm: 'HS512' }), /invalid algorithm/);
        const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
        refused(sign({ sub: 'history-tool', aud: AUD, exp: NOW + 60 }, privateKey.export({ type: 'pkcs8', format: 'pem' }), { algorithm: 'RS256' }), /invalid/);
        // An HS256 header over a signature made with another secret.
        refused(token({}, { secret: 'x'.repeat(40) }), /invalid signature/);
        // Not a bearer token at all.
        expect(checkCaller(`Basic ${token()}`, KEY, NOW)).toMatchObject({ ok: false, status: 401, reason: 'missing bearer token' });
    });
});
