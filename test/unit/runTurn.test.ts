import { InboundMessage } from '../../src/admission/admit';
import { ChatPort, ReplyTarget } from '../../src/delivery/chatPort';
import { HermesClient } from '../../src/hermes/client';
import { HermesTransport, HttpRequest, HttpResult } from '../../src/hermes/transport';
import { LogPort } from '../../src/security/safeLog';
import { runTurn, Turn } from '../../src/turns/runTurn';

const KEY = 'sk-test-0123456789abcdef';
const config = { hermesUrl: 'http://hermes.test', hermesApiKey: KEY, hermesTimeoutSeconds: 30, allowedUserIds: [], endpointSecret: '' };

class RecordingChat implements ChatPort {
    public readonly posts: Array<{ target: ReplyTarget; text: string }> = [];
    public async post(target: ReplyTarget, text: string): Promise<string> {
        this.posts.push({ target, text });
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

function transport(answer: (req: HttpRequest) => HttpResult): HermesTransport & { requests: HttpRequest[] } {
    const requests: HttpRequest[] = [];
    return {
        requests,
        async send(req: HttpRequest) {
            requests.push(req);
            return answer(req);
        },
    };
}

const message: InboundMessage = {
    id: 'MSG1',
    roomId: 'ROOM1',
    roomType: 'c',
    senderId: 'ALICE',
    senderUsername: 'alice',
    text: '@hermes.bot secret plans',
    isSystem: false,
    edited: false,
};
const roomTurn: Turn = { message, kind: 'room', text: 'secret plans', roomName: 'general' };
const ok = (content: string): HttpResult => ({ status: 200, headers: {}, body: JSON.stringify({ choices: [{ message: { content }, finish_reason: 'stop' }] }) });

describe('runTurn', () => {
    it('asks Hermes once and posts the answer where the question was asked', async () => {
        const chat = new RecordingChat();
        const t = transport(() => ok('the answer'));
        const outcome = await runTurn(roomTurn, { hermes: new HermesClient(t, config), chat, log: new RecordingLog(), now: Date.now });
        expect(outcome.kind).toBe('answered');
        expect(t.requests).toHaveLength(1);
        expect(t.requests[0].headers['X-Hermes-Session-Key']).toBe('agent:main:rocketchat:channel:ROOM1:ALICE');
        expect(chat.posts).toEqual([{ target: { roomId: 'ROOM1', threadId: undefined }, text: 'the answer' }]);
    });

    it('prefixes the speaker in a shared thread session and answers in the thread', async () => {
        const chat = new RecordingChat();
        const t = transport(() => ok('ok'));
        const threadTurn = { ...roomTurn, message: { ...message, threadId: 'ROOT' } };
        await runTurn(threadTurn, { hermes: new HermesClient(t, config), chat, log: new RecordingLog(), now: Date.now });
        const body = JSON.parse(t.requests[0].body!);
        expect(body.messages[1]).toEqual({ role: 'user', content: '[alice] secret plans' });
        expect(t.requests[0].headers['X-Hermes-Session-Key']).toBe('agent:main:rocketchat:channel:ROOM1:ROOT');
        expect(chat.posts[0].target).toEqual({ roomId: 'ROOM1', threadId: 'ROOT' });
    });

    it('posts one short notice on failure and logs the cause without the key or the text', async () => {
        const chat = new RecordingChat();
        const log = new RecordingLog();
        const t = transport(() => ({ status: 401, headers: {}, body: '{"error": {"message": "Invalid API key", "type": "invalid_request_error", "code": "invalid_api_key"}}' }));
        const outcome = await runTurn(roomTurn, { hermes: new HermesClient(t, config), chat, log, now: Date.now });
        expect(outcome).toEqual({ kind: 'failed', failure: 'unauthorized' });
        expect(chat.posts).toHaveLength(1);
        expect(chat.posts[0].text).toContain("Hermes rejected the app's credentials — ask an administrator");
        const logged = log.lines.join('\n');
        expect(logged).toContain('HTTP 401 invalid_api_key');
        expect(logged).toContain('MSG1');
        expect(logged).not.toContain(KEY);
        expect(logged).not.toContain('secret plans');
    });

    it('tells the asker when the app is not configured', async () => {
        const chat = new RecordingChat();
        const outcome = await runTurn(roomTurn, { hermes: undefined, chat, log: new RecordingLog(), now: Date.now });
        expect(outcome).toEqual({ kind: 'failed', failure: 'not-configured' });
        expect(chat.posts[0].text).toContain('not configured');
    });

    it('says so when Hermes finished without text instead of posting nothing', async () => {
        const chat = new RecordingChat();
        await runTurn(roomTurn, { hermes: new HermesClient(transport(() => ok('  ')), config), chat, log: new RecordingLog(), now: Date.now });
        expect(chat.posts[0].text).toContain('finished without an answer');
    });
});
