import { readFileSync } from 'fs';
import { join } from 'path';

/** Every language the app ships has every key of English, with the same placeholders (issue 14). */
const dir = join(__dirname, '..', '..', 'i18n');
const load = (lang: string) => JSON.parse(readFileSync(join(dir, `${lang}.json`), 'utf8')) as Record<string, string>;
const placeholders = (s: string) => (s.match(/\{\w+\}/g) ?? []).sort();
const en = load('en');

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
