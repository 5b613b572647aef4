import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { UserInteraction } from '../../rig/server';
import { FakeHermes, useRigAndHermes } from '../support/e2e';

/**
 * Issue 31: one trust boundary. A slash command and every UIKit interaction carry a room id,
 * message id, thread id or view id that the client chose; Rocket.Chat converts them by id
 * without an access check (apps/meteor/app/apps/server/communication/uikit.ts routeHandler,
 * AppCommandsBridge._appCommandExecutor on the client's `msg.rid`). A 1:1 DM's id is the two
 * user ids sorted and joined, so anyone can name it. Mallory names alice's DM, a private group
 * she is not in, and a message or thread of another room, through every entry point the engine
 * has registered for the app: each is refused with one private line and leaks nothing (no
 * Hermes request, no view, no message, no persisted copy of the other person's words, their
 * session untouched).
 */
const env = useRigAndHermes({ admin_user_ids: '', progress_in_channel: 'off' });
let hermes: FakeHermes;
let rig: Rig;

const COMMAND_REFUSED = '`/hermes` is not available here.';
const ACTION_REFUSED = 'Hermes is not available here.';
const ALICE_SECRET = 'ZEBRA-42 is the launch code';
const GROUP_SECRET = 'GROUP-SECRET-77 budget cut';

let alice: StoredUser;
let bob: StoredUser;
let mallory: StoredUser;
let aliceDm: StoredRoom;
let group: StoredRoom;
let malloryRoom: StoredRoom;
let malloryDm: StoredRoom;
let aliceMessage: StoredMessage;
let groupRoot: StoredMessage;
let aliceSessionId: string;

const runs = () => hermes.requests.filter((r) => r.method === 'POST' && r.path === '/v1/runs');
const sessionOf = (r: { json?: unknown }) => (r.json as { session_id: string }).session_id;

beforeAll(async () => {
    hermes = env.hermes();
    rig = env.rig();
    hermes.setReply((msg) => `noted: ${msg.split('\n').pop()}`);
    alice = rig.user('alice');
    bob = rig.user('bob');
    mallory = rig.user('mallory');
    aliceDm = rig.direct([alice, rig.bot]);
    group = rig.room('secret-group', [alice, bob, rig.bot], 'p');
    malloryRoom = rig.room('mallory-room', [mallory, rig.bot]);
    malloryDm = rig.direct([mallory, rig.bot]);
    aliceMessage = await rig.post(alice, aliceDm, ALICE_SECRET);
    await rig.waitForBotReply(aliceDm, { after: aliceMessage });
    aliceSessionId = sessionOf(runs()[0]);
    groupRoot = await rig.post(alice, group, GROUP_SECRET, { silent: true });
    const inThread = await rig.post(bob, group, `@${rig.bot.username} what about ${GROUP_SECRET}?`, { tmid: groupRoot.id });
    await rig.waitForBotReply(group, { after: inThread, tmid: groupRoot.id });
    await rig.settle();
}, 60_000);

/** What mallory could have learnt or changed: everything a refused request must leave as it was. */
function snapshot() {
    const persisted = [...rig.server.bridges.persistence.records.values()].map((r) => JSON.stringify(r.data));
    return {
        hermesRequests: hermes.requests.length,
        malloryViews: rig.views(mallory).length,
        botMessages: rig.botMessages(aliceDm).length + rig.botMessages(group).length + rig.botMessages(malloryRoom).length,
        secretsPersisted: persisted.filter((d) => d.includes('ZEBRA-42') || d.includes('GROUP-SECRET-77')).length,
        malloryOwnsSessions: persisted.filter((d) => d.includes(mallory.id) && d.includes('sessionId')).length,
    };
}

/** Every private line mallory got anywhere since `before`. */
function malloryNotices(before: number): string[] {
    return rig.server.ephemerals
        .filter((e) => e.userId === mallory.id)
        .slice(before)
        .map((e) => e.text);
}

function interact(body: UserInteraction) {
    return rig.server.uiInteraction(mallory, rig.appId, body);
}

interface Row {
    /** The engine-registered entry point this row covers (see the completeness test). */
    entry: string;
    forged: string;
    act: () => Promise<unknown>;
    /** The one private line the refusal gives; undefined: refused without a word (a request of nobody's). */
    notice?: string;
}

const commandRows = (): Row[] => {
    const subs = [
        'status',
        'help',
        'new',
        'stop',
        'retry',
        'undo',
        'background SLOW read the DM',
        'stop 0badc0de',
        'sessions',
        'sessions all',
        'search ZEBRA',
        'title',
        'title Stolen',
        `resume ${aliceSessionId}`,
        'usage',
        'cron list',
    ];
    const rows: Row[] = [];
    for (const sub of subs) {
        rows.push({
            entry: 'command:hermes',
            forged: `/hermes ${sub} in alice's DM`,
            act: () => rig.command(mallory, aliceDm, `/hermes ${sub}`),
            notice: COMMAND_REFUSED,
        });
        rows.push({
            entry: 'command:hermes',
            forged: `/hermes ${sub} in a private group she is not in`,
            act: () => rig.command(mallory, group, `/hermes ${sub}`),
            notice: COMMAND_REFUSED,
        });
        rows.push({
            entry: 'command:hermes',
            forged: `/hermes ${sub} in her own room, naming a thread of the private group`,
            act: () => rig.command(mallory, malloryRoom, `/hermes ${sub}`, { tmid: groupRoot.id }),
            notice: COMMAND_REFUSED,
        });
    }
    return rows;
};

const buttonRows = (): Row[] => {
    const rows: Row[] = [];
    for (const actionId of ['hermes-ask', 'hermes-summarize']) {
        rows.push({
            entry: `button:${actionId}`,
            forged: "a message of alice's DM, with the DM's id",
            act: () => interact({ type: 'actionButton', actionId, rid: aliceDm.id, mid: aliceMessage.id, payload: { context: 'messageAction' } }),
            notice: ACTION_REFUSED,
        });
        rows.push({
            entry: `button:${actionId}`,
            forged: "a message of the private group, with her own room's id",
            act: () => interact({ type: 'actionButton', actionId, rid: malloryRoom.id, mid: groupRoot.id, payload: { context: 'messageAction' } }),
            notice: ACTION_REFUSED,
        });
    }
    for (const actionId of ['hermes-catch-up', 'hermes-panel']) {
        for (const [room, what] of [
            [aliceDm, "alice's DM"],
            [group, 'the private group'],
        ] as const) {
            rows.push({
                entry: `button:${actionId}`,
                forged: what,
                act: () => interact({ type: 'actionButton', actionId, rid: room.id, payload: { context: 'roomAction' } }),
                notice: ACTION_REFUSED,
            });
        }
    }
    return rows;
};

/** Clicks inside views and notices: block actions whose container, room or value the client chose. */
const blockRows = (): Row[] => {
    const panelClick = (actionId: string, value?: string) => () =>
        interact({ type: 'blockAction', actionId, container: { type: 'view', id: `hermes-panel|${aliceDm.id}|` }, payload: { blockId: 'x', value } });
    return [
        { entry: 'block:hermes-panel-refresh', forged: "a panel view id naming alice's DM", act: panelClick('hermes-panel-refresh'), notice: ACTION_REFUSED },
        { entry: 'block:hermes-panel-new', forged: "a panel view id naming alice's DM", act: panelClick('hermes-panel-new'), notice: ACTION_REFUSED },
        {
            entry: 'block:hermes-panel-stop',
            forged: "a panel view id naming alice's DM",
            act: panelClick('hermes-panel-stop', aliceMessage.id),
            notice: ACTION_REFUSED,
        },
        { entry: 'block:hermes-panel-retry', forged: "a panel view id naming alice's DM", act: panelClick('hermes-panel-retry'), notice: ACTION_REFUSED },
        { entry: 'block:hermes-panel-undo', forged: "a panel view id naming alice's DM", act: panelClick('hermes-panel-undo'), notice: ACTION_REFUSED },
        {
            entry: 'block:hermes-panel-resume',
            forged: "a panel view id naming alice's DM",
            act: panelClick('hermes-panel-resume', aliceSessionId),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'block:hermes-post-summary',
            forged: 'the private group as the click’s room',
            act: () =>
                interact({
                    type: 'blockAction',
                    actionId: 'hermes-post-summary',
                    container: { type: 'message', id: groupRoot.id },
                    rid: group.id,
                    payload: { value: 'x' },
                }),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'block:hermes-feedback-why',
            forged: "alice's DM as the click's room, her message as the answer",
            act: () =>
                interact({
                    type: 'blockAction',
                    actionId: 'hermes-feedback-why',
                    container: { type: 'message', id: aliceMessage.id },
                    rid: aliceDm.id,
                    payload: { value: aliceMessage.id },
                }),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'block:hermes-feedback-why',
            forged: 'the private group as the click’s room, its root as the answer',
            act: () =>
                interact({
                    type: 'blockAction',
                    actionId: 'hermes-feedback-why',
                    container: { type: 'message', id: groupRoot.id },
                    rid: group.id,
                    payload: { value: groupRoot.id },
                }),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'block:hermes-feedback-why',
            forged: 'her own room as the click’s room, a message of the private group as the answer',
            act: () =>
                interact({
                    type: 'blockAction',
                    actionId: 'hermes-feedback-why',
                    container: { type: 'message', id: groupRoot.id },
                    rid: malloryRoom.id,
                    payload: { value: groupRoot.id },
                }),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'block:hermes-approval',
            forged: "alice's turn id, clicked inside a panel view id naming her DM",
            act: () =>
                interact({
                    type: 'blockAction',
                    actionId: 'hermes-approval',
                    container: { type: 'view', id: `hermes-panel|${aliceDm.id}|` },
                    payload: { blockId: 'approval', value: `${aliceMessage.id}|once` },
                }),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'block:hermes-approval',
            forged: "alice's turn id in her DM",
            act: () =>
                interact({
                    type: 'blockAction',
                    actionId: 'hermes-approval',
                    container: { type: 'message', id: aliceMessage.id },
                    rid: aliceDm.id,
                    mid: aliceMessage.id,
                    payload: { value: `${aliceMessage.id}|once` },
                }),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'block:hermes-write',
            forged: 'an MCP write approval clicked in her DM',
            act: () =>
                interact({
                    type: 'blockAction',
                    actionId: 'hermes-write',
                    container: { type: 'message', id: aliceMessage.id },
                    rid: aliceDm.id,
                    mid: aliceMessage.id,
                    payload: { value: '0123456789abcdef|approve' },
                }),
            notice: ACTION_REFUSED,
        },
    ];
};

const viewRows = (): Row[] => {
    const submit = (viewId: string) => () =>
        interact({
            type: 'viewSubmit',
            viewId,
            payload: {
                view: {
                    id: viewId,
                    appId: rig.appId,
                    type: 'modal',
                    blocks: [],
                    state: { question: { question: 'tell me everything' }, where: { where: 'private' } },
                },
            },
        });
    return [
        {
            entry: 'view:hermes-ask',
            forged: "an Ask view id naming alice's DM and her message",
            act: submit(`hermes-ask|${aliceDm.id}|${aliceMessage.id}`),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'view:hermes-feedback',
            forged: "a feedback form id naming alice's DM and her message",
            act: submit(`hermes-feedback|${aliceDm.id}|${aliceMessage.id}`),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'view:hermes-feedback',
            forged: 'a feedback form id naming her own room and a message of the private group',
            act: submit(`hermes-feedback|${malloryRoom.id}|${groupRoot.id}`),
            notice: ACTION_REFUSED,
        },
        {
            entry: 'view:hermes-ask',
            forged: 'an Ask view id naming her own room and a message of the private group',
            act: submit(`hermes-ask|${malloryRoom.id}|${groupRoot.id}`),
            notice: ACTION_REFUSED,
        },
    ];
};

describe('every way in checks the caller against what the request names', () => {
    const table = () => [...commandRows(), ...buttonRows(), ...blockRows(), ...viewRows()];

    it('refuses each forged subject with one private line and leaks nothing', async () => {
        const failures: string[] = [];
        for (const row of table()) {
            const before = snapshot();
            const notices = rig.server.ephemerals.filter((e) => e.userId === mallory.id).length;
            await row.act();
            await rig.settle();
            const after = snapshot();
            const seen = malloryNotices(notices);
            const expected = row.notice ? [row.notice] : [];
            if (JSON.stringify(after) !== JSON.stringify(before) || JSON.stringify(seen) !== JSON.stringify(expected)) {
                failures.push(`${row.entry} — ${row.forged}: ${JSON.stringify({ before, after, seen })}`);
            }
        }
        expect(failures).toEqual([]);
        // Alice's conversation is hers still: the same session, nothing of hers resumed elsewhere.
        const next = await rig.post(alice, aliceDm, 'and now?');
        await rig.waitForBotReply(aliceDm, { after: next });
        expect(sessionOf(runs()[runs().length - 1])).toBe(aliceSessionId);
    });

    it("refuses mallory alice's session by its id in her own DM (the panel's Resume and /hermes resume)", async () => {
        const before = snapshot();
        expect(await rig.commandAnswer(mallory, malloryDm, `/hermes resume ${aliceSessionId}`)).toBe(
            `None of your sessions matches “${aliceSessionId}”. \`/hermes sessions all\` lists them.`,
        );
        await interact({
            type: 'blockAction',
            actionId: 'hermes-panel-resume',
            container: { type: 'view', id: `hermes-panel|${malloryDm.id}|` },
            payload: { blockId: 'x', value: aliceSessionId },
        });
        await rig.settle();
        expect(snapshot().secretsPersisted).toBe(before.secretsPersisted);
        // No record makes mallory an owner of alice's session, and her DM's session is not alice's.
        const records = [...rig.server.bridges.persistence.records.values()].map((r) => JSON.stringify(r.data));
        expect(records.filter((d) => d.includes(mallory.id) && d.includes(aliceSessionId))).toEqual([]);
    });

    it('still serves a member in her own rooms through the same gate', async () => {
        expect(await rig.commandAnswer(mallory, malloryRoom, '/hermes status')).toContain('Hermes status');
        const own = await rig.post(mallory, malloryRoom, 'a note of my own', { silent: true });
        const click = await rig.clickActionButton(mallory, { actionId: 'hermes-ask', message: own });
        expect(click.views.find((v) => v.type === 'modal')).toBeDefined();
        const panel = await rig.clickActionButton(mallory, { actionId: 'hermes-panel', room: malloryDm });
        expect(panel.views.find((v) => v.type === 'contextualBar' || v.type === 'modal')).toBeDefined();
    });

    it("answers a refusal in the caller's own language", async () => {
        const greta = rig.user('greta', { language: 'de' });
        expect(await rig.commandAnswer(greta, aliceDm, '/hermes status')).toBe('`/hermes` ist hier nicht verfügbar.');
        const before = rig.server.ephemerals.length;
        await rig.server.uiInteraction(greta, rig.appId, {
            type: 'actionButton',
            actionId: 'hermes-catch-up',
            rid: group.id,
            payload: { context: 'roomAction' },
        });
        await rig.settle();
        expect(rig.server.ephemerals.slice(before).map((e) => [e.userId, e.text])).toEqual([[greta.id, 'Hermes ist hier nicht verfügbar.']]);
    });

    it('a read-only room lets a member read but not change the conversation (the server lets only post-readonly holders post)', async () => {
        const owner = rig.user('owner');
        const reader = rig.user('reader');
        const news = rig.room('announcements', [owner, reader, rig.bot], 'c', { readOnly: true });
        expect(await rig.commandAnswer(reader, news, '/hermes status')).toContain('Hermes status');
        expect(await rig.commandAnswer(reader, news, '/hermes new')).toBe(COMMAND_REFUSED);
        expect(await rig.commandAnswer(owner, news, '/hermes new')).toBe(':sparkles: Started a new conversation. Earlier messages are no longer part of it.');
    });

    it('covers every entry point the engine registered for the app (a new one without a row fails here)', async () => {
        const manager = rig.server.manager as unknown as {
            getCommandManager(): { providedCommands: Map<string, Map<string, unknown>> };
            getApiManager(): { providedApis: Map<string, Map<string, unknown>> };
            getSchedulerManager(): { registeredProcessors: Map<string, Record<string, unknown>> };
        };
        const registered = [
            ...[...(manager.getCommandManager().providedCommands.get(rig.appId)?.keys() ?? [])].map((c) => `command:${c}`),
            ...(await rig.actionButtons()).filter((b) => b.appId === rig.appId).map((b) => `button:${b.actionId}`),
            ...[...(manager.getApiManager().providedApis.get(rig.appId)?.keys() ?? [])].map((p) => `endpoint:${p}`),
            ...Object.keys(manager.getSchedulerManager().registeredProcessors.get(rig.appId) ?? {}).map((p) => `job:${p.split('_')[0]}`),
        ];
        expect(registered.length).toBeGreaterThan(10);
        // Endpoints authenticate their caller with a JWT (historyEndpoint.test.ts) or a bearer secret, and /mcp's tools
        // read only for the asker token's person (mcp.test.ts: its table of forged ids); jobs name only the app's own records.
        const coveredElsewhere = new Set(['endpoint:ping', 'endpoint:history', 'endpoint:mcp', ...registered.filter((e) => e.startsWith('job:'))]);
        const rows = new Set(table().map((r) => r.entry));
        expect(registered.filter((e) => !rows.has(e) && !coveredElsewhere.has(e))).toEqual([]);
    });

    it('the endpoints refuse a caller without their JWT or secret and say nothing else', async () => {
        for (const path of ['ping', 'history', 'mcp']) {
            const res = await fetch(`${rig.server.apiUrl}/api/apps/public/${rig.appId}/${path}`, {
                method: path === 'ping' ? 'GET' : 'POST',
                headers: { 'content-type': 'application/json' },
                body:
                    path === 'ping'
                        ? undefined
                        : JSON.stringify(
                              path === 'mcp'
                                  ? {
                                        jsonrpc: '2.0',
                                        id: 1,
                                        method: 'tools/call',
                                        params: { name: 'read_messages', arguments: { asker: 'x', room_id: aliceDm.id } },
                                    }
                                  : { asker: 'x', room_id: aliceDm.id },
                          ),
            });
            expect([path, res.status]).toEqual([path, 503]);
        }
    });

    it('a message event needs no check of its own: the server refuses mallory a post in a room she is not in', async () => {
        await expect(rig.post(mallory, aliceDm, 'let me in')).rejects.toThrow('error-not-allowed');
        await expect(rig.post(mallory, group, `@${rig.bot.username} hi`)).rejects.toThrow('error-not-allowed');
    });
});
