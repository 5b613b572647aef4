import { InboundMessage } from '../../src/admission/admit';
import { ContextMessage } from '../../src/context/contextMessage';
import { HistoryPort } from '../../src/context/historyPort';
import { ChatPort, ReplyTarget } from '../../src/delivery/chatPort';
import { BotMessageKind } from '../../src/delivery/messageKind';
import { HermesClient } from '../../src/hermes/client';
import { HermesTransport, HttpRequest, HttpResult } from '../../src/hermes/transport';
import { LogPort } from '../../src/security/safeLog';
import { DEFAULT_OPTIONS, HermesConfig } from '../../src/settings/config';
import { freshRecord, SessionPort, SessionRecord } from '../../src/sessions/sessionRecord';
import { runTurn, TurnPorts } from '../../src/turns/runTurn';
import { Turn } from '../../src/turns/turn';

const KEY = 'sk-test-0123456789abcdef';
const config: HermesConfig = { ...DEFAULT_OPTIONS, hermesUrl: 'http://hermes.test', hermesApiKey: KEY, hermesTimeoutSeconds: 30 };
const bot = { id: 'BOT', username: 'hermes.bot' };

class RecordingChat implements ChatPort {
    public readonly posts: Array<{ target: ReplyTarget; text: string; kind: BotMessageKind }> = [];
    public failOn?: number;
    public async post(target: ReplyTarget, text: string, kind: BotMessageKind): Promise<string> {
        if (this.failOn === this.posts.length + 1) {
            this.failOn = undefined;
            throw new Error('error-message-size-exceeded');
        }
        this.posts.push({ target, text, kind });
        return `posted-${this.posts.length}`;
    }
}

class RecordingLog implements LogPort {
    public readonly lines: string[] = [];
    debug = (m: string) => this.lines.push(`debug ${m}`);
    info = (m: string) => this.lines.push(`info ${m}`);
    warn = (m: string) => this.lines.push(`warn ${m}`);
    error = (m: string) => this.lines.push(`error ${m}`);
}

class MemorySessions implements SessionPort {
    public readonly records = new Map<string, SessionRecord>();
    async get(key: string) {
        return this.records.get(key) ?? freshRecord(key);
    }
    async save(record: SessionRecord) {
        this.records.set(record.key, record);
    }
}

class FixedHistory implements HistoryPort {
    public reads = 0;
    constructor(private readonly main: ContextMessage[] = [], private readonly threads: Record<string, ContextMessage[]> = {}, private readonly fail = false) {}
    async mainChannel() {
        this.reads++;
        if (this.fail) throw new Error('boom');
        return this.main;
    }
    async thread(id: string) {
        this.reads++;
        if (this.fail) throw new Error('boom');
        return this.threads[id] ?? [];
    }
}

function transport(answer: (req: HttpRequest) => HttpResult): HermesTransport & { requests: HttpRequest[] } {
    const requests: HttpRequest[] = [];
    return {
        requests,
        async send(req: HttpRequest) {
            requests.push(req);
            return answer(req);
        },
        async stream() {
            throw new Error('runTurn uses the non-streaming chat');
        },
    };
}

const ok = (content: string, headers: Record<string, string> = {}): HttpResult => ({ status: 200, headers, body: JSON.stringify({ choices: [{ message: { content }, finish_reason: 'stop' }] }) });
const message: InboundMessage = { id: 'MSG1', roomId: 'ROOM1', roomType: 'c', senderId: 'ALICE', senderUsername: 'alice', text: '@hermes.bot secret plans', isSystem: false, edited: false };
const roomTurn: Turn = { message, kind: 'room', text: 'secret plans', roomName: 'general', createdAt: new Date('2026-10-06T10:00:00Z') };

function ports(overrides: Partial<TurnPorts> & { t?: ReturnType<typeof transport> } = {}) {
    const t = overrides.t ?? transport(() => ok('the answer'));
    const p: TurnPorts & { chat: RecordingChat; log: RecordingLog; sessions: MemorySessions } = {
        config,
        hermes: new HermesClient(t, config),
        bot,
        chat: new RecordingChat(),
        history: new FixedHistory(),
        sessions: new MemorySessions(),
        server: async () => ({ maxMessageSize: 5000, siteUrl: 'https://chat.test' }),
        log: new RecordingLog(),
        now: Date.now,
        ...overrides,
    } as never;
    return { p, t };
}
const userText = (req: HttpRequest) => (JSON.parse(req.body!) as { messages: Array<{ content: string }> }).messages[1].content;

describe('runTurn', () => {
    it('asks Hermes once and posts the answer, quoting the question in the main channel', async () => {
        const { p, t } = ports();
        expect((await runTurn(roomTurn, p)).kind).toBe('answered');
        expect(t.requests).toHaveLength(1);
        expect(t.requests[0].headers['X-Hermes-Session-Key']).toBe('agent:main:rocketchat:channel:ROOM1:ALICE');
        expect(userText(t.requests[0])).toBe('[Rocket.Chat room_id: ROOM1]\n\n[New message]\nsecret plans');
        expect(p.chat.posts).toEqual([{ target: { roomId: 'ROOM1', threadId: undefined }, text: '[ ](https://chat.test/channel/general?msg=MSG1) @alice the answer', kind: 'answer' }]);
    });

    it('prefixes the speaker in a shared thread session and answers in the thread without a quote', async () => {
        const { p, t } = ports();
        await runTurn({ ...roomTurn, message: { ...message, threadId: 'ROOT' } }, p);
        expect(userText(t.requests[0])).toBe('[Rocket.Chat room_id: ROOM1]\n\n[New message]\n[alice] secret plans');
        expect(t.requests[0].headers['X-Hermes-Session-Key']).toBe('agent:main:rocketchat:channel:ROOM1:ROOT');
        expect(p.chat.posts[0]).toEqual({ target: { roomId: 'ROOM1', threadId: 'ROOT' }, text: 'the answer', kind: 'answer' });
    });

    it('runs without a block and warns once when history cannot be read', async () => {
        const { p, t } = ports({ history: new FixedHistory([], {}, true) });
        await runTurn(roomTurn, p);
        expect(userText(t.requests[0])).toBe('secret plans');
        expect(p.log.lines.filter((l) => l.startsWith('warn'))).toHaveLength(1);
    });

    it('posts one short notice on failure and logs the cause without the key or the text', async () => {
        const { p } = ports({ t: transport(() => ({ status: 401, headers: {}, body: '{"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}' })) });
        expect(await runTurn(roomTurn, p)).toEqual({ kind: 'failed', failure: 'unauthorized' });
        expect(p.chat.posts).toHaveLength(1);
        expect(p.chat.posts[0].text).toContain("Hermes rejected the app's credentials — ask an administrator");
        expect(p.chat.posts[0].kind).toBe('notice');
        const logged = p.log.lines.join('\n');
        expect(logged).toContain('HTTP 401 invalid_api_key');
        expect(logged).not.toContain(KEY);
        expect(logged).not.toContain('secret plans');
    });

    it('tells the asker when the app is not configured', async () => {
        const { p } = ports({ config: undefined, hermes: undefined });
        expect(await runTurn(roomTurn, p)).toEqual({ kind: 'failed', failure: 'not-configured' });
        expect(p.chat.posts[0].text).toContain('not configured');
    });

    it('/new starts a new generation, confirms in place and sends nothing to Hermes', async () => {
        const { p, t } = ports();
        await runTurn(roomTurn, p);
        const before = (await p.sessions.get('agent:main:rocketchat:channel:ROOM1:ALICE')).sessionId;
        await runTurn({ ...roomTurn, text: '/new' }, p);
        expect(t.requests).toHaveLength(1);
        expect(p.chat.posts[1].text).toContain('Started a new conversation');
        await runTurn(roomTurn, p);
        expect(t.requests[1].headers['X-Hermes-Session-Id']).not.toBe(before);
        expect(t.requests[1].headers['X-Hermes-Session-Id']).toMatch(/_g1$/);
    });

    it('refuses an unknown /command instead of passing it to Hermes', async () => {
        const { p, t } = ports();
        await runTurn({ ...roomTurn, text: '/shutdown now' }, p);
        expect(t.requests).toHaveLength(0);
        expect(p.chat.posts[0].text).toContain('Unknown command `/shutdown`');
    });

    it('stores the session id Hermes rotated to and uses it next time', async () => {
        let n = 0;
        const t = transport(() => (n++ === 0 ? ok('a', { 'x-hermes-session-id': 'rotated-1' }) : ok('b')));
        const { p } = ports({ t });
        await runTurn(roomTurn, p);
        await runTurn(roomTurn, p);
        expect(t.requests[1].headers['X-Hermes-Session-Id']).toBe('rotated-1');
    });

    it('splits a long answer, quoting only the first part, and says which part failed', async () => {
        const long = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}. ${'lorem ipsum '.repeat(20)}`).join('\n\n');
        const { p } = ports({ t: transport(() => ok(long)), server: async () => ({ maxMessageSize: 1000, siteUrl: 'https://chat.test' }) });
        p.chat.failOn = 3;
        await runTurn(roomTurn, p);
        expect(p.chat.posts[0].text.startsWith('[ ](https://chat.test/channel/general?msg=MSG1) @alice Paragraph 0.')).toBe(true);
        expect(p.chat.posts[1].text.startsWith('Paragraph')).toBe(true);
        expect(p.chat.posts).toHaveLength(3);
        expect(p.chat.posts[2]).toMatchObject({ kind: 'notice' });
        expect(p.chat.posts[2].text).toMatch(/Part 3 of \d+ of this answer could not be posted/);
        p.chat.posts.forEach((x) => expect(x.text.length).toBeLessThanOrEqual(1000));
    });
});
