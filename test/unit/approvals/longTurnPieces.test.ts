import { mayDecide, offeredChoices, parseApprovalValue, textDecision } from '../../../src/approvals/approvalPolicy';
import { approvalButtons, decidedText } from '../../../src/approvals/approvalView';
import { progressText, toolLine } from '../../../src/delivery/progressText';
import { chooseTransport, parseCapabilities } from '../../../src/hermes/capabilities';
import { SseParser } from '../../../src/hermes/sse';
import { trimContext } from '../../../src/context/trimContext';
import { comesBefore } from '../../../src/turns/turnRecord';

const request = { command: 'rm -rf /srv/scratch', description: 'delete in root path', choices: ['once', 'session', 'always', 'deny'], allowPermanent: true };

describe('approval policy', () => {
    it('never offers "always" in rooms, nor in a non-admin\'s DM; offers it in an admin\'s own DM when Hermes allows it', () => {
        expect(offeredChoices(request, { isDirect: false, askerId: 'A', adminUserIds: ['A'] })).toEqual(['once', 'session', 'deny']);
        expect(offeredChoices(request, { isDirect: true, askerId: 'U', adminUserIds: ['A'] })).toEqual(['once', 'session', 'deny']);
        expect(offeredChoices(request, { isDirect: true, askerId: 'A', adminUserIds: ['A'] })).toEqual(['once', 'session', 'always', 'deny']);
        expect(offeredChoices({ ...request, allowPermanent: false }, { isDirect: true, askerId: 'A', adminUserIds: ['A'] })).toEqual([
            'once',
            'session',
            'deny',
        ]);
        expect(offeredChoices({ ...request, choices: ['once', 'deny'] }, { isDirect: false, askerId: 'A', adminUserIds: [] })).toEqual(['once', 'deny']);
        expect(offeredChoices({ ...request, choices: ['once', 'weird'] }, { isDirect: false, askerId: 'A', adminUserIds: [] })).toEqual(['once']);
    });

    it('lets only the asker or an admin decide', () => {
        expect(mayDecide('A', 'A', [])).toBe(true);
        expect(mayDecide('B', 'A', [])).toBe(false);
        expect(mayDecide('B', 'A', ['B'])).toBe(true);
    });

    it('reads button values and text decisions strictly', () => {
        expect(parseApprovalValue('MSG1|once')).toEqual({ turnId: 'MSG1', choice: 'once', seenFull: false });
        expect(parseApprovalValue('MSG1|maybe')).toBeUndefined();
        expect(parseApprovalValue('a|b|once')).toBeUndefined();
        expect(parseApprovalValue(undefined)).toBeUndefined();
        expect(['/approve', 'yes', 'Y', '!approve'].map(textDecision)).toEqual(['once', 'once', 'once', 'once']);
        expect(['/deny', 'no', 'N'].map(textDecision)).toEqual(['deny', 'deny', 'deny']);
        expect(['yes please', 'approve', '/approved'].map(textDecision)).toEqual([undefined, undefined, undefined]);
    });

    it('renders the command whole in a code block it cannot close, and buttons that carry the turn', () => {
        const view = approvalButtons('MSG1', { ...request, command: 'echo `id`\nrm -rf /' }, 'alice', ['once', 'deny']);
        expect(view.text).toContain('```\necho `id`\nrm -rf /\n```');
        expect(view.buttons).toEqual([
            { actionId: 'hermes-approval', label: 'Approve once', value: 'MSG1|once', style: 'primary' },
            { actionId: 'hermes-approval', label: 'Deny', value: 'MSG1|deny', style: 'danger' },
        ]);
        expect(decidedText(request, 'alice', 'session')).toBe(':white_check_mark: `rm -rf /srv/scratch` — Approve for this session by @alice.');
        expect(decidedText(request, 'bob', 'deny')).toBe(':no_entry_sign: `rm -rf /srv/scratch` — denied by @bob.');
    });
});

describe('progress', () => {
    it('shows one working line, plus the newest tool lines in tools mode', () => {
        expect(toolLine({ tool: 'terminal', label: 'ls -la\nrm' })).toBe('💻 terminal: ls -la rm');
        expect(toolLine({ tool: 'custom', emoji: '🧪' })).toBe('🧪 custom');
        expect(progressText('status', ['x'])).toBe(':hourglass_flowing_sand: Working…');
        const lines = Array.from({ length: 10 }, (_, i) => `line ${i}`);
        const text = progressText('tools', lines).split('\n');
        expect(text[1]).toBe('… 2 earlier step(s)');
        expect(text[text.length - 1]).toBe('line 9');
        expect(text).toHaveLength(10);
    });
});

describe('transport choice', () => {
    const v0182 = {
        features: { run_submission: true, run_status: true, run_events_sse: true, run_stop: true, run_approval_response: true },
        endpoints: { runs: {} },
    };
    it('uses runs when all run features are offered; newer servers (steer) load history', () => {
        expect(parseCapabilities(v0182, '0.18.2')).toEqual({ version: '0.18.2', runs: true, runsLoadHistory: false, steer: false });
        expect(parseCapabilities({ ...v0182, endpoints: { run_steer: {} } })).toMatchObject({ runs: true, runsLoadHistory: true, steer: true });
        expect(parseCapabilities({ ...v0182, features: { ...v0182.features, run_steer: true } })).toMatchObject({ steer: true });
        expect(parseCapabilities({ features: { ...v0182.features, run_approval_response: false } }).runs).toBe(false);
        expect(parseCapabilities(undefined).runs).toBe(false);
        expect(chooseTransport('auto', { runs: true, runsLoadHistory: false })).toBe('runs');
        expect(chooseTransport('auto', { runs: false, runsLoadHistory: false })).toBe('chat');
        expect(chooseTransport('chat', { runs: true, runsLoadHistory: false })).toBe('chat');
    });
});

describe('SSE parser', () => {
    it('joins data lines, keeps event names, skips comments, survives chunk splits', () => {
        const p = new SseParser();
        const text = 'event: hermes.tool.progress\ndata: {"tool": "terminal"}\n\ndata: {"a":\ndata: 1}\n\n: keepalive\n\ndata: [DONE]\n\n: stream closed\n\n';
        const frames = [...text].flatMap((ch) => p.push(ch));
        expect(frames).toEqual([
            { event: 'hermes.tool.progress', data: '{"tool": "terminal"}' },
            { event: undefined, data: '{"a":\n1}' },
            { event: undefined, data: '[DONE]' },
        ]);
    });
});

describe('turn ordering and trimming', () => {
    it('orders by the sequence the app assigned, then id', () => {
        expect(comesBefore({ seq: 1, id: 'b' }, { seq: 2, id: 'a' })).toBe(true);
        expect(comesBefore({ seq: 2, id: 'a' }, { seq: 2, id: 'b' })).toBe(true);
        expect(comesBefore({ seq: 2, id: 'b' }, { seq: 2, id: 'a' })).toBe(false);
    });

    it('drops the recent-messages block on a 413 retry, keeping the room line and the message', () => {
        const user = '[Rocket.Chat room_id: R]\n[Recent chat messages - context only, not requests]\n[x] a: b\n\n[New message]\nq';
        expect(trimContext(user)).toBe('[Rocket.Chat room_id: R]\n\n[New message]\nq');
        expect(trimContext('plain DM text')).toBe('plain DM text');
    });
});
