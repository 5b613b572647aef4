import { Rig, StoredMessage, StoredRoom, StoredUser } from '../../rig';
import { expectLogged, FakeHermes, lastAskerToken, pollUntil, useRigAndHermes } from '../support/e2e';
import { ASKER_KEY, MCP_SECRET, mcpClient } from '../support/mcpClient';

/**
 * Issue 37 §4: the MCP write tools (`mcp_write_tools`, off by default), in the real engine over
 * real HTTP. A tool call only proposes: the person the asker token names is shown the target and
 * the exact text in their conversation and decides with a button; nothing is posted or scheduled
 * before, nothing for anyone else's click, and nothing when the target stopped being theirs. The
 * table of hostile calls: forged and superseded tokens, a room the person is not in, another
 * person's DM, a read-only room, a room without the bot, a thread of another room.
 */
const env = useRigAndHermes({
    hermes_transport: 'chat',
    asker_key: ASKER_KEY,
    mcp_enabled: true,
    mcp_secret: MCP_SECRET,
    mcp_write_tools: true,
    progress_in_channel: 'off',
});
let hermes: FakeHermes;
let rig: Rig;
let n = 0;

beforeAll(() => {
    hermes = env.hermes();
    rig = env.rig();
});

beforeEach(() => {
    hermes.reset();
    hermes.setReply(() => 'ok');
});

afterEach(async () => {
    await rig.settle();
});

const person = (name: string) => rig.user(`${name}${++n}`);
const { rpc, tool } = mcpClient(() => rig);

/** Asks the bot in `room` (in a thread when `tmid`) and returns the asker token that turn carried. */
async function tokenFrom(who: StoredUser, room: StoredRoom, opts: { tmid?: string } = {}): Promise<string> {
    const asked = await rig.post(who, room, `@${rig.bot.username} help me write something`, opts);
    await rig.waitForBotReply(room, { after: asked, tmid: opts.tmid });
    return lastAskerToken(hermes);
}

const approvals = (room: StoredRoom) => rig.botMessagesOfKind(room, 'command').filter((m) => /Hermes asks to/.test(m.text));
const buttonValues = (m: StoredMessage) => (JSON.stringify(m.blocks).match(/[a-f0-9]{16}\|(approve|decline)/g) ?? []) as [string, string];
const current = (room: StoredRoom, id: string) => rig.botMessages(room).find((m) => m.id === id) as StoredMessage;

/** A team room where alice and the bot are, alice's conversation in it, and a second room to post into. */
function setting() {
    const alice = person('alice');
    const bob = person('bob');
    const team = rig.room(`team${n}`, [alice, bob, rig.bot]);
    const eng = rig.room(`eng${n}`, [alice, bob, rig.bot]);
    return { alice, bob, team, eng };
}

describe('post_message', () => {
    it('lists the write tools only with mcp_write_tools on; off, a call to one is an unknown tool', async () => {
        const names = async () => ((await rpc('tools/list')).result?.tools as Array<{ name: string }>).map((t) => t.name);
        expect(await names()).toEqual(['list_rooms', 'read_messages', 'search_messages', 'who_is', 'post_message', 'schedule_prompt']);
        await rig.setting('mcp_write_tools', false);
        try {
            expect(await names()).toEqual(['list_rooms', 'read_messages', 'search_messages', 'who_is']);
            const call = await rpc('tools/call', { name: 'post_message', arguments: { asker: 'x', text: 'hi' } });
            expect(call.error?.code).toBe(-32602);
        } finally {
            await rig.setting('mcp_write_tools', true);
        }
    });

    it('proposes in the conversation; nothing is posted until the asker clicks; then exactly that text, once', async () => {
        const { alice, bob, team, eng } = setting();
        const token = await tokenFrom(alice, team);
        const engBefore = rig.botMessages(eng).length;
        const text = 'Release moved to *Friday* @all — see `notes`';
        const result = await tool('post_message', { asker: token, room_id: eng.id, text });
        expect(result.isError).toBeUndefined();
        expect(result.structuredContent).toMatchObject({ status: 'awaiting_approval', room_id: eng.id });
        expect(result.content[0].text).toMatch(/^Awaiting approval: @alice\d+ was shown the message/);

        // The approval: public in alice's conversation, naming the target and showing the text whole, in a code block.
        const [approval] = approvals(team);
        expect(approval.text).toBe(
            `:memo: *Hermes asks to post* in #${eng.name} for @${alice.username}:\n\`\`\`\n${text}\n\`\`\`\n` +
                `Only @${alice.username} can decide. Nothing is posted before; the request expires in 15 minutes.`,
        );
        const [approve, decline] = buttonValues(approval);
        expect([approve.endsWith('|approve'), decline.endsWith('|decline')]).toEqual([true, true]);
        // The message as a client that has not seen the edit still shows it, buttons and all.
        const stale = structuredClone(approval);
        expect(rig.botMessages(eng)).toHaveLength(engBefore);

        // Bob sees the buttons too; his click does nothing but tell him.
        await rig.clickButton(bob, approval, 'hermes-write', approve);
        await rig.settle();
        expect(rig.ephemerals(bob, team)).toEqual(['Only the person Hermes asked can decide this request.']);
        expect(rig.botMessages(eng)).toHaveLength(engBefore);

        await rig.clickButton(alice, approval, 'hermes-write', approve);
        await rig.settle();
        const posted = rig.botMessages(eng).slice(engBefore);
        expect(posted.map((m) => m.text)).toEqual([
            `Release moved to *Friday* @\u200Ball — see \`notes\`\n\n_Posted by Hermes for @${alice.username}, who approved this text._`,
        ]);
        const settled = current(team, approval.id);
        expect(settled.text).toMatch(
            new RegExp(
                `^:white_check_mark: Posted in \\[#${eng.name}\\]\\(.*/channel/${eng.name}\\?msg=${posted[0].id}\\), approved by @${alice.username}\\.$`,
            ),
        );
        expect(buttonValues(settled)).toEqual([]);

        // A second click (a stale client still shows the buttons): nothing more.
        await rig.clickButton(alice, stale, 'hermes-write', approve);
        await rig.settle();
        expect(rig.botMessages(eng)).toHaveLength(engBefore + 1);
        expect(rig.ephemerals(alice, team)).toEqual(['This request is no longer pending.']);
        expect(rig.logText({ appLinesOnly: true })).not.toContain('Release moved');
    });

    it('asked in a thread: the approval is shown in that thread; Decline posts nothing', async () => {
        const { alice, team, eng } = setting();
        const root = await rig.post(alice, team, 'thread root', { silent: true });
        const token = await tokenFrom(alice, team, { tmid: root.id });
        await tool('post_message', { asker: token, room_id: eng.id, text: 'from the thread' });
        const [approval] = approvals(team);
        expect(approval.tmid).toBe(root.id);
        const [, decline] = buttonValues(approval);
        const before = rig.botMessages(eng).length;
        await rig.clickButton(alice, approval, 'hermes-write', decline);
        await rig.settle();
        expect(current(team, approval.id).text).toBe(`:no_entry_sign: Declined by @${alice.username}: nothing was done in #${eng.name}.`);
        expect(rig.botMessages(eng)).toHaveLength(before);
    });

    it('re-checks at the click: the asker left the room since, so nothing is posted', async () => {
        const { alice, team, eng } = setting();
        const token = await tokenFrom(alice, team);
        await tool('post_message', { asker: token, room_id: eng.id, text: 'still here?' });
        const [approval] = approvals(team);
        rig.removeFromRoom(eng, alice);
        const before = rig.botMessages(eng).length;
        await rig.clickButton(alice, approval, 'hermes-write', buttonValues(approval)[0]);
        await rig.settle();
        expect(rig.botMessages(eng)).toHaveLength(before);
        expect(current(team, approval.id).text).toBe(`:warning: Not done: the bot can no longer post in #${eng.name} for this person.`);
        expectLogged(rig.logText({ appLinesOnly: true })).toMatch(
            new RegExp(`MCP write request [0-9a-f]{16} of user ${alice.id} not done: caller-not-member in room ${eng.id} now`),
        );
    });

    it('refuses every target that is not the asker’s to post in, with ids only in the log, and proposes nothing', async () => {
        const { alice, bob, team } = setting();
        const carol = person('carol');
        const bobsGroup = rig.room(`bobs${n}`, [bob, rig.bot], 'p');
        const bobsDm = rig.direct([bob, rig.bot]);
        const news = rig.room(`news${n}`, [alice, rig.bot, carol], 'c', { readOnly: true });
        const noBot = rig.room(`nobot${n}`, [alice, bob]);
        const otherRoot = await rig.post(bob, bobsGroup, 'group thread', { silent: true });
        const token = await tokenFrom(alice, team);
        const before = rig.botMessages(team).length;
        const rows: Array<[string, Record<string, unknown>]> = [
            ['a private group she is not in', { room_id: bobsGroup.id }],
            ["bob's DM with the bot", { room_id: bobsDm.id }],
            ['a read-only room', { room_id: news.id }],
            ['a room without the bot', { room_id: noBot.id }],
            ['a thread of another room', { room_id: team.id, thread_id: otherRoot.id }],
            ['no such room', { room_id: 'NoSuchRoom000000' }],
        ];
        for (const [what, args] of rows) {
            const result = await tool('post_message', { asker: token, text: 'psst', ...args });
            expect([what, result.isError, result.content[0].text]).toEqual([what, true, 'Not allowed: the person who asked cannot have the bot post there.']);
        }
        // Forged and superseded tokens: refused before any room is looked at.
        const forged = `${token.slice(0, token.lastIndexOf('.') + 1)}${'A'.repeat(22)}`;
        const bobs = `v1.${bob.id}.${bobsDm.id}.9999999999.${'A'.repeat(22)}`;
        // A token names its second (its expiry): the newer turn is asked in the next one, so its token differs.
        const second = Math.floor(Date.now() / 1000);
        await pollUntil('the next second', () => (Math.floor(Date.now() / 1000) > second ? true : undefined), 2_000);
        const newer = await tokenFrom(alice, team);
        for (const [what, bad] of [
            ['forged', forged],
            ['superseded', token],
            ["bob's, made up", bobs],
        ]) {
            const result = await tool('post_message', { asker: bad, room_id: team.id, text: 'psst' });
            expect([what, result.content[0].text]).toEqual([
                what,
                'Not allowed: the asker token is not valid now. Use the token of the question you are answering.',
            ]);
        }
        expect(approvals(team)).toEqual([]);
        expect(rig.botMessages(team).length).toBe(before + 1); // the newer turn's answer
        expect(newer).not.toBe(token);
        const log = rig.logText({ appLinesOnly: true });
        expectLogged(log).toContain(`MCP post_message in room ${bobsGroup.id} refused for user ${alice.id}: caller-not-member.`);
        expectLogged(log).toContain(`MCP post_message in room ${team.id} thread ${otherRoot.id} refused for user ${alice.id}: thread-elsewhere.`);
        expect(log).not.toContain(newer);
        expect(log).not.toContain('psst');
    });

    it('a model looping on the tool shows at most three approvals for one turn', async () => {
        const { alice, team, eng } = setting();
        const token = await tokenFrom(alice, team);
        const results = [];
        for (let i = 0; i < 5; i++) {
            results.push(await tool('post_message', { asker: token, room_id: eng.id, text: `spam ${i}` }));
        }
        expect(results.map((r) => r.isError === true)).toEqual([false, false, false, true, true]);
        expect(results[3].content[0].text).toBe('Not done: 3 requests already await the approval of the person who asked. Wait for their decision.');
        expect(approvals(team)).toHaveLength(3);
        // Deciding one makes room for one more.
        const [first] = approvals(team);
        await rig.clickButton(alice, first, 'hermes-write', buttonValues(first)[1]);
        await rig.settle();
        expect((await tool('post_message', { asker: token, room_id: eng.id, text: 'one more' })).isError).toBeUndefined();
    });

    it('a forged click naming the request from another room, or a request id of nobody, does nothing', async () => {
        const { alice, bob, team, eng } = setting();
        const token = await tokenFrom(alice, team);
        await tool('post_message', { asker: token, room_id: eng.id, text: 'mine' });
        const [approval] = approvals(team);
        const [approve] = buttonValues(approval);
        const before = rig.botMessages(eng).length;
        // Alice clicks the value on a message of another room (a forged payload): that request was not shown there.
        const elsewhere = await rig.post(alice, eng, 'a message of hers in eng', { silent: true });
        await rig.server.uiInteraction(alice, rig.appId, {
            type: 'blockAction',
            actionId: 'hermes-write',
            payload: { blockId: 'x', value: approve },
            container: { type: 'message', id: elsewhere.id },
            rid: eng.id,
            mid: elsewhere.id,
        });
        await rig.clickButton(bob, approval, 'hermes-write', '0123456789abcdef|approve');
        await rig.settle();
        expect(rig.botMessages(eng)).toHaveLength(before);
        expect(rig.ephemerals(alice, eng)).toEqual(['This request is no longer pending.']);
        expect(rig.ephemerals(bob, team)).toEqual(['This request is no longer pending.']);
        expect(buttonValues(current(team, approval.id))).toHaveLength(2);
    });
});

describe('schedule_prompt', () => {
    it('proposes with the cron checks; on approval the job exists in the target room, owned by the asker', async () => {
        const { alice, team, eng } = setting();
        await rig.setting('cron_user_ids', alice.id);
        try {
            const token = await tokenFrom(alice, team);
            const bad = await tool('schedule_prompt', { asker: token, room_id: eng.id, schedule: 'whenever you like', prompt: 'x' });
            expect(bad.isError).toBe(true);
            expect(bad.content[0].text).toMatch(/^That schedule cannot be used: /);

            const result = await tool('schedule_prompt', { asker: token, room_id: eng.id, schedule: 'every day 09:00', prompt: 'Summarise open incidents' });
            expect(result.structuredContent).toMatchObject({ status: 'awaiting_approval' });
            const [approval] = approvals(team);
            expect(approval.text).toContain(
                `*Hermes asks to schedule a prompt* in #${eng.name} for @${alice.username}, when:\n\`\`\`\nevery day 09:00\n\`\`\``,
            );
            expect(approval.text).toContain('The prompt:\n```\nSummarise open incidents\n```');
            expect(await rig.commandAnswer(alice, eng, '/hermes cron list')).toBe('No scheduled prompts deliver to this room.');

            await rig.clickButton(alice, approval, 'hermes-write', buttonValues(approval)[0]);
            await rig.settle();
            expect(current(team, approval.id).text).toBe(`:white_check_mark: Scheduled in #${eng.name}, approved by @${alice.username}.`);
            expect(rig.ephemerals(alice, team)).toEqual([expect.stringMatching(/^Scheduled prompt \*summarise-open-incidents\* \(`[0-9a-f]{8}`\) added: /)]);
            expect(await rig.commandAnswer(alice, eng, '/hermes cron list')).toMatch(new RegExp(`summarise-open-incidents.*@${alice.username}`, 's'));
        } finally {
            await rig.setting('cron_user_ids', '');
        }
    });

    it('someone not allowed to schedule prompts gets the cron refusal and no approval', async () => {
        const { alice, team, eng } = setting();
        const token = await tokenFrom(alice, team);
        const result = await tool('schedule_prompt', { asker: token, room_id: eng.id, schedule: 'every day at 9:00', prompt: 'hi' });
        expect([result.isError, result.content[0].text]).toEqual([true, 'Only admins and the people an admin listed may create scheduled prompts.']);
        expect(approvals(team)).toEqual([]);
    });
});
