import catalog from '../generated/enCatalog';

export type MessageKey = keyof typeof catalog;

/**
 * User-visible text comes from i18n/en.json, the same file the admin UI reads, so every
 * string a person sees is in one reviewable place. `{name}` placeholders are filled in.
 */
export function t(key: MessageKey, params: Record<string, string | number> = {}): string {
    const template: string = catalog[key];
    return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
