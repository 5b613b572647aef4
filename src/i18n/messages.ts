import catalog from '../generated/enCatalog';
import others from '../generated/catalogs';

export type MessageKey = keyof typeof catalog;
export type Params = Record<string, string | number>;
/** `t`, bound to one language: what code that writes to one person is handed (see `translator`). */
export type Translate = (key: MessageKey, params?: Params) => string;

/** The language the bot writes in rooms: the server's `Language` setting, where the app has a translation. */
let language = 'en';

/** `de`, `de-DE` → `de`; `pt`, `pt-BR` → `pt-BR`; anything without a translation → undefined. */
export function languageOf(code: unknown): string | undefined {
    const c = typeof code === 'string' ? code.trim() : '';
    const base = c.split(/[-_]/)[0].toLowerCase();
    return base === 'pt' ? 'pt-BR' : base === 'en' ? 'en' : others[base] ? base : undefined;
}

export function useServerLanguage(code: unknown): void {
    language = languageOf(code) ?? 'en';
}

/**
 * User-visible text comes from i18n/<language>.json, the same files the admin UI reads, so every
 * string a person sees is in one reviewable place. `{name}` placeholders are filled in.
 * Without `lang`: the server's language (what rooms read).
 */
export function t(key: MessageKey, params: Params = {}, lang?: string): string {
    const l = lang ?? language;
    const template: string = (l !== 'en' ? others[l]?.[key] : undefined) ?? catalog[key];
    return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/**
 * `t` in one person's language (their Rocket.Chat preference, `user.settings.preferences.language`),
 * falling back to the server's, then English: for what only that person sees (private answers,
 * notices, command replies). Bound explicitly and passed down, never a process-wide switch: the
 * app's process serves many people at once and a switch would leak across awaits.
 */
export function translator(preference?: string): Translate {
    const lang = languageOf(preference);
    return (key, params) => t(key, params, lang);
}

/** A user's language preference as the engine hands it (absent on older servers and for users without one). */
export function preferenceOf(user: unknown): string | undefined {
    const pref = (user as { settings?: { preferences?: { language?: unknown } } } | undefined)?.settings?.preferences?.language;
    return typeof pref === 'string' && pref ? pref : undefined;
}

/** Text for one person, rendered in their language where it is delivered (the adapter that already reads the user). */
export type PersonalText = string | ((t: Translate) => string);

export function renderFor(text: PersonalText, preference?: string): string {
    return typeof text === 'function' ? text(translator(preference)) : text;
}
