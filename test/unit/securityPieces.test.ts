import { createHmac } from 'crypto';
import { askerLine, askerToken, verifyAskerToken } from '../../src/security/askerToken';
import { checkCaller } from '../../src/security/callerJwt';
import { hasLiveReference, inertReferences, ZWSP } from '../../src/security/contextReferences';
import { SafeLog } from '../../src/security/safeLog';
import { commandAllowed } from '../../src/commands/textCommand';
import { roomAllowed } from '../../src/endpoints/historyRequest';
import { neutralise } from '../../src/context/renderLine';
import { triggerText, MAX_TRIGGER_CHARS } from '../../src/context/contextBlock';

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
        ['@diffuse @staged-x @alice', '@diffuse @staged-x @alice'],
        ['＠file:x', `＠${ZWSP}file:x`],
        [`@${ZWSP}file:x`, `@${ZWSP}${ZWSP}file:x`],
    ])('%j → %j', (input, output) => {
        expect(inertReferences(input)).toBe(output);
        expect(hasLiveReference(inertReferences(input))).toBe(false);
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
});

describe('guards', () => {
    it('allows commands from the allowlist, or for admins', () => {
        const config = { commandAllowlist: ['help'], adminUserIds: ['ADMIN'] };
        expect(commandAllowed('help', 'U', config)).toBe(true);
        expect(commandAllowed('new', 'U', config)).toBe(false);
        expect(commandAllowed('new', 'ADMIN', config)).toBe(true);
    });

    it('lets the history tool read only rooms both the asker and the bot are in', () => {
        expect(roomAllowed('R', ['R', 'S'], ['R'])).toBe(true);
        expect(roomAllowed('S', ['R', 'S'], ['R'])).toBe(false);
        expect(roomAllowed('R', ['S'], ['R'])).toBe(false);
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
