import { readFileSync } from 'fs';
import { join } from 'path';
import { languageOf, preferenceOf, renderFor, translator, useServerLanguage } from '../../../src/i18n/messages';

/** Every language the app ships has every key of English, with the same placeholders (issue 14). */
const dir = join(__dirname, '..', '..', '..', 'i18n');
const load = (lang: string) => JSON.parse(readFileSync(join(dir, `${lang}.json`), 'utf8')) as Record<string, string>;
const placeholders = (s: string) => (s.match(/\{\w+\}/g) ?? []).sort();
const en = load('en');
const others: Record<string, Record<string, string>> = { de: load('de'), es: load('es'), fr: load('fr') };

describe.each(['de', 'es', 'fr', 'pt-BR'])('i18n/%s.json', (lang) => {
    const other = load(lang);

    it('has exactly the English keys', () => {
        expect(Object.keys(other).sort()).toEqual(Object.keys(en).sort());
    });

    it('keeps every placeholder of each English string, and every code span of a command', () => {
        const wrong = Object.keys(en).filter((k) => JSON.stringify(placeholders(en[k])) !== JSON.stringify(placeholders(other[k] ?? '')));
        expect(wrong).toEqual([]);
        const empty = Object.keys(en).filter((k) => !(other[k] ?? '').trim());
        expect(empty).toEqual([]);
    });
});

describe('the reader’s language', () => {
    afterEach(() => useServerLanguage('en'));

    it('maps a Rocket.Chat language code to a catalog the app ships, or to none', () => {
        expect([languageOf('de-AT'), languageOf('pt'), languageOf('pt_PT'), languageOf('EN-us'), languageOf('ja'), languageOf(''), languageOf(7)]).toEqual([
            'de',
            'pt-BR',
            'pt-BR',
            'en',
            undefined,
            undefined,
            undefined,
        ]);
    });

    it('binds a translator to the preference, falling back to the server language, then English', () => {
        useServerLanguage('es');
        expect(translator('fr')('command_new')).toBe(others.fr.command_new);
        expect(translator('ja')('command_new')).toBe(others.es.command_new);
        expect(translator(undefined)('command_new')).toBe(others.es.command_new);
        expect(translator('en')('command_new')).toBe(en.command_new);
        useServerLanguage('xx');
        expect(translator('ja')('command_new')).toBe(en.command_new);
    });

    it('renders personal text in the reader’s language where it is delivered', () => {
        expect(renderFor((tr) => tr('command_new'), 'de')).toBe(others.de.command_new);
        expect(renderFor('as is', 'de')).toBe('as is');
        expect(preferenceOf({ settings: { preferences: { language: 'fr' } } })).toBe('fr');
        expect(preferenceOf({ settings: { preferences: {} } })).toBeUndefined();
        expect(preferenceOf(undefined)).toBeUndefined();
    });
});
