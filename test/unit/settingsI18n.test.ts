import catalog from '../../i18n/en.json';
import { DEFAULT_OPTIONS, parseConfig } from '../../src/settings/config';
import { SETTINGS } from '../../src/settings/definitions';

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
