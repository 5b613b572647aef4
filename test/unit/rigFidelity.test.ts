import { RigServer } from '../rig/server';
import { StoredUser } from '../rig/store';

/**
 * The in-memory Rocket.Chat must behave like the real server where the app depends on it;
 * otherwise the end-to-end tests prove nothing. These pin the behaviours that cost days.
 */
type Protected = Record<string, (...args: unknown[]) => Promise<unknown>>;

describe('rig fidelity', () => {
    const server = new RigServer();
    const rooms = server.bridges.rooms as unknown as Protected;
    const threads = server.bridges.threads as unknown as Protected;
    const messages = server.bridges.messages as unknown as Protected;
    let alice: StoredUser;
    let roomId: string;

    beforeAll(() => {
        alice = server.store.addUser({ username: 'alice' });
        roomId = server.store.addRoom({ type: 'c', name: 'general', creatorId: alice.id, memberIds: [alice.id] }).id;
        for (let i = 0; i < 150; i++) {
            server.store.insertMessage({ rid: roomId, senderId: alice.id, text: `m${i}` });
        }
        server.store.insertMessage({ rid: roomId, senderId: alice.id, text: 'joined', t: 'uj' });
    });

    afterAll(() => server.close());

    it('getMessages: at most 100, oldest first unless asked, system messages excluded', async () => {
        await expect(rooms.getMessages(roomId, { limit: 101, skip: 0 })).rejects.toThrow('Expected number <= 100');
        const oldest = (await rooms.getMessages(roomId, { limit: 3, skip: 0 })) as Array<{ text: string }>;
        expect(oldest.map((m) => m.text)).toEqual(['m0', 'm1', 'm2']);
        const newest = (await rooms.getMessages(roomId, { limit: 3, skip: 0, sort: { createdAt: 'desc' } })) as Array<{ text: string }>;
        expect(newest.map((m) => m.text)).toEqual(['m149', 'm148', 'm147']);
        const paged = (await rooms.getMessages(roomId, { limit: 2, skip: 100, sort: { createdAt: 'desc' } })) as Array<{ text: string }>;
        expect(paged.map((m) => m.text)).toEqual(['m49', 'm48']);
    });

    it('getMessages includes thread replies unless filtered; "also send to channel" replies stay', async () => {
        const root = server.store.insertMessage({ rid: roomId, senderId: alice.id, text: 'root' });
        server.store.insertMessage({ rid: roomId, senderId: alice.id, text: 'reply', tmid: root.id });
        server.store.insertMessage({ rid: roomId, senderId: alice.id, text: 'shown reply', tmid: root.id, tshow: true });
        const all = (await rooms.getMessages(roomId, { limit: 3, skip: 0, sort: { createdAt: 'desc' } })) as Array<{ text: string; threadId?: string }>;
        expect(all.map((m) => m.text)).toEqual(['shown reply', 'reply', 'root']);
        const main = (await rooms.getMessages(roomId, { limit: 2, skip: 0, sort: { createdAt: 'desc' }, showThreadMessages: false })) as Array<{ text: string }>;
        expect(main.map((m) => m.text)).toEqual(['shown reply', 'root']);
        const thread = (await threads.getById(root.id)) as Array<{ id: string }>;
        expect(thread.filter((m) => m.id === root.id)).toHaveLength(2);
        expect(thread).toHaveLength(4);
    });

    it('refuses a message over Message_MaxAllowedSize, like the server', async () => {
        const room = server.convert.roomById(roomId);
        const sender = server.convert.user(alice);
        await expect(messages.create({ room, sender, text: 'x'.repeat(5001) }, 'app')).rejects.toThrow('error-message-size-exceeded');
        await expect(messages.create({ room, sender, text: 'x'.repeat(5000) }, 'app')).resolves.toEqual(expect.any(String));
    });

    it('marks every update as an edit', async () => {
        const stored = server.store.insertMessage({ rid: roomId, senderId: alice.id, text: 'draft' });
        await messages.update({ id: stored.id, room: server.convert.roomById(roomId), sender: server.convert.user(alice), text: 'final' }, 'app');
        expect(server.store.messages.get(stored.id)).toMatchObject({ text: 'final', editedAt: expect.any(Date) });
    });

    it('carries member ids only on direct rooms', () => {
        const bob = server.store.addUser({ username: 'bob' });
        const dm = server.store.addRoom({ type: 'd', creatorId: alice.id, memberIds: [alice.id, bob.id] });
        expect(server.convert.roomById(dm.id)?.userIds).toEqual([alice.id, bob.id]);
        expect(server.convert.roomById(roomId)?.userIds).toBeUndefined();
    });
});
