/**
 * Python `json.dumps(value)` output, byte for byte.
 *
 * Hermes is an aiohttp server: every body it sends comes from `json.dumps` with
 * the default settings, so the wire format differs from `JSON.stringify`:
 * - separators are `", "` and `": "`;
 * - `ensure_ascii=True`: every character outside printable ASCII (0x20-0x7E) is
 *   written as a lower-case `\uXXXX` escape; characters beyond the BMP become a
 *   surrogate pair ("\ud83d\udcbb"), which is exactly how a JS string stores them;
 * - floats are printed with Python's `repr`: `3.0` stays `3.0`, tiny and huge
 *   values use `1e-05` / `1e+16` notation.
 *
 * JS has one number type, so a value that Python holds as a float but that
 * happens to be integral (a timestamp of exactly `1796064475.0`, a duration of
 * `0.0`) must be wrapped in `pyFloat()` to print with the trailing `.0`.
 * Non-integral JS numbers always print as floats, integral ones as ints.
 *
 * Key order is JS insertion order, which matches Python dict order except for
 * integer-like keys ("1", "2") that JS moves to the front: use a `Map` when
 * such keys matter.
 */

/** A number that Python holds as a float (prints `1.0`, not `1`). */
export class PyFloat {
    constructor(readonly value: number) {}
    toJSON(): number {
        return this.value;
    }
}

export function pyFloat(value: number): PyFloat {
    return new PyFloat(value);
}

/** Python `repr(float)`. */
function pyFloatRepr(x: number): string {
    if (Number.isNaN(x)) return 'NaN';
    if (x === Infinity) return 'Infinity';
    if (x === -Infinity) return '-Infinity';
    if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
    const abs = Math.abs(x);
    if (abs >= 1e16 || abs < 1e-4) {
        // Python switches to exponent notation outside [1e-4, 1e16) and always
        // writes at least two exponent digits; JS's shortest digits are the same.
        const [mantissa, exponent] = x.toExponential().split('e');
        const sign = exponent.startsWith('-') ? '-' : '+';
        const digits = exponent.replace(/^[+-]/, '').padStart(2, '0');
        return `${mantissa}e${sign}${digits}`;
    }
    const s = String(x);
    return Number.isInteger(x) ? `${s}.0` : s;
}

// Everything json.dumps escapes with ensure_ascii=True: quote, backslash, and
// anything that is not printable ASCII.
const ESCAPE_RE = /["\\\u0000-\u001f\u007f-\uffff]/g;
const SHORT_ESCAPES: Record<string, string> = {
    '"': '\\"',
    '\\': '\\\\',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\b': '\\b',
    '\f': '\\f',
};

function pyString(s: string): string {
    return '"' + s.replace(ESCAPE_RE, (ch) => SHORT_ESCAPES[ch] ?? '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0')) + '"';
}

function pyNumber(n: number): string {
    if (Number.isInteger(n)) {
        // Python ints never use exponent notation.
        return Math.abs(n) >= 1e21 ? BigInt(n).toString() : String(n);
    }
    return pyFloatRepr(n);
}

/** Serialise like Python's `json.dumps(value)` with default arguments. */
export function pyJson(value: unknown): string {
    if (value === null || value === undefined) return 'null';
    if (value instanceof PyFloat) return pyFloatRepr(value.value);
    switch (typeof value) {
        case 'string':
            return pyString(value);
        case 'number':
            return pyNumber(value);
        case 'bigint':
            return value.toString();
        case 'boolean':
            return value ? 'true' : 'false';
        case 'function':
        case 'symbol':
            return 'null';
        default:
            break;
    }
    if (Array.isArray(value)) {
        return '[' + value.map((item) => pyJson(item)).join(', ') + ']';
    }
    if (value instanceof Map) {
        const parts: string[] = [];
        for (const [k, v] of value) parts.push(`${pyString(String(k))}: ${pyJson(v)}`);
        return '{' + parts.join(', ') + '}';
    }
    const maybeJson = value as { toJSON?: () => unknown };
    if (typeof maybeJson.toJSON === 'function') return pyJson(maybeJson.toJSON());
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (v === undefined) continue; // Python has no undefined; drop like JSON.stringify
        parts.push(`${pyString(k)}: ${pyJson(v)}`);
    }
    return '{' + parts.join(', ') + '}';
}

/** Python truthiness of a JSON value (`if body.get("stream"):`). */
export function pyTruthy(value: unknown): boolean {
    if (Array.isArray(value)) return value.length > 0;
    if (value !== null && typeof value === 'object') return Object.keys(value).length > 0;
    return Boolean(value);
}
