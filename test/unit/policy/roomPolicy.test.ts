/**
 * The `room_policies` setting: entries, replacement semantics, and malformed lines that make their room refuse
 * service instead of falling back to the default.
 */
import { DEFAULT_ROOM_POLICY, parseRoomPolicies, RoomPolicies } from '../../../src/policy/policyLines';
import { describePolicy, policyFor } from '../../../src/policy/roomPolicy';

const ROOM = 'Hx7Yq2LmN4pR8sT0v';
const OTHER = 'aB3dE5fG7hJ9kL1mN';

/** Plain values for exact comparison. */
function plain(p: RoomPolicies) {
    return { entries: Object.fromEntries(p.entries), broken: [...p.broken].sort(), problems: p.problems };
}

describe('parseRoomPolicies: valid entries', () => {
    it('reads every key, comments and blank lines ignored', () => {
        const text = [
            '# research room',
            '',
            `${ROOM} profile=research model=fast prompt="Answer in French." mode=free`,
            '   ',
            `  # indented comment`,
            `GENERAL model=anthropic/claude-3.5:fast`,
            `${OTHER}\tprofile=ops.team_1\tmode=mention`,
        ].join('\n');
        expect(plain(parseRoomPolicies(text))).toEqual({
            entries: {
                [ROOM]: { profile: 'research', model: 'fast', prompt: 'Answer in French.', mode: 'free' },
                GENERAL: { model: 'anthropic/claude-3.5:fast', mode: 'mention' },
                [OTHER]: { profile: 'ops.team_1', mode: 'mention' },
            },
            broken: [],
            problems: [],
        });
    });

    it('takes the bare word off as mode=off, and a room id alone as the defaults', () => {
        expect(plain(parseRoomPolicies(`${ROOM} off\n${OTHER}`))).toEqual({
            entries: { [ROOM]: { mode: 'off' }, [OTHER]: { mode: 'mention' } },
            broken: [],
            problems: [],
        });
        expect(parseRoomPolicies(`${ROOM} profile=x off`).entries.get(ROOM)).toEqual({ profile: 'x', mode: 'off' });
    });

    it('takes any whitespace (tab, no-break space) between words', () => {
        expect(parseRoomPolicies(`${ROOM}\u00a0mode=free \t profile=a`).entries.get(ROOM)).toEqual({ profile: 'a', mode: 'free' });
    });

    it('reads CRLF text and keys in any order', () => {
        const parsed = parseRoomPolicies(`${ROOM} mode=free profile=a\r\n${OTHER} prompt="x" model=m\r\n`);
        expect(plain(parsed)).toEqual({
            entries: { [ROOM]: { profile: 'a', mode: 'free' }, [OTHER]: { model: 'm', prompt: 'x', mode: 'mention' } },
            broken: [],
            problems: [],
        });
    });

    it('unescapes \\" and \\\\ in quotes, keeps spaces and = and # inside them', () => {
        const parsed = parseRoomPolicies(String.raw`${ROOM} prompt="Say \"hi\" to C:\\temp, a=b #tag  twice"`);
        expect(parsed.entries.get(ROOM)).toEqual({ prompt: 'Say "hi" to C:\\temp, a=b #tag  twice', mode: 'mention' });
        expect(parsed.problems).toEqual([]);
    });

    it('accepts quoted profile, model and mode values, and a prompt of exactly 2000 characters', () => {
        const parsed = parseRoomPolicies(`${ROOM} profile="research" model="fast" mode="free"\n${OTHER} prompt="${'é'.repeat(2000)}"`);
        expect(parsed.entries.get(ROOM)).toEqual({ profile: 'research', model: 'fast', mode: 'free' });
        expect(parsed.entries.get(OTHER)?.prompt).toHaveLength(2000);
        expect(parsed.problems).toEqual([]);
    });

    it('accepts the longest names and ids', () => {
        const id = 'r'.repeat(64);
        const profile = 'P' + 'p'.repeat(63);
        const model = 'M' + 'm'.repeat(127);
        expect(parseRoomPolicies(`${id} profile=${profile} model=${model}`).entries.get(id)).toEqual({ profile, model, mode: 'mention' });
    });

    it('returns frozen entries', () => {
        const entry = parseRoomPolicies(`${ROOM} mode=free`).entries.get(ROOM);
        expect(Object.isFrozen(entry)).toBe(true);
        expect(Object.isFrozen(DEFAULT_ROOM_POLICY)).toBe(true);
        expect(DEFAULT_ROOM_POLICY).toEqual({ mode: 'mention' });
    });
});

describe('parseRoomPolicies: malformed lines break their room', () => {
    it.each([
        ['unknown key', `${ROOM} profile=a colour=red`, 'unknown key (known: profile, model, prompt, mode, reply)'],
        ['unknown key in another case', `${ROOM} Profile=a`, 'unknown key (known: profile, model, prompt, mode, reply)'],
        ['empty key', `${ROOM} =a`, 'unknown key (known: profile, model, prompt, mode, reply)'],
        ['bare word', `${ROOM} research`, 'expected key=value or off'],
        ['inline comment', `${ROOM} mode=free # note`, 'expected key=value or off'],
        ['repeated key', `${ROOM} model=a model=b`, 'model given twice'],
        ['off and mode', `${ROOM} off mode=free`, 'mode given twice'],
        ['off twice', `${ROOM} off off`, 'mode given twice'],
        ['bad mode', `${ROOM} mode=always`, 'mode must be mention, free or off'],
        ['mode in capitals', `${ROOM} mode=FREE`, 'mode must be mention, free or off'],
        ['empty profile', `${ROOM} profile=`, 'empty profile'],
        ['empty quoted model', `${ROOM} model=""`, 'empty model'],
        ['empty prompt', `${ROOM} prompt=""`, 'empty prompt'],
        ['profile with a slash', `${ROOM} profile=a/b`, 'profile must be 1 to 64 letters, digits, _ . or -, starting with a letter or digit'],
        ['profile starting with a dot', `${ROOM} profile=.hidden`, 'profile must be 1 to 64 letters, digits, _ . or -, starting with a letter or digit'],
        ['profile too long', `${ROOM} profile=${'p'.repeat(65)}`, 'profile must be 1 to 64 letters, digits, _ . or -, starting with a letter or digit'],
        ['model with a space', `${ROOM} model="a b"`, 'model must be 1 to 128 letters, digits, _ . : / or -, starting with a letter or digit'],
        ['model too long', `${ROOM} model=${'m'.repeat(129)}`, 'model must be 1 to 128 letters, digits, _ . : / or -, starting with a letter or digit'],
        ['unquoted prompt', `${ROOM} prompt=hello`, 'prompt must be in double quotes'],
        ['unterminated quote', `${ROOM} prompt="hello mode=free`, 'unterminated quote'],
        ['quote closed by an escaped quote only', `${ROOM} prompt="hello\\"`, 'unterminated quote'],
        ['unknown escape', `${ROOM} prompt="line\\nbreak"`, 'unknown escape in quotes (only \\" and \\\\)'],
        ['text after the closing quote', `${ROOM} prompt="a"b`, 'text right after a closing quote'],
        ['prompt too long', `${ROOM} prompt="${'x'.repeat(2001)}"`, 'prompt longer than 2000 characters'],
        ['tab in a prompt', `${ROOM} prompt="a\tb"`, 'prompt contains a control or direction character'],
        ['carriage return in a prompt', `${ROOM} prompt="a\rb"`, 'prompt contains a control or direction character'],
        ['line separator in a prompt', `${ROOM} prompt="a\u2028b"`, 'prompt contains a control or direction character'],
        ['bidi override in a prompt', `${ROOM} prompt="a\u202eb"`, 'prompt contains a control or direction character'],
    ])('%s', (_name, line, reason) => {
        const text = `# header\n${OTHER} mode=free\n${line}`;
        expect(plain(parseRoomPolicies(text))).toEqual({
            entries: { [OTHER]: { mode: 'free' } },
            broken: [ROOM],
            problems: [{ line: 3, roomId: ROOM, reason }],
        });
    });

    it('a newline cannot enter a prompt: the quote stays open on its line and the next line stands alone', () => {
        const parsed = parseRoomPolicies(`${ROOM} prompt="first\n${OTHER} second"`);
        expect(plain(parsed)).toEqual({
            entries: {},
            broken: [ROOM, OTHER].sort(),
            problems: [
                { line: 1, roomId: ROOM, reason: 'unterminated quote' },
                { line: 2, roomId: OTHER, reason: 'expected key=value or off' },
            ],
        });
    });

    it('a room on two lines is broken, both lines reported, even when both are valid', () => {
        const parsed = parseRoomPolicies(`${ROOM} mode=free\nGENERAL off\n\n${ROOM} profile=research`);
        expect(plain(parsed)).toEqual({
            entries: { GENERAL: { mode: 'off' } },
            broken: [ROOM],
            problems: [
                { line: 1, roomId: ROOM, reason: 'room listed more than once (lines 1, 4)' },
                { line: 4, roomId: ROOM, reason: 'room listed more than once (lines 1, 4)' },
            ],
        });
        expect(policyFor(parsed, ROOM)).toEqual({ kind: 'broken' });
    });

    it('a repeated room whose lines are also malformed gets each problem, in line order', () => {
        const parsed = parseRoomPolicies(`${ROOM} mode=x\n${ROOM} mode=free\n${ROOM}`);
        expect(parsed.problems).toEqual([
            { line: 1, roomId: ROOM, reason: 'mode must be mention, free or off' },
            { line: 1, roomId: ROOM, reason: 'room listed more than once (lines 1, 2, 3)' },
            { line: 2, roomId: ROOM, reason: 'room listed more than once (lines 1, 2, 3)' },
            { line: 3, roomId: ROOM, reason: 'room listed more than once (lines 1, 2, 3)' },
        ]);
        expect([...parsed.broken]).toEqual([ROOM]);
        expect(parsed.entries.size).toBe(0);
    });

    it.each([
        ['a key first', 'mode=free'],
        ['a room id with a dot', 'room.one mode=free'],
        ['a room id too long', `${'r'.repeat(65)} mode=free`],
        ['a hash later in the word', 'room#1 off'],
    ])('a line whose first word is not a room id (%s) is reported, nothing broken', (_name, line) => {
        expect(plain(parseRoomPolicies(`${OTHER} off\n${line}`))).toEqual({
            entries: { [OTHER]: { mode: 'off' } },
            broken: [],
            problems: [{ line: 2, reason: 'the first word is not a room ID (1 to 64 letters, digits, _ or -)' }],
        });
    });

    it('does not quote the setting text in reasons', () => {
        const parsed = parseRoomPolicies(`${ROOM} secret=SHOWME\nSHOWME?? x\n${OTHER} prompt="SHOWME`);
        expect(parsed.problems).toHaveLength(3);
        expect(JSON.stringify(parsed.problems)).not.toContain('SHOWME');
    });
});

describe('parseRoomPolicies: bounds and odd input', () => {
    it('parses 500 lines; rooms named after them refuse service and one problem says so', () => {
        const lines = Array.from({ length: 500 }, (_, i) => (i === 0 ? `${ROOM} mode=free` : `# filler ${i}`));
        lines.push('', `${OTHER} mode=free`, '# comment', '!not a room', `GENERAL profile=x`, '');
        const parsed = parseRoomPolicies(lines.join('\n'));
        expect(plain(parsed)).toEqual({
            entries: { [ROOM]: { mode: 'free' } },
            broken: ['GENERAL', OTHER].sort(),
            problems: [{ line: 501, reason: 'more than 500 lines: 3 entries after line 500 were not read and their rooms refuse service' }],
        });
    });

    it('a room named both before and after line 500 refuses service', () => {
        const lines = [`${ROOM} mode=free`, ...Array.from({ length: 499 }, () => ''), `${ROOM} off`];
        const parsed = parseRoomPolicies(lines.join('\n'));
        expect(policyFor(parsed, ROOM)).toEqual({ kind: 'broken' });
        expect(parsed.entries.size).toBe(0);
    });

    it('exactly 500 lines and a trailing newline is no problem', () => {
        const lines = Array.from({ length: 500 }, (_, i) => `room${i} mode=free`);
        const parsed = parseRoomPolicies(lines.join('\n') + '\n');
        expect(parsed.problems).toEqual([]);
        expect(parsed.entries.size).toBe(500);
    });

    it.each([[''], ['\n\n'], ['# only a comment']])('empty settings %j: no entries, no problems', (text) => {
        expect(plain(parseRoomPolicies(text))).toEqual({ entries: {}, broken: [], problems: [] });
    });

    it('never throws on odd input', () => {
        const odd: unknown[] = [
            undefined,
            null,
            42,
            {},
            '\u0000\u0000',
            '"'.repeat(10_000),
            `${ROOM} ${'prompt="'.repeat(5000)}`,
            '\\'.repeat(1000),
            '=\n=\n=',
        ];
        for (const input of odd) {
            expect(() => parseRoomPolicies(input as string)).not.toThrow();
        }
        expect(plain(parseRoomPolicies(undefined as unknown as string))).toEqual({ entries: {}, broken: [], problems: [] });
    });
});

describe('policyFor and describePolicy', () => {
    const policies = parseRoomPolicies(
        [`${ROOM} profile=research model=fast mode=free prompt="Be brief."`, `${OTHER} off`, 'GENERAL', 'brokenRoom mode=loud'].join('\n'),
    );

    it('an entry replaces the default as a whole', () => {
        expect(policyFor(policies, ROOM)).toEqual({ kind: 'entry', policy: { profile: 'research', model: 'fast', prompt: 'Be brief.', mode: 'free' } });
        expect(policyFor(policies, OTHER)).toEqual({ kind: 'entry', policy: { mode: 'off' } });
        expect(policyFor(policies, 'GENERAL')).toEqual({ kind: 'entry', policy: { mode: 'mention' } });
    });

    it('a room without an entry gets the default; a broken one gets nothing', () => {
        expect(policyFor(policies, 'unlisted')).toEqual({ kind: 'default', policy: { mode: 'mention' } });
        const lookup = policyFor(policies, 'unlisted');
        expect(lookup.kind === 'default' && lookup.policy).toBe(DEFAULT_ROOM_POLICY);
        expect(policyFor(policies, 'brokenRoom')).toEqual({ kind: 'broken' });
    });

    it('describes each case in one line', () => {
        expect(describePolicy(policyFor(policies, ROOM))).toBe('profile research, model fast, mode free, room instruction set');
        expect(describePolicy(policyFor(policies, OTHER))).toBe('mode off');
        expect(describePolicy(policyFor(policies, 'GENERAL'))).toBe('mode mention');
        expect(describePolicy(policyFor(parseRoomPolicies(`${ROOM} model=m prompt="p"`), ROOM))).toBe('model m, mode mention, room instruction set');
        expect(describePolicy(policyFor(policies, 'unlisted'))).toBe('default (mention)');
        expect(describePolicy(policyFor(policies, 'brokenRoom'))).toBe('malformed entry, service refused (see the app log)');
    });

    it('never shows the instruction itself', () => {
        expect(describePolicy(policyFor(policies, ROOM))).not.toContain('Be brief');
    });
});
