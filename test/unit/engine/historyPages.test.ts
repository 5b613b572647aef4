import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { EngineHistory } from '../../../src/engine/adapters/engineHistory';
import { windowSettled, WindowOptions } from '../../../src/context/window';
import { freshRecord } from '../../../src/sessions/sessionRecord';
import { buildUserText } from '../../../src/turns/userText';
import { TEST_CONFIG } from '../../support/turnPorts';

const BOT = 'BOT';
const T0 = Date.parse('2026-12-02T09:00:00Z');

/** A room of `count` raw messages (as getMessages gives them), the newest last; a reader answering like the server's (desc, skip, limit ≤ 100). */
function room(count: number, text: (i: number) => string = (i) => `message ${i}`, system: (i: number) => boolean = () => false) {
    const raw = Array.from({ length: count }, (_, i) => ({
        id: `M${i}`,
        roomId: 'R1',
        sender: { _id: i % 2 ? 'ALICE' : 'BOB', username: i % 2 ? 'alice' : 'bob' },
        text: text(i),
        createdAt: new Date(T0 + i * 1000),
        ...(system(i) ? { type: 'uj' } : {}),
    }));
    const asked: Array<{ limit: number; skip: number }> = [];
    const read = {
        getRoomReader: () => ({
            getMessages: async (_rid: string, o: { limit: number; skip: number; sort?: { createdAt: string } }) => {
                if (o.limit > 100 || o.sort?.createdAt !== 'desc') {
                    throw new Error(`unexpected options ${JSON.stringify(o)}`);
                }
                asked.push({ limit: o.limit, skip: o.skip });
                return [...raw].reverse().slice(o.skip, o.skip + o.limit);
            },
        }),
    } as unknown as IRead;
    const trigger = { id: 'TRIGGER', createdAt: new Date(T0 + count * 1000) };
    return { port: new EngineHistory(read, BOT), asked, trigger };
}

const windowOpts = (max: number): WindowOptions => ({ askerId: 'ALICE', botId: BOT, botUsername: 'hermes', perPerson: true, min: 10, max });

describe('EngineHistory.mainChannel pages', () => {
    it('asks for the first page it was told it needs, not a whole 100', async () => {
        const r = room(300);
        const got = await r.port.mainChannel('R1', r.trigger, (h) => windowSettled(h, windowOpts(50)), 500, 60);
        expect(r.asked).toEqual([{ limit: 60, skip: 0 }]);
        expect(got).toHaveLength(60);
        expect(got[got.length - 1].id).toBe('M299');
    });

    it('reads on in pages of 100 from where the first page ended while the window is not settled', async () => {
        const r = room(300);
        const got = await r.port.mainChannel('R1', r.trigger, (h) => h.length >= 150, 500, 60);
        expect(r.asked).toEqual([
            { limit: 60, skip: 0 },
            { limit: 100, skip: 60 },
        ]);
        expect(got.map((m) => m.id)).toEqual(Array.from({ length: 160 }, (_, i) => `M${140 + i}`));
    });

    it('stops when the room has no more than the first page held', async () => {
        const r = room(25);
        const got = await r.port.mainChannel('R1', r.trigger, () => false, 500, 60);
        expect(r.asked).toEqual([{ limit: 60, skip: 0 }]);
        expect(got).toHaveLength(25);
    });

    it('keeps pages of 100 without a first page (the DM seed, the summary) and never asks for more than 100', async () => {
        const plain = room(300);
        await plain.port.mainChannel('R1', plain.trigger, () => false, 200);
        expect(plain.asked).toEqual([
            { limit: 100, skip: 0 },
            { limit: 100, skip: 100 },
        ]);
        const big = room(300);
        await big.port.mainChannel('R1', big.trigger, () => true, 500, 210);
        expect(big.asked).toEqual([{ limit: 100, skip: 0 }]);
    });
});

describe("a room window's first read", () => {
    const log = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };
    const build = (r: ReturnType<typeof room>, historyMaxMessages: number) =>
        buildUserText({
            turn: {
                message: {
                    id: 'TRIGGER',
                    roomId: 'R1',
                    roomType: 'c',
                    senderId: 'ALICE',
                    senderUsername: 'alice',
                    text: '@hermes why',
                    isSystem: false,
                    edited: false,
                },
                kind: 'room',
                text: 'why',
                createdAt: r.trigger.createdAt,
            },
            config: { ...TEST_CONFIG, historyMaxMessages },
            bot: { id: BOT, username: 'hermes' },
            session: Promise.resolve(freshRecord('k')),
            history: r.port,
            siteUrl: 'https://chat.example.com',
            log: log as never,
            now: () => r.trigger.createdAt.getTime(),
        });

    it('asks for history_max_messages and 10 more, and the window is what a page of 100 gave', async () => {
        const small = room(300);
        const fromSmall = await build(small, 50);
        expect(small.asked).toEqual([{ limit: 60, skip: 0 }]);
        // The same window from a whole page (history_max_messages 90 reads 100 at once).
        const whole = room(300);
        const fromWhole = await build(whole, 90);
        expect(whole.asked).toEqual([{ limit: 100, skip: 0 }]);
        const lines = (t: string) => t.split('\n').filter((l) => l.includes('message '));
        expect(lines(fromSmall.text)).toHaveLength(50);
        expect(lines(fromWhole.text).slice(-50)).toEqual(lines(fromSmall.text));
    });

    it('reads on when the first page holds too few messages the window shows', async () => {
        // The newest 55 are joins (system messages: never in the window).
        const joins = (i: number) => i >= 245;
        const r = room(300, (i) => `message ${i}`, joins);
        const built = await build(r, 50);
        expect(r.asked).toEqual([
            { limit: 60, skip: 0 },
            { limit: 100, skip: 60 },
        ]);
        const lines = built.text.split('\n').filter((l) => l.includes('message '));
        expect(lines).toHaveLength(50);
        expect(lines[lines.length - 1]).toContain('message 244');
    });
});
