import { DEFAULT_OPTIONS, parseConfig, splitList } from '../../../src/settings/config';
import { ConfigHolder } from '../../../src/settings/configHolder';

const KEY = 'k'.repeat(32);
const good = { hermes_url: 'http://127.0.0.1:8642/', hermes_api_key: KEY, hermes_timeout_seconds: 120, allowed_user_ids: '', endpoint_secret: '' };

describe('settings parsed once into a typed config', () => {
    it('parses a valid set, trimming the URL', () => {
        expect(parseConfig(good)).toEqual({ ok: true, config: { ...DEFAULT_OPTIONS, hermesUrl: 'http://127.0.0.1:8642', hermesApiKey: KEY } });
    });

    it('splits the allowlist on commas, spaces and new lines', () => {
        expect(splitList(' aaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbb\nccccccccccccccccc ,, aaaaaaaaaaaaaaaaa')).toEqual([
            'aaaaaaaaaaaaaaaaa',
            'bbbbbbbbbbbbbbbbb',
            'ccccccccccccccccc',
        ]);
    });

    it.each([
        [{ hermes_url: '' }, 'hermes_url is empty'],
        [{ hermes_url: 'ftp://x' }, 'hermes_url must be http:// or https://'],
        [{ hermes_url: 'http://user:pw@host' }, 'hermes_url must not carry credentials'],
        [{ hermes_api_key: 'short' }, 'hermes_api_key is missing or shorter'],
        [{ hermes_timeout_seconds: 1 }, 'hermes_timeout_seconds must be at least 5'],
        [{ allowed_user_ids: 'aaaaaaaaaaaaaaaaa, @alice' }, 'allowed_user_ids (entry 2) must be a Rocket.Chat user ID'],
        [{ timezone: 'Mars/Olympus' }, 'timezone is not an IANA time zone name'],
        [{ history_max_messages: 0 }, 'history_max_messages must be at least 1'],
        [{ history_min_messages: 60, history_max_messages: 50 }, 'history_min_messages must not exceed history_max_messages'],
        [{ dm_seed_messages: -1 }, 'dm_seed_messages must be at least 0'],
    ])('reports %j by setting id', (patch, problem) => {
        const result = parseConfig({ ...good, ...patch });
        expect(result.ok).toBe(false);
        expect(result.ok ? [] : result.problems.join('; ')).toContain(problem);
    });

    it('reads the conversation options', () => {
        const result = parseConfig({
            ...good,
            ignore_senders: '@otherbot, XYZid000000000000',
            timezone: 'Europe/Berlin',
            history_min_messages: '5',
            thread_sessions_per_user: true,
        });
        expect(result).toMatchObject({
            ok: true,
            config: { ignoreSenders: ['otherbot', 'XYZid000000000000'], timezone: 'Europe/Berlin', historyMinMessages: 5, threadSessionsPerUser: true },
        });
    });

    it('never echoes the API key in a problem', () => {
        const secret = 'secret-but-short';
        const result = parseConfig({ ...good, hermes_api_key: secret.slice(0, 10), hermes_url: `http://x/${secret}` });
        expect(JSON.stringify(result)).not.toContain(secret.slice(0, 10));
    });
});

describe('ConfigHolder', () => {
    it('keeps the last good config when a change is invalid, so an allowlist typo cannot open the bot', () => {
        const holder = new ConfigHolder();
        expect(holder.apply({ ...good, allowed_user_ids: 'aaaaaaaaaaaaaaaaa' }).kind).toBe('applied');
        const update = holder.apply({ ...good, allowed_user_ids: 'alice' });
        expect(update.kind).toBe('kept-last-good');
        expect(holder.get()?.allowedUserIds).toEqual(['aaaaaaaaaaaaaaaaa']);
    });

    it('has no config (and refuses) until one is valid', () => {
        const holder = new ConfigHolder();
        expect(holder.apply({ ...good, hermes_url: '' }).kind).toBe('unusable');
        expect(holder.get()).toBeUndefined();
    });
});
