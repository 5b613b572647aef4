// Stand-in for jsr:@std/cli (parse-args), which cannot be fetched offline (jsr.io is unreachable).
// Apps-Engine 1.62.0 only calls parseArgs(Deno.args) with no options, on
// `--subprocess <appId> --spawnId <n>` (lib/parseArgs.ts), so this implements the option-less
// behaviour of std's parseArgs: `--k v`, `--k=v`, `--no-k`, bare `--k` => true, `-abc`,
// numeric-looking values become numbers, positionals and everything after `--` go to `_`.

export type Args = { _: Array<string | number>; [key: string]: unknown };

function isNumber(x: string): boolean {
    return /^0x[0-9a-f]+$/i.test(x) || /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(e[-+]?\d+)?$/.test(x);
}

function coerce(v: string): string | number {
    return isNumber(v) ? Number(v) : v;
}

export function parseArgs(args: string[], _options?: unknown): Args {
    const out: Args = { _: [] };
    const set = (key: string, value: unknown) => {
        // std's parseArgs collects repeated flags into an array
        const prev = out[key];
        out[key] = prev === undefined || typeof prev === 'boolean' ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    };

    for (let i = 0; i < args.length; i++) {
        const arg = args[i];
        if (arg === '--') {
            out._.push(...args.slice(i + 1));
            break;
        }
        let m: RegExpMatchArray | null;
        if ((m = arg.match(/^--([^=]+)=(.*)$/s))) {
            set(m[1], coerce(m[2]));
        } else if ((m = arg.match(/^--no-(.+)$/))) {
            set(m[1], false);
        } else if ((m = arg.match(/^--(.+)$/))) {
            const next = args[i + 1];
            if (next !== undefined && !next.startsWith('-')) {
                set(m[1], coerce(next));
                i++;
            } else {
                set(m[1], true);
            }
        } else if (/^-[^-]+$/.test(arg)) {
            const letters = arg.slice(1).split('');
            const last = letters.pop() as string;
            for (const l of letters) set(l, true);
            const next = args[i + 1];
            if (next !== undefined && !next.startsWith('-')) {
                set(last, coerce(next));
                i++;
            } else {
                set(last, true);
            }
        } else {
            out._.push(coerce(arg));
        }
    }

    return out;
}
