import { Rig } from '../rig';
import { callKinds, CallKinds, FakeHermes, kindsText, line, Stats } from './common';

/**
 * Part 6 of `npm run bench`: the MCP server's tool calls (issue 37), over real HTTP into the real
 * engine. `read_messages` with a window of 50; `search_messages` across 20 shared rooms holding
 * 10,000 and then 100,000 messages (the search reads at most 300 a room, so its cost must not
 * grow with the rooms' size). Each call is timed from the request to its response, and its
 * bridge calls counted. Then the write tools: `post_message` proposed (its approval posted in the
 * asker's conversation), and the asker's click on each approval (the check again, the post, the edit).
 */
const MCP_SECRET = 'bench-mcp-secret-0123456789abcdef-0123456789';
const ASKER_KEY = 'bench-asker-key-0123456789abcdef-0123456789';
const ROOMS = 20;
const CALLS = 20;

interface ToolFigures {
    time: Stats;
    kinds: CallKinds;
    detail: Record<string, number>;
}

export async function mcpCase(rig: Rig, hermes: FakeHermes): Promise<Record<string, ToolFigures>> {
    await rig.setting('asker_key', ASKER_KEY);
    await rig.setting('mcp_secret', MCP_SECRET);
    await rig.setting('mcp_enabled', true);
    const alice = rig.user('mcp-bench-alice');
    const bob = rig.user('mcp-bench-bob');
    const rooms = Array.from({ length: ROOMS }, (_, i) => rig.room(`mcp-bench-${i}`, [alice, bob, rig.bot]));
    const seed = async (perRoom: number, from: number) => {
        const start = Date.now() - 3_600_000;
        for (const room of rooms) {
            for (let i = from; i < perRoom; i++) {
                // One in a hundred mentions the release: the search's needle.
                const text = i % 100 === 7 ? `note ${i}: the release moved` : `note ${i}`;
                await rig.post(bob, room, text, { silent: true, createdAt: new Date(start + i * 10) });
            }
        }
    };
    await seed(500, 0);
    // The token a turn in alice's DM carried (the line Hermes would hand the tool).
    hermes.reset();
    const dm = rig.direct([alice, rig.bot]);
    await rig.ask(alice, dm, 'hello');
    const token = /\[Rocket\.Chat asker: (v1\.[^\]\s]+)\]/.exec(JSON.stringify(hermes.requests.map((r) => r.json)))?.[1];
    if (!token) {
        throw new Error('no asker token in the turn');
    }
    await rig.settle();
    const url = `${rig.server.apiUrl}/api/apps/public/${rig.appId}/mcp`;
    let id = 0;
    const call = async (name: string, args: Record<string, unknown>) => {
        const res = await fetch(url, {
            method: 'POST',
            headers: { Authorization: `Bearer ${MCP_SECRET}`, 'Content-Type': 'application/json', 'MCP-Protocol-Version': '2025-06-18' },
            body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: { asker: token, ...args } } }),
        });
        const body = (await res.json()) as { result?: { isError?: boolean } };
        if (res.status !== 200 || !body.result || body.result.isError) {
            throw new Error(`${name}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        }
    };
    const measure = async (label: string, name: string, args: Record<string, unknown>): Promise<ToolFigures> => {
        await call(name, args);
        const times: number[] = [];
        let detail: Record<string, number> = {};
        for (let i = 0; i < CALLS; i++) {
            rig.server.calls.reset();
            const t0 = performance.now();
            await call(name, args);
            times.push(performance.now() - t0);
            detail = rig.server.calls.snapshot(rig.appId);
        }
        const time = line(label, times);
        return { time, kinds: callKinds(detail), detail };
    };
    console.log(`\n6. MCP tool calls (${CALLS} each, over HTTP, store latency 0)`);
    const read = await measure('read_messages, window of 50', 'read_messages', { room_id: rooms[0].id, limit: 50 });
    const search10k = await measure(`search_messages in ${ROOMS} rooms, 10,000 messages`, 'search_messages', { query: 'release', limit: 20 });
    await seed(5_000, 500);
    const search100k = await measure(`search_messages in ${ROOMS} rooms, 100,000 messages`, 'search_messages', { query: 'release', limit: 20 });
    // The write tools: a proposal (its approval posted in alice's DM), then alice's click on it (the post); one after the
    // other, as at most three requests of one token may wait at once.
    await rig.setting('mcp_write_tools', true);
    const proposeTimes: number[] = [];
    const clickTimes: number[] = [];
    let proposeDetail: Record<string, number> = {};
    let clickDetail: Record<string, number> = {};
    for (let i = 0; i <= CALLS; i++) {
        rig.server.calls.reset();
        let t0 = performance.now();
        await call('post_message', { room_id: rooms[1].id, text: `the release moved to Friday (${i})` });
        const proposed = performance.now() - t0;
        const proposeCalls = rig.server.calls.snapshot(rig.appId);
        const approval = rig.botMessagesOfKind(dm, 'command').slice(-1)[0];
        const value = /[a-f0-9]{16}\|approve/.exec(JSON.stringify(approval.blocks))?.[0] as string;
        rig.server.calls.reset();
        t0 = performance.now();
        await rig.clickButton(alice, approval, 'hermes-write', value);
        await rig.settle();
        // The first of each is the warm-up (the configuration reload after the setting changed).
        if (i > 0) {
            proposeTimes.push(proposed);
            clickTimes.push(performance.now() - t0);
            proposeDetail = proposeCalls;
            clickDetail = rig.server.calls.snapshot(rig.appId);
        }
    }
    const propose = { time: line('post_message proposed (its approval posted)', proposeTimes), kinds: callKinds(proposeDetail), detail: proposeDetail };
    const approve = { time: line('post_message approved (the post, the approval edited)', clickTimes), kinds: callKinds(clickDetail), detail: clickDetail };
    await rig.setting('mcp_write_tools', false);
    for (const [name, f] of Object.entries({ read, search10k, search100k, propose, approve })) {
        console.log(`  ${name}: ${kindsText(f.kinds)}`);
    }
    await rig.setting('mcp_enabled', false);
    return { read_messages: read, search_10k: search10k, search_100k: search100k, post_proposed: propose, post_approved: approve };
}
