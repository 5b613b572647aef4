import catalog from '../../../i18n/en.json';
import { DEFAULT_OPTIONS, parseConfig } from '../../../src/settings/config';
import { SETTING_TABLE, SETTINGS } from '../../../src/settings/definitions';

describe('settings declarations', () => {
    it('have a label and a description in i18n/en.json', () => {
        for (const s of SETTINGS) {
            expect(catalog).toHaveProperty(s.i18nLabel);
            expect(catalog).toHaveProperty(s.i18nDescription as string);
        }
    });

    it('parse their own defaults into the documented defaults', () => {
        const raw = Object.fromEntries(SETTINGS.map((s) => [s.id, s.packageValue]));
        const parsed = parseConfig({ ...raw, hermes_url: 'http://127.0.0.1:8642', hermes_api_key: 'k'.repeat(16) });
        expect(parsed).toEqual({ ok: true, config: { ...DEFAULT_OPTIONS, hermesUrl: 'http://127.0.0.1:8642', hermesApiKey: 'k'.repeat(16) } });
    });
});

describe('settings declared once (issue 9)', () => {
    const fields = Object.keys(SETTING_TABLE) as Array<keyof typeof SETTING_TABLE>;

    it('the admin form, the parser and the parsed config all come from the one table', () => {
        expect(SETTINGS.map((s) => s.id)).toEqual(fields.map((f) => SETTING_TABLE[f].id));
        const parsed = parseConfig({ hermes_url: 'http://127.0.0.1:8642', hermes_api_key: 'k'.repeat(16) });
        expect(parsed.ok && Object.keys(parsed.config).sort()).toEqual([...fields].sort());
        expect(new Set(SETTINGS.map((s) => s.id)).size).toBe(SETTINGS.length);
    });

    it('every setting is parsed from its own id: a bad value of each is reported under that id', () => {
        const bad: Record<string, unknown> = { number: 'x', boolean: 'yes', select: 'nope', list: '@@ not-valid', string: 42, password: 'short' };
        for (const f of fields) {
            const entry = SETTING_TABLE[f];
            const value = f === 'ignoreSenders' ? undefined : f === 'timezone' ? 'Not/AZone' : f === 'hermesUrl' ? 'ftp://x' : bad[entry.type];
            if (value === undefined || (entry.type === 'string' && f !== 'timezone' && f !== 'hermesUrl')) {
                continue;
            }
            const result = parseConfig({ hermes_url: 'http://127.0.0.1:8642', hermes_api_key: 'k'.repeat(16), [entry.id]: value });
            expect({ id: entry.id, problems: [...new Set(result.ok ? [] : result.problems.map((p) => p.split(' ')[0]))] }).toEqual({
                id: entry.id,
                problems: [entry.id],
            });
        }
    });

    it('each choice of a select setting has its label', () => {
        for (const s of SETTINGS.filter((x) => x.values)) {
            for (const v of s.values ?? []) {
                expect(catalog).toHaveProperty(v.i18nLabel);
            }
        }
    });
});
