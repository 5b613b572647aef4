import { askModal, PanelModel, panelView, parseViewId } from '../../../src/actions/views';

/**
 * The app's views as the client receives them: the ids that carry a room (a claim the gate
 * checks: engine/entry/UiActions.ts), the Ask modal, and the panel's blocks for each state.
 */
describe('parseViewId', () => {
    it.each<[string | undefined, ReturnType<typeof parseViewId>]>([
        ['hermes-ask|ROOM1|MSG1', { kind: 'hermes-ask', roomId: 'ROOM1', other: 'MSG1' }],
        ['hermes-panel|ROOM1|', { kind: 'hermes-panel', roomId: 'ROOM1', other: undefined }],
        ['hermes-panel|ROOM1|THREAD_1-a', { kind: 'hermes-panel', roomId: 'ROOM1', other: 'THREAD_1-a' }],
        ['hermes-panel||X', undefined],
        ['hermes-other|R|X', undefined],
        ['xhermes-panel|R|X', undefined],
        ['hermes-panel|R|X|Y', undefined],
        ['hermes-panel|R/..|X', undefined],
        [`hermes-panel|${'r'.repeat(65)}|`, undefined],
        [`hermes-panel|${'r'.repeat(64)}|${'t'.repeat(64)}`, { kind: 'hermes-panel', roomId: 'r'.repeat(64), other: 't'.repeat(64) }],
        [`hermes-panel|R|${'t'.repeat(65)}`, undefined],
        [undefined, undefined],
    ])('%j', (id, parsed) => {
        expect(parseViewId(id)).toEqual(parsed);
    });
});

const pt = (text: string) => ({ type: 'plain_text', text, emoji: true });

describe('askModal', () => {
    it('names its room and message in its id; quotes the message; asks where the answer goes (the thread by default)', () => {
        const modal = askModal('ROOM1', 'MSG1', 'the plan');
        expect(modal.id).toBe('hermes-ask|ROOM1|MSG1');
        expect(modal.type).toBe('modal');
        expect(modal.title).toEqual(pt('Ask Hermes'));
        expect(modal.blocks).toEqual([
            { type: 'section', blockId: 'quoted', text: { type: 'mrkdwn', text: '> the plan' } },
            {
                type: 'input',
                blockId: 'question',
                label: pt('Your question'),
                element: { type: 'plain_text_input', actionId: 'question', multiline: true },
            },
            {
                type: 'input',
                blockId: 'where',
                label: pt('The answer goes'),
                element: {
                    type: 'static_select',
                    actionId: 'where',
                    initialValue: 'thread',
                    options: [
                        { text: pt("To the message's thread"), value: 'thread' },
                        { text: pt('Only to me'), value: 'private' },
                    ],
                },
            },
        ]);
        expect(modal.submit).toEqual({
            type: 'button',
            actionId: 'submit',
            text: pt('Ask'),
            style: 'primary',
            blockId: 'submit',
            appId: '',
        });
    });
});

const model = (over: Partial<PanelModel> = {}): PanelModel => ({
    roomId: 'ROOM1',
    turns: [],
    sessions: [],
    canResume: false,
    canRetry: false,
    canUndo: false,
    today: { turns: 3, in: 12_300, out: 450 },
    timeZone: 'UTC',
    ...over,
});

type AnyBlock = {
    type: string;
    text?: { text: string };
    elements?: Array<{ actionId: string; value: string; style?: string; text: { text: string } }>;
    accessory?: { actionId: string; value: string };
};
const texts = (blocks: AnyBlock[]) =>
    blocks.map((b) =>
        b.type === 'section'
            ? b.text?.text
            : b.type === 'actions'
              ? `[${(b.elements ?? []).map((e) => e.text.text).join('|')}]`
              : b.type === 'divider'
                ? '---'
                : `? ${b.type}`,
    );

describe('panelView', () => {
    it('nothing running, no sessions: says so; usage today; Refresh and New session only', () => {
        const view = panelView(model());
        expect(view.id).toBe('hermes-panel|ROOM1|');
        expect(view.type).toBe('contextualBar');
        expect(view.title).toEqual(pt('Hermes'));
        expect(texts(view.blocks as AnyBlock[])).toEqual([
            '*Your turn here*',
            'Nothing running for you here.',
            '---',
            '*Your sessions here*',
            'You have no sessions in this conversation yet.',
            '---',
            '*Your usage today*\n3 turns, 12k tokens in / 450 out',
            '[Refresh|New session]',
        ]);
        const last = (view.blocks as AnyBlock[]).at(-1);
        expect(last?.elements?.map((e) => [e.actionId, e.value])).toEqual([
            ['hermes-panel-refresh', 'ROOM1'],
            ['hermes-panel-new', 'ROOM1'],
        ]);
    });

    it('a running turn with its last five tools, a queued one, one awaiting approval with the same buttons; Stop under each', () => {
        const approval = {
            text: 'Run `rm -rf build`?',
            buttons: [{ actionId: 'hermes-approval', label: 'Allow once', value: 'T3|once', style: 'primary' as const }],
        };
        const view = panelView(
            model({
                threadId: 'TH1',
                notice: 'Resumed.',
                turns: [
                    { id: 'T1', elapsedMs: 12_400, tools: ['a', 'b', 'c', 'd', 'e', 'f'], queued: false },
                    { id: 'T2', elapsedMs: 0, tools: [], queued: true },
                    { id: 'T3', elapsedMs: 5_000, tools: [], queued: false, approval },
                ],
            }),
        );
        expect(view.id).toBe('hermes-panel|ROOM1|TH1');
        const blocks = view.blocks as AnyBlock[];
        expect(texts(blocks).slice(0, 11)).toEqual([
            'Resumed.',
            '---',
            '*Your turn here*',
            'Working for 12 s\n• b\n• c\n• d\n• e\n• f',
            '[Stop]',
            'Waiting for the turn ahead of it.',
            '[Stop]',
            'Waiting for your approval: see the message in the room.',
            'Run `rm -rf build`?',
            '[Allow once]',
            '[Stop]',
        ]);
        expect(blocks[4].elements?.[0]).toMatchObject({ actionId: 'hermes-panel-stop', value: 'T1', style: 'danger' });
        expect(blocks[9].elements?.[0]).toMatchObject({ actionId: 'hermes-approval', value: 'T3|once', style: 'primary' });
        expect(blocks[10].elements?.[0]).toMatchObject({ value: 'T3' });
    });

    it('sessions: five at most, the current marked, Resume only beside the person’s own other ones when they may resume; Retry and Undo when allowed', () => {
        const at = Date.UTC(2026, 11, 6, 9, 30);
        const sessions = [
            { id: 'S1', title: 'Current work', lastActive: at, current: true, own: true },
            { id: 'S2', title: 'Older', current: false, own: true },
            { id: 'S3', title: "Someone's", current: false, own: false },
            { id: 'S4', title: 'Four', current: false, own: true },
            { id: 'S5', title: 'Five', current: false, own: true },
            { id: 'S6', title: 'Six', current: false, own: true },
        ];
        const view = panelView(model({ sessions, canResume: true, canRetry: true, canUndo: true }));
        const blocks = view.blocks as AnyBlock[];
        const rows = blocks.filter((b) => b.type === 'section' && b.text?.text.startsWith('• '));
        expect(rows.map((b) => [b.text?.text, b.accessory?.value])).toEqual([
            ['• **Current work** · 2026-12-06 09:30 +00:00 · **current**', undefined],
            ['• **Older**', 'S2'],
            ["• **Someone's**", undefined],
            ['• **Four**', 'S4'],
            ['• **Five**', 'S5'],
        ]);
        expect(rows[1].accessory).toMatchObject({ actionId: 'hermes-panel-resume' });
        expect(texts(blocks).at(-1)).toBe('[Refresh|New session|Retry last answer|Undo last exchange]');
        expect(texts(blocks)).not.toContain('You have no sessions in this conversation yet.');
        expect(
            blocks
                .at(-1)
                ?.elements?.slice(2)
                .map((e) => [e.actionId, e.value]),
        ).toEqual([
            ['hermes-panel-retry', 'ROOM1'],
            ['hermes-panel-undo', 'ROOM1'],
        ]);
        // Not allowed to resume: no Resume anywhere; only Undo allowed: only Undo.
        const plain = panelView(model({ sessions, canUndo: true })).blocks as AnyBlock[];
        expect(plain.some((b) => b.accessory)).toBe(false);
        expect(texts(plain).at(-1)).toBe('[Refresh|New session|Undo last exchange]');
    });
});
