import { tick } from '../../../src/turns/tick';
import { SessionRecord } from '../../../src/sessions/sessionRecord';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { HttpRequest, HttpResult } from '../../../src/hermes/transport';
import { memoryTickPorts, MemorySessions, queuedTurn, ScriptedRuns, VirtualScheduler } from '../../support/turnPorts';

/**
 * A turn sent later than its event (it waited for a slot or for its session) reads the v0.18.2
 * transcript of the session its event saw beside its session's read, not after it: one round trip
 * less between a freed slot and the next run. It keeps that transcript only while the session
 * read names the same id; the event's own turn, and a turn that ends an old session first, read
 * it as before.
 */
const TRANSCRIPTS = /^\/api\/sessions\/([^/]+)\/messages$/;

/** Hermes with one transcript per session id (its last message names the id); the first `failing` transcript reads answer 500. */
class Transcripts extends ScriptedRuns {
    public failing = 0;
    public async send(request: HttpRequest): Promise<HttpResult> {
        const m = TRANSCRIPTS.exec(new URL(request.url).pathname);
        if (m && request.method === 'GET') {
            this.requests.push(request);
            if (this.failing > 0) {
                this.failing -= 1;
                return { status: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: 'boom', code: 'x' } }) };
            }
            const data = [
                { role: 'user', content: 'earlier question' },
                { role: 'assistant', content: `answer in ${decodeURIComponent(m[1])}` },
            ];
            return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data }) };
        }
        return super.send(request);
    }
    public transcriptReads(): string[] {
        return this.requests
            .filter((r) => r.method === 'GET' && TRANSCRIPTS.test(new URL(r.url).pathname))
            .map((r) => decodeURIComponent(TRANSCRIPTS.exec(new URL(r.url).pathname)?.[1] ?? ''));
    }
    public runHistory(): unknown {
        const post = this.requests.find((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/runs');
        return post ? (JSON.parse(post.body as string) as { conversation_history?: unknown }).conversation_history : undefined;
    }
}

/** Session reads held until the test lets them go. */
class HeldSessions extends MemorySessions {
    private held: Array<() => void> = [];
    public reads = 0;
    public async get(key: string): Promise<SessionRecord> {
        this.reads += 1;
        await new Promise<void>((resolve) => this.held.push(resolve));
        return super.get(key);
    }
    public release(): void {
        this.held.splice(0).forEach((go) => go());
    }
}

const settle = async () => {
    for (let i = 0; i < 20; i++) {
        await new Promise((r) => setImmediate(r));
    }
};

function setup() {
    const sched = new VirtualScheduler();
    const transport = new Transcripts();
    const sessions = new HeldSessions();
    const env = memoryTickPorts({
        sched,
        transport,
        sessions,
        // v0.18.2: the app reads the transcript and sends it with the run.
        capabilities: async () => ({ runs: true, runsLoadHistory: false, version: '0.18.2' }) as never,
    });
    return { ...env, sessions, transport };
}

/** Sends a stored turn as a turn woken after its event (no session in hand), letting its session read go once the tick waits on it. */
async function sendHeld(env: ReturnType<typeof memoryTickPorts>, sessions: HeldSessions, rec: TurnRecord): Promise<void> {
    await env.store.save(rec);
    const ticking = tick({ turnId: rec.id, chain: rec.chain }, env.ports);
    await settle();
    sessions.release();
    await ticking;
    await settle();
}

describe('a turn sent later than its event, on v0.18.2', () => {
    it('reads the transcript of the session its event saw while its session is being read, and sends it', async () => {
        const { ports, store, sessions, transport } = setup();
        const rec = queuedTurn('LATER');
        const current = (await new MemorySessions().get(rec.sessionKey)).sessionId;
        rec.sessionSeen = current;
        await store.save(rec);
        const ticking = tick({ turnId: 'LATER', chain: rec.chain }, ports);
        await settle();
        expect(sessions.reads).toBe(1);
        expect(transport.transcriptReads()).toEqual([current]);
        sessions.release();
        await ticking;
        await settle();
        expect(transport.transcriptReads()).toEqual([current]);
        expect(transport.runHistory()).toEqual([
            { role: 'user', content: 'earlier question' },
            { role: 'assistant', content: `answer in ${current}` },
        ]);
    });

    it('reads the session it finds when that is another one (a reset since its event), and sends that transcript', async () => {
        const env = setup();
        const { sessions, transport } = env;
        const rec = queuedTurn('RESET', { sessionSeen: 'rc_before_reset_g0' });
        await sendHeld(env, sessions, rec);
        const current = (await new MemorySessions().get(rec.sessionKey)).sessionId;
        expect(transport.transcriptReads()).toEqual(['rc_before_reset_g0', current]);
        expect(transport.runHistory()).toEqual([
            { role: 'user', content: 'earlier question' },
            { role: 'assistant', content: `answer in ${current}` },
        ]);
    });

    it('reads the transcript again when the early read failed', async () => {
        const env = setup();
        const { sessions, transport } = env;
        const rec = queuedTurn('FLAKY');
        const current = (await new MemorySessions().get(rec.sessionKey)).sessionId;
        rec.sessionSeen = current;
        transport.failing = 1;
        await sendHeld(env, sessions, rec);
        expect(transport.transcriptReads()).toEqual([current, current]);
        expect(transport.runHistory()).toEqual([
            { role: 'user', content: 'earlier question' },
            { role: 'assistant', content: `answer in ${current}` },
        ]);
    });

    it('reads nothing early when it ends an old session first, or when Hermes loads its own history', async () => {
        const { ports, store, sessions, transport } = setup();
        const reset = queuedTurn('ENDS', { sessionSeen: 'rc_new_g1', endPrevious: 'rc_old_g0' });
        await store.save(reset);
        const first = tick({ turnId: 'ENDS', chain: reset.chain }, ports);
        await settle();
        expect(transport.transcriptReads()).toEqual([]);
        sessions.release();
        await first;

        const held = new HeldSessions();
        const newer = memoryTickPorts({ sched: new VirtualScheduler(), transport: new Transcripts(), sessions: held });
        await sendHeld(newer, held, queuedTurn('LOADS', { sessionSeen: 'rc_x_g0' }));
        expect((newer.transport as Transcripts).transcriptReads()).toEqual([]);
        expect((newer.transport as Transcripts).count('POST', /^\/v1\/runs$/)).toBe(1);
    });
});

describe("the event's own turn", () => {
    it('reads its transcript only once the session it read is in hand', async () => {
        const { ports, store, transport } = setup();
        const rec = queuedTurn('OWN', { sessionSeen: 'rc_own_g0' });
        await store.save(rec);
        let give: (s: SessionRecord) => void = () => undefined;
        const session = new Promise<SessionRecord>((resolve) => {
            give = resolve;
        });
        const ticking = tick({ turnId: 'OWN', chain: rec.chain, record: rec, session }, ports);
        await settle();
        expect(transport.transcriptReads()).toEqual([]);
        give({ ...(await new MemorySessions().get(rec.sessionKey)), sessionId: 'rc_own_g0' });
        await ticking;
        await settle();
        expect(transport.transcriptReads()).toEqual(['rc_own_g0']);
    });
});
