import { answerParts } from '../../../src/turns/answerParts';
import { processMemory } from '../../../src/turns/processMemory';
import { queuedTurn } from '../../support/turnPorts';

/**
 * A background task's answer (issue 34 §3) comes long after its question, amid other talk: it
 * mentions its asker, in the thread under its "started" message, or in a DM quoting that message.
 */
const server = (siteUrl: string) => ({ server: async () => ({ siteUrl, maxMessageSize: 5000 }) }) as never;

describe('answerParts of a background task', () => {
    const task = queuedTurn('bg.0badc0de', { background: true, question: 'STARTED', askerUsername: 'alice' });

    it('in a thread: the first part mentions the asker, the rest do not', async () => {
        const rec = { ...task, threadId: 'STARTED' };
        expect(await answerParts(rec, 'the report', server('https://chat.example'), true)).toEqual(['@alice the report']);
        const long = await answerParts(rec, `${'a'.repeat(4000)} ${'b'.repeat(4000)}`, server('https://chat.example'), true);
        expect(long.map((p) => p.slice(0, 7))).toEqual(['@alice ', 'bbbbbbb']);
        // A continued answer (streamed on) adds no second mention.
        expect(await answerParts(rec, 'more', server('https://chat.example'), false)).toEqual(['more']);
    });

    it('in a DM: quotes the "started" message and mentions the asker; without Site_Url the mention alone', async () => {
        const rec = { ...task, kind: 'dm' as const, roomType: 'd', roomId: 'D1' };
        expect(await answerParts(rec, 'the report', server('https://chat.example/'), true)).toEqual([
            '[ ](https://chat.example/direct/D1?msg=STARTED) @alice the report',
        ]);
        expect(await answerParts(rec, 'the report', server(''), true)).toEqual(['@alice the report']);
    });

    it('a turn that is no background task in a thread quotes nothing', async () => {
        expect(await answerParts({ ...task, background: undefined, threadId: 'T' }, 'x', server('https://chat.example'), true)).toEqual(['x']);
    });
});

describe('answerParts: links to messages the asker may not read', () => {
    const SITE = 'https://chat.example';
    const rec = queuedTurn('T-links', { askerId: 'ALICE', threadId: 'TH' });
    const ok = `${SITE}/channel/eng?msg=OK1`;
    const bad = `${SITE}/group/secret?msg=BAD1`;

    it('are taken out before the answer is posted; the asker is asked about once per turn', async () => {
        const asked: Array<[string, string[]]> = [];
        const ports = {
            server: async () => ({ siteUrl: SITE, maxMessageSize: 5000 }),
            readableMessages: async (userId: string, ids: string[]) => (asked.push([userId, ids]), new Set(ids.filter((id) => id === 'OK1'))),
        } as never;
        expect(await answerParts(rec, `See ${ok} and [this](${bad}).`, ports, true)).toEqual([`See ${ok} and this.`]);
        // A streamed answer renders again: what was learnt is kept.
        expect(await answerParts(rec, `See ${ok} and [this](${bad}). More.`, ports, false)).toEqual([`See ${ok} and this. More.`]);
        expect(asked).toEqual([['ALICE', ['OK1', 'BAD1']]]);
        // No link to this server: nothing asked.
        await answerParts({ ...rec, id: 'T-plain' }, 'plain https://other.example/channel/x?msg=Z', ports, true);
        expect(asked).toHaveLength(1);
    });

    it('without a way to ask, every such link goes (deny by default)', async () => {
        const ports = { server: async () => ({ siteUrl: SITE, maxMessageSize: 5000 }) } as never;
        expect(await answerParts({ ...rec, id: 'T-noport' }, `See ${ok}`, ports, true)).toEqual(['See ']);
    });
});

describe('answerParts: what it keeps of the links it checked', () => {
    it('is bounded: the entries of the oldest turns go past 200', async () => {
        const SITE = 'https://chat.example';
        const asked: string[] = [];
        const ports = {
            server: async () => ({ siteUrl: SITE, maxMessageSize: 5000 }),
            readableMessages: async (_u: string, ids: string[]) => (asked.push(...ids), new Set(ids)),
        } as never;
        for (let i = 0; i < 210; i++) {
            await answerParts(queuedTurn(`bound${i}`), `${SITE}/channel/x?msg=M${i}`, ports, false);
        }
        expect(processMemory.sizes()['answerParts.readable']).toBe(200);
        asked.length = 0;
        await answerParts(queuedTurn('bound209'), `${SITE}/channel/x?msg=M209`, ports, false);
        expect(asked).toEqual([]);
        await answerParts(queuedTurn('bound9'), `${SITE}/channel/x?msg=M9`, ports, false);
        expect(asked).toEqual(['M9']);
    });
});
