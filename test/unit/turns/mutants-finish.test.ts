import { freshRecord } from '../../../src/sessions/sessionRecord';
import { finish } from '../../../src/turns/finish';
import { PROCESS_ID } from '../../../src/turns/processId';
import { rememberSession } from '../../../src/turns/sessionSnapshot';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { memoryTickPorts, MemoryChat, queuedTurn } from '../../support/turnPorts';
import { answer, failPosts, paragraphs, runningTurn, uid } from '../../support/finishTurn';

/**
 * Finishing a turn, piece by piece (found by mutation testing, `npm run mutate`): the lease
 * against other instances, what is posted and how, recognising parts posted before a crash,
 * the clean-up of status and approval messages, the session record and the next turn.
 */

const request = { command: 'rm -rf /tmp/x', description: 'delete', choices: ['once', 'deny'], allowPermanent: false };

/** A running turn, counting the reads of the bot's messages in its room. */
async function running(over: Partial<TurnRecord> = {}, portsOver: Partial<Parameters<typeof memoryTickPorts>[0]> = {}) {
    const env = await runningTurn(over, portsOver);
    let reads = 0;
    const botMessages = env.chat.botMessages.bind(env.chat);
    env.chat.botMessages = async (target) => {
        reads++;
        return botMessages(target);
    };
    return { ...env, reads: () => reads };
}

const failing = failPosts;

describe('who finishes', () => {
    it('nobody, when the turn is gone or done', async () => {
        const gone = await running();
        await gone.store.remove(gone.rec.id);
        await expect(finish(gone.rec, answer('hi'), gone.ports)).resolves.toBeUndefined();
        expect(gone.chat.messages).toEqual([]);

        const done = await running();
        await done.store.save({ ...done.rec, phase: 'done' });
        await finish(done.rec, answer('hi'), done.ports);
        expect(done.chat.messages).toEqual([]);
    });

    it('not this one while another instance holds a live lease; this one once it has lapsed', async () => {
        const env = await running();
        await env.store.save({ ...env.rec, owner: { as: 'finishing', token: 'other', until: env.sched.time + 1, process: 'another-process' } });
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.chat.messages).toEqual([]);
        await env.store.save({ ...env.rec, owner: { as: 'finishing', token: 'other', until: env.sched.time, process: 'another-process' } });
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['@alice hi']);
    });

    it('the holder of the lease itself, on a retry', async () => {
        const env = await running({ owner: { as: 'finishing', token: 'mine', until: Number.MAX_SAFE_INTEGER, process: PROCESS_ID } });
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.chat.answers()).toHaveLength(1);
    });

    it('holds its lease for 30 s: a second finisher meanwhile backs off', async () => {
        const env = await running();
        let second: Promise<void> | undefined;
        env.chat.afterNextPost = () => {
            env.sched.time += 29_000;
            second = finish({ ...env.rec, owner: undefined }, answer('hi'), env.ports);
        };
        await finish(env.rec, answer('hi'), env.ports);
        await second;
        expect(env.chat.answers()).toHaveLength(1);
        expect(env.logs.filter((l) => l.includes(' answered after '))).toHaveLength(1);
    });

    it('not this one when a later finisher took the lease between its write and its read', async () => {
        const env = await running();
        const save = env.store.save.bind(env.store);
        let taken = false;
        env.store.save = async (record) => {
            await save(record);
            if (record.owner?.as === 'finishing' && !taken) {
                taken = true;
                await save({ ...record, owner: { as: 'finishing', token: 'later', until: record.owner.until, process: 'a-later-finisher' } });
            }
        };
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.chat.messages).toEqual([]);
        expect(await env.store.get(env.rec.id)).toBeDefined();
    });
});

describe('what is posted', () => {
    it("the answer, quoted in the room's main channel, the prefix on the first part only", async () => {
        const env = await running({ roomName: 'general' }, { server: async () => ({ maxMessageSize: 120, siteUrl: 'https://chat.example.com' }) });
        const text = paragraphs(3, 100).join('\n\n');
        await finish(env.rec, answer(text), env.ports);
        const quote = `[ ](https://chat.example.com/channel/general?msg=${env.rec.id}) @alice `;
        const posted = env.chat.answers().map((m) => m.text);
        expect(posted).toHaveLength(4);
        expect(posted[0].startsWith(quote)).toBe(true);
        expect(posted.slice(1).some((p) => p.includes('@alice'))).toBe(false);
        expect(posted.join('').replace(quote, '').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));
    });

    it('the answer as it is in a DM or a thread', async () => {
        const dm = await running({ kind: 'dm', roomType: 'd' });
        await finish(dm.rec, answer('hello'), dm.ports);
        expect(dm.chat.answers().map((m) => m.text)).toEqual(['hello']);
        const thread = await running({ threadId: 'TH1' });
        await finish(thread.rec, answer('hello'), thread.ports);
        expect(thread.chat.answers().map((m) => [m.text, m.target])).toEqual([['hello', { roomId: 'R1', threadId: 'TH1' }]]);
    });

    it('a notice for an answer of only white space', async () => {
        const env = await running({ kind: 'dm', roomType: 'd' });
        await finish(env.rec, answer('  \n  '), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['_(Hermes finished without an answer.)_']);
    });

    it('the answer with a marker when it is incomplete', async () => {
        const env = await running({ kind: 'dm', roomType: 'd' });
        await finish(env.rec, answer('partial', { incomplete: true }), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['partial\n\n_(Hermes could not finish this answer; this is what it had so far.)_']);
    });

    it('who stopped it, as a notice of the turn', async () => {
        const env = await running({ kind: 'dm', roomType: 'd' });
        await finish(env.rec, { kind: 'stopped', by: 'bob' }, env.ports);
        expect(env.chat.visible().map((m) => [m.kind, m.text, m.mark])).toEqual([
            ['notice', ':stop_button: Stopped by @bob.', { kind: 'notice', turnId: env.rec.id }],
        ]);
        expect(env.logs.pop()).toBe(`Turn message ${env.rec.id} in room R1 stopped by bob after 4000 ms.`);
    });

    it('and logs how long the turn took, from its start or else from the question', async () => {
        const started = await running();
        await finish(started.rec, answer('hi'), started.ports);
        expect(started.logs.pop()).toBe(`Turn message ${started.rec.id} in room R1 answered after 4000 ms.`);
        const queued = await running({ startedAt: undefined });
        await finish(queued.rec, { kind: 'failed', failure: 'notice_unreachable', detail: 'ECONNREFUSED' }, queued.ports);
        expect(queued.logs.pop()).toBe(`Hermes turn failed for message ${queued.rec.id} in room R1 after 5000 ms: ECONNREFUSED`);
        expect(queued.chat.visible().map((m) => m.text)).toEqual(['@alice :warning: Hermes could not be reached. Please try again in a moment.']);
    });
});

describe('posting the parts', () => {
    it("records each part's id before posting the next", async () => {
        const env = await running({ kind: 'dm', roomType: 'd' }, { server: async () => ({ maxMessageSize: 120, siteUrl: '' }) });
        let recorded: string[] | undefined;
        const post = env.chat.post.bind(env.chat);
        let posts = 0;
        env.chat.post = async (...args: Parameters<MemoryChat['post']>) => {
            if (++posts === 2) {
                recorded = env.store.records.get(env.rec.id)?.delivery?.posted;
            }
            return post(...args);
        };
        await finish(env.rec, answer(paragraphs(3, 100).join('\n\n')), env.ports);
        expect(recorded).toEqual(['m1']);
    });

    it('stops at a refused part and says which one, the session left as it was', async () => {
        const env = await running({ kind: 'dm', roomType: 'd' }, { server: async () => ({ maxMessageSize: 120, siteUrl: '' }) });
        failing(env.chat, [undefined, new Error('boom')]);
        await finish(env.rec, answer(paragraphs(3, 100).join('\n\n'), { sessionId: 'rotated-id' }), env.ports);
        expect(env.chat.visible().map((m) => m.text)).toEqual([
            '0'.padEnd(100, 'x'),
            ':warning: Part 2 of 3 of this answer could not be posted, so the rest was held back.',
        ]);
        expect(env.chat.visible()[1].mark).toEqual({ kind: 'notice', turnId: env.rec.id });
        expect(env.logs).toContain(`Posting part 2 of 3 for message ${env.rec.id} in room R1 failed: boom`);
        expect(env.logs.some((l) => l.includes('splitting'))).toBe(false);
        expect(await env.ports.sessions.get(env.rec.sessionKey)).toEqual(freshRecord(env.rec.sessionKey));
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });

    it('logs a failure notice that could not be posted either', async () => {
        const env = await running({ kind: 'dm', roomType: 'd' });
        failing(env.chat, [new Error('down'), new Error('still down')]);
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.chat.visible()).toEqual([]);
        expect(env.logs).toContain(`The failure notice for message ${env.rec.id} in room R1 could not be posted either.`);
    });

    it("splits again once, with the server's current limit, when the first part is too large", async () => {
        let fresh = 0;
        const env = await running(
            { kind: 'dm', roomType: 'd' },
            { server: async (reread?: boolean) => (reread ? (fresh++, { maxMessageSize: 120, siteUrl: '' }) : { maxMessageSize: 5000, siteUrl: '' }) },
        );
        failing(env.chat, [new Error('error-message-size-exceeded')]);
        await finish(env.rec, answer(paragraphs(2, 100).join('\n\n')), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(paragraphs(2, 100));
        expect(fresh).toBe(1);
        expect(env.logs).toContain(`Message_MaxAllowedSize is now 120; splitting the outcome of message ${env.rec.id} in room R1 again.`);
    });

    it('splits all the fixed parts again as one text, paragraph by paragraph', async () => {
        const env = await running({ kind: 'dm', roomType: 'd' }, { server: async (reread?: boolean) => ({ maxMessageSize: reread ? 120 : 230, siteUrl: '' }) });
        failing(env.chat, [new Error('error-message-size-exceeded')]);
        await finish(env.rec, answer(paragraphs(4, 100).join('\n\n')), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(paragraphs(4, 100));
    });

    it('does not split again for a later part, for a second refusal, or for another error', async () => {
        const later = await running({ kind: 'dm', roomType: 'd' }, { server: async () => ({ maxMessageSize: 120, siteUrl: '' }) });
        failing(later.chat, [undefined, new Error('MaxAllowedSize exceeded')]);
        await finish(later.rec, answer(paragraphs(3, 100).join('\n\n')), later.ports);
        expect(later.chat.visible().pop()?.text).toBe(':warning: Part 2 of 3 of this answer could not be posted, so the rest was held back.');

        const twice = await running({ kind: 'dm', roomType: 'd' }, { server: async () => ({ maxMessageSize: 120, siteUrl: '' }) });
        failing(twice.chat, [new Error('size-exceeded'), new Error('size-exceeded')]);
        await finish(twice.rec, answer(paragraphs(2, 100).join('\n\n')), twice.ports);
        expect(twice.chat.visible().map((m) => m.text)).toEqual([':warning: Part 1 of 2 of this answer could not be posted, so the rest was held back.']);

        const other = await running({ kind: 'dm', roomType: 'd' });
        failing(other.chat, [new Error('forbidden')]);
        await finish(other.rec, answer('hi'), other.ports);
        expect(other.chat.visible().map((m) => m.text)).toEqual([':warning: Part 1 of 1 of this answer could not be posted, so the rest was held back.']);
        expect(other.logs.some((l) => l.includes('splitting'))).toBe(false);
    });
});

describe('a retry after a crash mid-delivery', () => {
    /** Delivers three parts, killing the process right after part `crashAfter` went out (its id unsaved). */
    async function crashed(crashAfter: number, text = paragraphs(3, 100).join('\n\n')) {
        const env = await running({ kind: 'dm', roomType: 'd' }, { server: async () => ({ maxMessageSize: 120, siteUrl: '' }) });
        let posts = 0;
        const post = env.chat.post.bind(env.chat);
        env.chat.post = async (...args: Parameters<MemoryChat['post']>) => {
            if (++posts === crashAfter) {
                env.chat.afterNextPost = () => {
                    env.chat.dead = true;
                    env.store.dead = true;
                };
            }
            return post(...args);
        };
        await expect(finish(env.rec, answer(text), env.ports)).rejects.toThrow();
        env.chat.dead = false;
        env.store.dead = false;
        env.chat.post = post;
        return { ...env, retry: async () => finish((await env.store.get(env.rec.id)) as TurnRecord, answer(text), env.ports) };
    }

    it('posts only the parts that are not there yet', async () => {
        const env = await crashed(2);
        await env.retry();
        expect(env.chat.answers().map((m) => m.text)).toEqual(paragraphs(3, 100));
    });

    it('posts nothing again when the last part went out, whatever else the room holds', async () => {
        const env = await crashed(3);
        env.chat.messages.push({ id: 'later', target: { roomId: 'R1' }, text: 'an answer to someone else', kind: 'answer', createdAt: env.sched.time });
        await env.retry();
        expect(env.chat.answers().map((m) => m.text)).toEqual([...paragraphs(3, 100), 'an answer to someone else']);
    });

    it('recognises a part the server rewrote after its first 200 characters', async () => {
        const long = ['a'.repeat(250), 'b'.repeat(250)].join('\n\n');
        const env = await running({ kind: 'dm', roomType: 'd' }, { server: async () => ({ maxMessageSize: 300, siteUrl: '' }) });
        env.chat.afterNextPost = () => {
            const m = env.chat.messages[0];
            m.text = `${m.text.slice(0, 200)}[filtered]`;
            env.chat.dead = true;
            env.store.dead = true;
        };
        await expect(finish(env.rec, answer(long), env.ports)).rejects.toThrow();
        env.chat.dead = false;
        env.store.dead = false;
        await finish((await env.store.get(env.rec.id)) as TurnRecord, answer(long), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual([`${'a'.repeat(200)}[filtered]`, 'b'.repeat(250)]);
    });

    it('does not take an older message, another text, a message of another kind or one already counted for a part', async () => {
        const text = ['same'.padEnd(100, '.'), 'same'.padEnd(100, '.'), 'end'.padEnd(100, '-')].join('\n\n');
        const env = await running({ kind: 'dm', roomType: 'd' }, { server: async () => ({ maxMessageSize: 120, siteUrl: '' }) });
        env.chat.afterNextPost = () => {
            env.chat.dead = true;
            env.store.dead = true;
        };
        await expect(finish(env.rec, answer(text), env.ports)).rejects.toThrow();
        env.chat.dead = false;
        env.store.dead = false;
        const stored = (await env.store.get(env.rec.id)) as TurnRecord;
        // Part 1 went out (m1) before the crash and its id was not saved; put look-alikes around it.
        const started = stored.delivery?.startedAt as number;
        env.chat.messages.push({ id: 'old', target: { roomId: 'R1' }, text: 'same'.padEnd(100, '.'), kind: 'answer', createdAt: started - 5001 });
        env.chat.messages.push({ id: 'other', target: { roomId: 'R1' }, text: 'different', kind: 'answer', createdAt: started });
        env.chat.messages.push({
            id: 'notice',
            target: { roomId: 'R1' },
            text: 'same'.padEnd(100, '.'),
            kind: 'notice',
            createdAt: started,
            mark: { kind: 'notice', turnId: env.rec.id },
        });
        await finish(stored, answer(text), env.ports);
        const ids = env.chat.answers().filter((m) => !['old', 'other'].includes(m.id));
        expect(ids.map((m) => m.text)).toEqual(['same'.padEnd(100, '.'), 'same'.padEnd(100, '.'), 'end'.padEnd(100, '-')]);
    });

    it('takes a part posted up to 5 s before the delivery started (clock difference), after the turn was sent', async () => {
        // Sent 10 s before: the session's turn before it had posted all it would.
        const env = await running({ kind: 'dm', roomType: 'd' });
        env.rec.startedAt = env.sched.time - 10_000;
        env.chat.afterNextPost = () => {
            env.chat.messages[0].createdAt -= 100_000;
            env.chat.dead = true;
            env.store.dead = true;
        };
        await expect(finish(env.rec, answer('hello'), env.ports)).rejects.toThrow();
        env.chat.dead = false;
        env.store.dead = false;
        const stored = (await env.store.get(env.rec.id)) as TurnRecord;
        env.chat.messages[0].createdAt = (stored.delivery?.startedAt as number) - 5000;
        await finish(stored, answer('hello'), env.ports);
        expect(env.chat.answers().map((m) => m.text)).toEqual(['hello']);
    });

    it('on a first delivery, posts even when the room already holds the same text', async () => {
        const env = await running({ kind: 'dm', roomType: 'd', statusPosting: true });
        env.chat.messages.push({ id: 'earlier', target: { roomId: 'R1' }, text: 'OK.', kind: 'answer', createdAt: env.sched.time });
        await finish(env.rec, answer('OK.'), env.ports);
        expect(env.chat.answers().map((m) => m.id)).toEqual(['earlier', 'm1']);
    });
});

describe('cleaning up', () => {
    it('removes the status message, by id, without reading the room', async () => {
        const env = await running();
        const statusId = await env.chat.post({ roomId: 'R1' }, 'Working', 'status', { turnId: env.rec.id });
        await finish({ ...env.rec, statusMessageId: statusId }, answer('hi'), env.ports);
        expect(env.chat.visible().map((m) => m.kind)).toEqual(['answer']);
        expect(env.reads()).toBe(0);
        const posting = await running({ statusPosting: true });
        const id = await posting.chat.post({ roomId: 'R1' }, 'Working', 'status', { turnId: posting.rec.id });
        await finish({ ...posting.rec, statusMessageId: id }, answer('hi'), posting.ports);
        expect(posting.reads()).toBe(0);
    });

    it("finds a status message whose id a crash lost by its mark, and leaves other turns' alone", async () => {
        const env = await running({ statusPosting: true });
        await env.chat.post({ roomId: 'R1' }, 'Working', 'status', { turnId: env.rec.id });
        await env.chat.post({ roomId: 'R1' }, 'Working', 'status', { turnId: 'another-turn' });
        await env.chat.post({ roomId: 'R1' }, 'note', 'notice', { turnId: env.rec.id });
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.chat.visible().map((m) => [m.kind, m.mark?.turnId])).toEqual([
            ['status', 'another-turn'],
            ['notice', env.rec.id],
            ['answer', undefined],
        ]);
        expect(env.reads()).toBe(1);
    });

    it('logs a status message it could not remove, and finishes anyway', async () => {
        const env = await running({ statusMessageId: 'S1' });
        env.chat.remove = async () => Promise.reject(new Error('gone'));
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.logs).toContain(`Status message of turn message ${env.rec.id} in room R1 could not be removed: gone`);
        expect(await env.store.get(env.rec.id)).toBeUndefined();
    });

    it('closes an approval nobody decided as timed out; leaves decided and closed ones', async () => {
        const open = await running();
        const messageId = await open.chat.post({ roomId: 'R1' }, 'approve?', 'approval', { turnId: open.rec.id });
        // The record in the store has no approval yet: the one in hand counts.
        await finish({ ...open.rec, approval: { messageId, request, number: 1 } }, answer('hi'), open.ports);
        expect(open.chat.visible().find((m) => m.id === messageId)?.text).toBe(
            ':hourglass: The approval for `rm -rf /tmp/x` timed out; Hermes did not run it.',
        );

        const decided = await running();
        const id2 = await decided.chat.post({ roomId: 'R1' }, 'approve?', 'approval', { turnId: decided.rec.id });
        await decided.store.decide(decided.rec.id, { messageId: id2, decided: { by: 'alice', choice: 'once' } });
        await finish({ ...decided.rec, approval: { messageId: id2, request, number: 1 } }, answer('hi'), decided.ports);
        expect(decided.chat.visible().find((m) => m.id === id2)?.text).toBe('approve?');

        const closed = await running();
        const id3 = await closed.chat.post({ roomId: 'R1' }, 'approve?', 'approval', { turnId: closed.rec.id });
        await finish({ ...closed.rec, approval: { messageId: id3, request, number: 1, closed: true } }, answer('hi'), closed.ports);
        expect(closed.chat.visible().find((m) => m.id === id3)?.text).toBe('approve?');
    });

    it('takes the approval another tick stored over the one in hand', async () => {
        const env = await running();
        const messageId = await env.chat.post({ roomId: 'R1' }, 'approve?', 'approval', { turnId: env.rec.id });
        await env.store.save({ ...env.rec, approval: { messageId, request, number: 1 } });
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.chat.visible().find((m) => m.id === messageId)?.text).toBe(':hourglass: The approval for `rm -rf /tmp/x` timed out; Hermes did not run it.');
    });
});

describe('the session record after an answer', () => {
    it('counts the first turn of a session', async () => {
        const env = await running();
        await finish(env.rec, answer('hi'), env.ports);
        // The asker is recorded (once, in the session index too) and the session gets its title from the first message.
        expect(await env.ports.sessions.get(env.rec.sessionKey)).toEqual({
            ...freshRecord(env.rec.sessionKey),
            turns: 1,
            askers: [env.rec.askerId],
            autoTitle: 'user text',
        });
    });

    it("indexes a person's first turn beside the session's read, and saves the session only once both are done", async () => {
        const env = await running();
        const steps: string[] = [];
        let sessionAnswer: () => void = () => undefined;
        let reached: () => void = () => undefined;
        const atRead = new Promise<void>((resolve) => (reached = resolve));
        const get = env.ports.sessions.get.bind(env.ports.sessions);
        env.ports.sessions.get = async (key) => {
            steps.push('session read');
            reached();
            await new Promise<void>((resolve) => (sessionAnswer = resolve));
            return get(key);
        };
        const save = env.ports.sessions.save.bind(env.ports.sessions);
        env.ports.sessions.save = async (r) => {
            steps.push('session saved');
            return save(r);
        };
        env.ports.index = {
            owned: async () => [],
            inScope: async () => [],
            ofSession: async () => [],
            add: async (userId, entry) => {
                steps.push(`indexed ${userId} in ${entry.sessionId}`);
                throw new Error('index write failed');
            },
        };
        // As the turn found its session when it was sent: a fresh one, this person new to it.
        rememberSession(env.rec.id, freshRecord(env.rec.sessionKey));
        const ending = finish(env.rec, answer('hi'), env.ports);
        ending.catch(() => undefined);
        await atRead;
        const sessionId = freshRecord(env.rec.sessionKey).sessionId;
        expect(steps).toEqual([`indexed ${env.rec.askerId} in ${sessionId}`, 'session read']);
        sessionAnswer();
        // The index write failed: the finish fails (the turn stays open and is finished again), and
        // the session is not saved, so that retry indexes the asker.
        await expect(ending).rejects.toThrow('index write failed');
        expect(steps).not.toContain('session saved');
        expect(await get(env.rec.sessionKey)).toEqual(freshRecord(env.rec.sessionKey));

        const again = await running();
        const order: string[] = [];
        again.ports.index = {
            owned: async () => [],
            inScope: async () => [],
            ofSession: async () => [],
            add: async () => {
                order.push('indexed');
            },
        };
        const saveAgain = again.ports.sessions.save.bind(again.ports.sessions);
        again.ports.sessions.save = async (r) => {
            order.push('session saved');
            return saveAgain(r);
        };
        rememberSession(again.rec.id, freshRecord(again.rec.sessionKey));
        await finish(again.rec, answer('hi'), again.ports);
        expect(order).toEqual(['indexed', 'session saved']);
    });

    it('follows a session id Hermes rotated to, if Hermes would accept it', async () => {
        const env = await running();
        await env.ports.sessions.save({ ...freshRecord(env.rec.sessionKey), turns: 3, askers: [env.rec.askerId] });
        await finish(env.rec, answer('hi', { sessionId: 'compressed_2' }), env.ports);
        expect(await env.ports.sessions.get(env.rec.sessionKey)).toMatchObject({ sessionId: 'compressed_2', turns: 4 });

        const bad = await running();
        await bad.ports.sessions.save({ ...freshRecord(bad.rec.sessionKey), turns: 3, askers: [bad.rec.askerId] });
        await finish(bad.rec, answer('hi', { sessionId: '../etc' }), bad.ports);
        expect(await bad.ports.sessions.get(bad.rec.sessionKey)).toEqual({ ...freshRecord(bad.rec.sessionKey), turns: 3, askers: [bad.rec.askerId] });
    });

    it('is left alone on later turns of the same session id', async () => {
        const env = await running();
        const session = { ...freshRecord(env.rec.sessionKey), turns: 3, askers: [env.rec.askerId] };
        await env.ports.sessions.save(session);
        let saves = 0;
        const save = env.ports.sessions.save.bind(env.ports.sessions);
        env.ports.sessions.save = async (r) => {
            saves++;
            return save(r);
        };
        await finish(env.rec, answer('hi', { sessionId: session.sessionId }), env.ports);
        await finish({ ...env.rec }, answer('hi'), env.ports);
        expect(saves).toBe(0);
    });

    it('is not touched by a stopped or failed turn', async () => {
        const env = await running();
        await finish(env.rec, { kind: 'stopped', by: 'bob' }, env.ports);
        expect(await env.ports.sessions.get(env.rec.sessionKey)).toEqual(freshRecord(env.rec.sessionKey));
    });
});

describe('the next turn of the session', () => {
    it("is woken: the queued one ordered first, not a running one or another session's", async () => {
        const env = await running();
        const key = env.rec.sessionKey;
        await env.store.save(queuedTurn(uid('N'), { seq: 1, sessionKey: key, phase: 'running', chain: 'run-chain' }));
        await env.store.save(queuedTurn('Q-c', { seq: 9, sessionKey: key, chain: 'chain-c' }));
        await env.store.save(queuedTurn('Q-a', { seq: 4, sessionKey: key, chain: 'chain-a' }));
        await env.store.save(queuedTurn('Q-b', { seq: 6, sessionKey: key, chain: 'chain-b' }));
        await env.store.save(queuedTurn(uid('N'), { seq: 0, sessionKey: 'another', chain: 'other' }));
        await finish(env.rec, answer('hi'), env.ports);
        expect(env.sched.pending.map((p) => [p.job.turnId, p.job.chain, p.at])).toEqual([['Q-a', 'chain-a', env.sched.time]]);
    });
});
