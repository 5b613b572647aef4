import { inUseElsewhere, reachable, resumableIn } from '../../../src/sessions/sessionAccess';
import { OwnedSession } from '../../../src/sessions/sessionIndex';
import { TurnRecord } from '../../../src/turns/turnRecord';

/**
 * Who may list, search and resume which session (issue 31): a person reaches the sessions of
 * rooms they are in now, a shared room session is resumed only in its room, and a session goes
 * on in one conversation at a time. Keys written out as the app builds them.
 */
const DM_KEY = 'agent:main:rocketchat:dm:U1';
const ROOM_SHARED = 'agent:main:rocketchat:channel:R1';
const ROOM_MINE = 'agent:main:rocketchat:channel:R1:U1';
const THREAD_SHARED = 'agent:main:rocketchat:channel:R1:T1';
const THREAD_MINE = 'agent:main:rocketchat:channel:R1:T1:U1';

function entry(over: Partial<OwnedSession>): OwnedSession {
    return { sessionId: 'S1', key: ROOM_SHARED, roomId: 'R1', kind: 'room', startedAt: 1, ...over };
}

describe('reachable: the rooms a person is in now', () => {
    const dm = entry({ sessionId: 'D', key: DM_KEY, roomId: 'DM1', kind: 'dm' });
    const r1 = entry({ sessionId: 'A', roomId: 'R1' });
    const r1b = entry({ sessionId: 'B', roomId: 'R1' });
    const r2 = entry({ sessionId: 'C', roomId: 'R2' });
    const r3 = entry({ sessionId: 'E', roomId: 'R3' });

    it('keeps the entries of rooms whose membership says yes, asking once per room; a failed read is a no', async () => {
        const asked: string[] = [];
        const memberOf = async (id: string): Promise<boolean> => {
            asked.push(id);
            if (id === 'R3') {
                throw new Error('read failed');
            }
            return id === 'R1' || id === 'DM1';
        };
        expect((await reachable([dm, r1, r2, r1b, r3], memberOf)).map((e) => e.sessionId)).toEqual(['D', 'A', 'B']);
        expect(asked).toEqual(['DM1', 'R1', 'R2', 'R3']);
    });

    it('a membership answer that is not exactly true keeps nothing', async () => {
        const memberOf = (async () => 'yes') as unknown as (id: string) => Promise<boolean>;
        expect(await reachable([r1, dm], memberOf)).toEqual([]);
    });

    it('without a membership port, only DM entries (fail closed)', async () => {
        expect((await reachable([r1, dm, r2], undefined)).map((e) => e.sessionId)).toEqual(['D']);
        expect(await reachable([], undefined)).toEqual([]);
    });
});

describe('resumableIn: a shared session stays in its conversation', () => {
    it('a personal session (DM, mine in a room or thread) goes anywhere', () => {
        expect(resumableIn(entry({ key: DM_KEY, kind: 'dm' }), ROOM_SHARED)).toBe(true);
        expect(resumableIn(entry({ key: ROOM_MINE }), DM_KEY)).toBe(true);
        expect(resumableIn(entry({ key: THREAD_MINE, threadId: 'T1' }), ROOM_SHARED)).toBe(true);
    });

    it("a room's or thread's shared session only in that same conversation", () => {
        expect(resumableIn(entry({ key: ROOM_SHARED }), ROOM_SHARED)).toBe(true);
        expect(resumableIn(entry({ key: ROOM_SHARED }), DM_KEY)).toBe(false);
        expect(resumableIn(entry({ key: THREAD_SHARED, threadId: 'T1' }), THREAD_SHARED)).toBe(true);
        expect(resumableIn(entry({ key: THREAD_SHARED, threadId: 'T1' }), ROOM_SHARED)).toBe(false);
        // A DM-kind entry is never shared, whatever its key says.
        expect(resumableIn(entry({ key: ROOM_SHARED, kind: 'dm' }), DM_KEY)).toBe(true);
    });
});

describe('inUseElsewhere: one conversation at a time', () => {
    type Turn = Pick<TurnRecord, 'phase' | 'sessionId' | 'owner'>;
    function ports(records: Record<string, string>, open: Record<string, Turn[]>, ofSession: OwnedSession[] = []) {
        const read: string[] = [];
        return {
            read,
            index: { ofSession: async (id: string) => (read.push(`index:${id}`), ofSession) },
            sessions: { get: async (key: string) => (read.push(`session:${key}`), { key, sessionId: records[key] ?? 'other', generation: 0 }) as never },
            turns: { openInSession: async (key: string) => (read.push(`turns:${key}`), (open[key] ?? []) as TurnRecord[]) },
        };
    }

    it('no other conversation knows the session: not in use, and nothing but the index is read', async () => {
        const p = ports({}, {});
        expect(await inUseElsewhere('S1', DM_KEY, [entry({ key: DM_KEY })], p)).toBe(false);
        expect(p.read).toEqual(['index:S1']);
    });

    it("another conversation's record names it now: in use", async () => {
        const p = ports({ [ROOM_MINE]: 'S1' }, {});
        expect(await inUseElsewhere('S1', DM_KEY, [entry({ key: ROOM_MINE })], p)).toBe(true);
        expect(p.read.sort()).toEqual(['index:S1', `session:${ROOM_MINE}`, `turns:${ROOM_MINE}`].sort());
    });

    it('found through the index too, each other conversation read once; entries of other sessions do not count', async () => {
        const p = ports({ [THREAD_MINE]: 'S1' }, {}, [entry({ key: THREAD_MINE }), entry({ key: THREAD_MINE }), entry({ sessionId: 'S9', key: ROOM_MINE })]);
        expect(await inUseElsewhere('S1', DM_KEY, [], p)).toBe(true);
        expect(p.read.filter((r) => r.startsWith('session:'))).toEqual([`session:${THREAD_MINE}`]);
    });

    it('moved on, but a turn of that conversation still runs on it: in use', async () => {
        expect(await inUseElsewhere('S1', DM_KEY, [entry({ key: ROOM_MINE })], ports({}, { [ROOM_MINE]: [{ phase: 'running', sessionId: 'S1' }] }))).toBe(true);
        expect(await inUseElsewhere('S1', DM_KEY, [entry({ key: ROOM_MINE })], ports({}, { [ROOM_MINE]: [{ phase: 'running', sessionId: 'S2' }] }))).toBe(
            false,
        );
    });

    it('a turn that has not stored its session yet counts when it is sent or being sent, not while queued', async () => {
        const known = [entry({ key: ROOM_MINE })];
        expect(await inUseElsewhere('S1', DM_KEY, known, ports({}, { [ROOM_MINE]: [{ phase: 'running' }] }))).toBe(true);
        expect(
            await inUseElsewhere('S1', DM_KEY, known, ports({}, { [ROOM_MINE]: [{ phase: 'queued', owner: { as: 'sending', process: 'p', until: 9 } }] })),
        ).toBe(true);
        expect(await inUseElsewhere('S1', DM_KEY, known, ports({}, { [ROOM_MINE]: [{ phase: 'queued' }] }))).toBe(false);
    });

    it('the conversation asking is never "elsewhere"', async () => {
        const p = ports({ [DM_KEY]: 'S1' }, { [DM_KEY]: [{ phase: 'running', sessionId: 'S1' }] });
        expect(await inUseElsewhere('S1', DM_KEY, [entry({ key: DM_KEY })], p)).toBe(false);
    });
});
