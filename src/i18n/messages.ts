import catalog from '../generated/enCatalog';
import others from '../generated/catalogs';

export type MessageKey = keyof typeof catalog;

/** The language the bot writes in: the server's `Language` setting, where the app has a translation. */
let language = 'en';

/** `de`, `de-DE` → `de`; `pt`, `pt-BR` → `pt-BR`; anything without a translation → English. */
export function useServerLanguage(code: unknown): void {
    const c = typeof code === 'string' ? code.trim() : '';
    const base = c.split(/[-_]/)[0].toLowerCase();
    language = base === 'pt' ? 'pt-BR' : others[base] ? base : 'en';
}

/**
 * User-visible text comes from i18n/<language>.json, the same files the admin UI reads, so every
 * string a person sees is in one reviewable place. `{name}` placeholders are filled in.
 */
export function t(key: MessageKey, params: Record<string, string | number> = {}): string {
    const template: string = (language !== 'en' ? others[language]?.[key] : undefined) ?? catalog[key];
    return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
