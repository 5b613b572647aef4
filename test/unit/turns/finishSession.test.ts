import { HttpRequest, HttpResult } from '../../../src/hermes/transport';
import { OwnedSession, SessionIndexPort } from '../../../src/sessions/sessionIndex';
import { SessionRecord } from '../../../src/sessions/sessionRecord';
import { finish } from '../../../src/turns/finish';
import { rememberSession } from '../../../src/turns/sessionSnapshot';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { HermesConfig } from '../../../src/settings/config';
import { ScriptedRuns, TEST_CONFIG } from '../../support/turnPorts';
import { answer, runningTurn } from '../../support/finishTurn';

/**
 * Finishing an answered turn, what its session record learns: each change that makes it read and
 * write the record (a rotated id, its first turn, a thread's frontier, a new asker, its activity, a
 * recap shown, a title asked for), and none without one; the session index of the askers; a title
 * asked for before Hermes had the session; a session reset while the turn ran.
 */

const KEY = 'agent:main:rocketchat:channel:R1:U1';
/** A session three turns old whose only asker is this turn's (alice, U1). */
const base: SessionRecord = { key: KEY, generation: 0, sessionId: 'sess-1', turns: 3, askers: ['U1'], autoTitle: 'Old title' };

interface Setting {
    /** The session as the turn found it when it was sent (also what it is at the end), or undefined for base. */
    session?: Partial<SessionRecord>;
    turn?: Partial<TurnRecord>;
    returnedId?: string;
    config?: Partial<HermesConfig>;
    transport?: ScriptedRuns;
}

/** Ends a turn over `setting`, counting the session reads and writes and the index entries written. */
async function ended(setting: Setting, snapshot: boolean) {
    const env = await runningTurn(setting.turn, {
        config: { ...TEST_CONFIG, ...setting.config },
        ...(setting.transport ? { transport: setting.transport } : {}),
    });
    const session = { ...base, ...setting.session };
    await env.ports.sessions.save(session);
    if (snapshot) {
        rememberSession(env.rec.id, session);
    }
    const counted = counting(env.ports.sessions);
    const index = indexed();
    env.ports.index = index.port;
    await finish(env.rec, answer('hi', { sessionId: setting.returnedId }), env.ports);
    return { ...env, ...counted, adds: index.adds, stored: await env.ports.sessions.get(KEY) };
}

function counting(sessions: { get: (key: string) => Promise<SessionRecord>; save: (r: SessionRecord) => Promise<void> }) {
    const counts = { reads: 0, saves: 0 };
    const get = sessions.get.bind(sessions);
    const save = sessions.save.bind(sessions);
    sessions.get = async (key) => {
        counts.reads++;
        return get(key);
    };
    sessions.save = async (r) => {
        counts.saves++;
        return save(r);
    };
    return counts;
}

function indexed() {
    const adds: Array<[string, OwnedSession]> = [];
    const port: SessionIndexPort = {
        owned: async () => [],
        inScope: async () => [],
        ofSession: async () => [],
        add: async (userId, entry) => {
            adds.push([userId, entry]);
        },
    };
    return { adds, port };
}

describe.each([
    ['as the turn found it when it was sent', true],
    ['read only at the end (the turn was sent elsewhere)', false],
])('the session record, %s', (_, snapshot) => {
    it('is not written when nothing about it changed', async () => {
        const env = await ended({}, snapshot);
        expect(env.saves).toBe(0);
        expect(env.stored).toEqual(base);
    });

    it("takes the id Hermes rotated to, its askers recorded anew from this turn's", async () => {
        const env = await ended({ session: { askers: ['U1', 'U2'] }, returnedId: 'compressed_2' }, snapshot);
        expect(env.stored).toEqual({ ...base, sessionId: 'compressed_2', turns: 4, askers: ['U1'] });
    });

    it('counts its first turn', async () => {
        const env = await ended({ session: { turns: 0 } }, snapshot);
        expect(env.stored).toEqual({ ...base, turns: 1 });
    });

    it("moves a thread's frontier to where the turn reached, holding the answer's parts", async () => {
        const env = await ended({ turn: { threadId: 'TH1', frontier: { next: { id: 'T9', at: 1000, held: [] } } } }, snapshot);
        expect(env.stored).toEqual({ ...base, turns: 4, frontier: { id: 'T9', at: 1000, held: [{ id: 'm1', at: env.sched.time }] } });
    });

    it('adds a new asker', async () => {
        const env = await ended({ session: { askers: ['U2'] } }, snapshot);
        expect(env.stored).toEqual({ ...base, turns: 4, askers: ['U2', 'U1'] });
    });

    it('keeps when it was last active while sessions reset', async () => {
        const env = await ended({ config: { sessionReset: 'idle' } }, snapshot);
        expect(env.stored).toEqual({ ...base, turns: 4, lastActiveAt: env.sched.time });
    });

    it('drops a recap the answer showed', async () => {
        const env = await ended({ session: { recap: 'Where we were.' } }, snapshot);
        expect(env.stored).toEqual({ ...base, turns: 4 });
    });

    it('drops a title it has given to Hermes', async () => {
        const transport = new ScriptedRuns();
        const env = await ended({ session: { pendingTitle: 'Release planning' }, transport }, snapshot);
        expect(env.stored).toEqual({ ...base, turns: 4 });
        expect(transport.requests.filter((r) => r.method === 'PATCH').map((r) => [r.url, r.body])).toEqual([
            ['http://hermes.test/api/sessions/sess-1', '{"title":"Release planning"}'],
        ]);
    });
});

describe('the session read at the end', () => {
    it('is spared when the session as the turn found it has nothing to learn', async () => {
        const env = await ended({}, true);
        expect(env.reads).toBe(0);
    });

    it('is done when it has', async () => {
        const env = await ended({ session: { recap: 'Where we were.' } }, true);
        expect(env.reads).toBe(1);
    });
});

describe('the askers of a session', () => {
    it('are bounded to the latest 200', async () => {
        const earlier = Array.from({ length: 200 }, (_, i) => `P${i}`);
        const env = await ended({ session: { askers: earlier } }, false);
        expect(env.stored.askers).toHaveLength(200);
        expect(env.stored.askers?.slice(0, 2)).toEqual(['P1', 'P2']);
        expect(env.stored.askers?.slice(-2)).toEqual(['P199', 'U1']);
    });

    it('are indexed with the conversation the first time a person is answered in the session', async () => {
        const env = await ended({ session: { askers: [] }, turn: { threadId: 'TH1', roomName: 'general' } }, false);
        expect(env.adds).toEqual([
            [
                'U1',
                {
                    sessionId: 'sess-1',
                    key: KEY,
                    roomId: 'R1',
                    roomType: 'c',
                    roomName: 'general',
                    threadId: 'TH1',
                    kind: 'room',
                    startedAt: env.sched.time,
                    autoTitle: 'Old title',
                },
            ],
        ]);
    });

    it('are indexed once when the session is as the turn found it', async () => {
        const env = await ended({ session: { askers: [] } }, true);
        expect(env.adds.map(([user, entry]) => [user, entry.sessionId, entry.autoTitle])).toEqual([['U1', 'sess-1', 'Old title']]);
    });

    it('are indexed again on what the session became while the turn ran', async () => {
        const env = await runningTurn();
        rememberSession(env.rec.id, { ...base, askers: [] });
        const index = indexed();
        env.ports.index = index.port;

        // Another turn moved the session to a new id meanwhile.
        await env.ports.sessions.save({ ...base, sessionId: 'sess-2', askers: [] });
        await finish(env.rec, answer('hi'), env.ports);
        expect(index.adds.map(([, entry]) => entry.sessionId)).toEqual(['sess-1', 'sess-2']);
        expect(await env.ports.sessions.get(KEY)).toEqual({ ...base, sessionId: 'sess-2', turns: 4 });
    });

    it('are indexed again under the title the session got while the turn ran', async () => {
        const env = await runningTurn();
        rememberSession(env.rec.id, { ...base, askers: [], autoTitle: undefined });
        const index = indexed();
        env.ports.index = index.port;
        await env.ports.sessions.save({ ...base, askers: [], autoTitle: 'Named meanwhile' });
        await finish(env.rec, answer('hi'), env.ports);
        expect(index.adds.map(([, entry]) => entry.autoTitle)).toEqual(['user text', 'Named meanwhile']);
    });

    it('of a turn whose text a cut save lost (its process killed between head and payload): indexed, posted, untitled', async () => {
        const env = await runningTurn({ user: undefined as unknown as string, system: undefined as unknown as string });
        const index = indexed();
        env.ports.index = index.port;
        await env.ports.sessions.save({ ...base, askers: [], autoTitle: undefined });
        await finish(env.rec, answer('hi'), env.ports);
        expect(index.adds.map(([user, entry]) => [user, entry.sessionId, entry.autoTitle])).toEqual([['U1', 'sess-1', undefined]]);
        expect(env.chat.messages.map((m) => m.text)).toEqual(['@alice hi']);
        expect(await env.ports.sessions.get(KEY)).toEqual({ ...base, askers: ['U1'], autoTitle: undefined, turns: 4 });
    });

    it('are indexed at the end when the asker left the session while the turn ran', async () => {
        const env = await runningTurn();
        rememberSession(env.rec.id, { ...base, recap: 'Where we were.' });
        const index = indexed();
        env.ports.index = index.port;
        await env.ports.sessions.save({ ...base, askers: [], recap: 'Where we were.' });
        await finish(env.rec, answer('hi'), env.ports);
        expect(index.adds.map(([user, entry]) => [user, entry.sessionId])).toEqual([['U1', 'sess-1']]);
        expect(await env.ports.sessions.get(KEY)).toEqual({ ...base, turns: 4 });
    });
});

describe('a session reset while the turn ran', () => {
    it('learns nothing of the turn', async () => {
        const env = await runningTurn({ sessionId: 'sess-1' });
        const reset: SessionRecord = { key: KEY, generation: 1, sessionId: 'sess-2', turns: 0 };
        await env.ports.sessions.save(reset);
        const index = indexed();
        env.ports.index = index.port;
        await finish(env.rec, answer('hi'), env.ports);
        expect(await env.ports.sessions.get(KEY)).toEqual({ key: KEY, generation: 1, sessionId: 'sess-2', turns: 0 });
        expect(index.adds).toEqual([]);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['@alice hi']);
    });
});

describe('a title asked for before Hermes had the session', () => {
    /** Hermes answering the title's PATCH with `reply`. */
    function hermesAnswering(reply: HttpResult): ScriptedRuns {
        const transport = new ScriptedRuns();
        const send = transport.send.bind(transport);
        transport.send = async (request: HttpRequest) => (request.method === 'PATCH' ? (transport.requests.push(request), reply) : send(request));
        return transport;
    }

    const json = (status: number, body: unknown): HttpResult => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    it('is set without a word in the log', async () => {
        const env = await ended({ session: { pendingTitle: 'Release planning' }, transport: hermesAnswering(json(200, { ok: true })) }, false);
        expect(env.logs.filter((l) => l.includes('title'))).toEqual([]);
    });

    it('is logged when Hermes has no such session', async () => {
        const env = await ended(
            { session: { pendingTitle: 'Release planning' }, transport: hermesAnswering(json(404, { error: { message: 'not found' } })) },
            false,
        );
        expect(env.logs).toContain('The title asked for session sess-1 could not be set (Hermes has no such session).');
        expect(env.stored).toEqual({ ...base, turns: 4 });
    });

    it('is logged when another session has it', async () => {
        const taken = json(400, { error: { message: "Title 'Release planning' is already in use by session other", code: 'invalid_title' } });
        const env = await ended({ session: { pendingTitle: 'Release planning' }, transport: hermesAnswering(taken) }, false);
        expect(env.logs).toContain('The title asked for session sess-1 could not be set (another session has it).');
        expect(env.stored).toEqual({ ...base, turns: 4 });
    });

    it('is logged, not retried, when Hermes fails', async () => {
        const env = await ended({ session: { pendingTitle: 'Release planning' }, transport: hermesAnswering({ status: 500, headers: {}, body: '' }) }, false);
        expect(env.logs).toContain('The title asked for session sess-1 could not be set: server-error: HTTP 500');
        expect(env.stored).toEqual({ ...base, turns: 4 });
        expect(env.chat.answers().map((m) => m.text)).toEqual(['@alice hi']);
    });
});
