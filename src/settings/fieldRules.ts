import { z } from '../generated/zodBundle';
import { URL } from 'url';

// Rocket.Chat user ids are 17-char Meteor ids (or longer random ids for some imports): letters and digits only.
// A value with '@' or spaces is a username or an email pasted by mistake: refuse it instead of matching nobody.
export const userId = z.string().regex(/^[A-Za-z0-9]{8,64}$/, 'must be a Rocket.Chat user ID (letters and digits), not a username');

function tryUrl(value: string): URL | undefined {
    try {
        return new URL(value);
    } catch {
        return undefined;
    }
}

/** Room IDs: 17 letters and digits as Rocket.Chat generates them, or a fixed id such as `GENERAL`. */
export const roomId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a Rocket.Chat room ID, not a room name');

export const hermesUrl = z
    .string()
    .trim()
    .superRefine((value, ctx) => {
        const problem = (message: string) => ctx.addIssue({ code: z.ZodIssueCode.custom, message });
        if (value.length === 0) {
            return problem('is empty: set the base URL of the Hermes api_server, for example http://127.0.0.1:8642');
        }
        const url = tryUrl(value);
        if (!url) {
            return problem('is not a URL');
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') {
            return problem('must be http:// or https://');
        }
        if (url.username || url.password) {
            return problem('must not carry credentials; use the API key setting');
        }
        if (url.search || url.hash) {
            return problem('must be a base URL without ?query or #fragment');
        }
    })
    .transform((u) => u.replace(/\/+$/, ''));

export const timezone = z
    .string()
    .trim()
    .transform((tz) => (tz === '' ? 'UTC' : tz))
    .refine((tz) => {
        try {
            new Intl.DateTimeFormat('en-US', { timeZone: tz });
            return true;
        } catch {
            return false;
        }
    }, 'is not an IANA time zone name (for example Europe/Berlin or UTC)');
