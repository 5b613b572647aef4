import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { AppInterface, RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { RigServer } from '../rig/server';
import { RoomTypeCode, StoredRoom, StoredUser } from '../rig/store';

/**
 * The in-memory Rocket.Chat must behave like the real server where the app depends on it;
 * otherwise the end-to-end tests prove nothing. Each test names the Rocket.Chat file it
 * follows (paths under apps/meteor/ in RocketChat/Rocket.Chat), builds the users, rooms and
 * messages it reads, and runs with the server's default settings (reset before each test).
 */
type Protected = Record<string, (...args: unknown[]) => Promise<unknown>>;
type Unmapped = { _unmappedProperties_?: Record<string, unknown> };

describe('rig fidelity', () => {
    // One server per file: the engine allows one AppManager per process. Tests share no data.
    const server = new RigServer();
    const rooms = server.bridges.rooms as unknown as Protected;
    const threads = server.bridges.threads as unknown as Protected;
    const messages = server.bridges.messages as unknown as Protected;
    const persistence = server.bridges.persistence as unknown as Protected;
    const defaults = new Map(server.store.serverSettings);
    let n = 0;

    beforeEach(() => {
        server.strict = true;
        server.store.serverSettings.clear();
        defaults.forEach((value, id) => server.store.serverSettings.set(id, value));
    });

    afterAll(() => server.close());

    /** Fresh users and a room of the given type for one test. */
    function world(type: RoomTypeCode = 'c', opts: { botIsMember?: boolean; readOnly?: boolean } = {}) {
        n++;
        const alice = server.store.addUser({ username: `alice${n}` });
        const bot = server.store.addUser({ username: `hermes${n}.bot`, type: 'app', appId: `app${n}`, roles: ['app'] });
        const members = opts.botIsMember === false ? [alice.id] : [alice.id, bot.id];
        const room = server.store.addRoom({
            type,
            name: type === 'd' ? undefined : `room${n}`,
            creatorId: alice.id,
            memberIds: members,
            readOnly: opts.readOnly,
        });
        const as = (user: StoredUser, text: string, extra: Partial<IMessage> = {}): IMessage =>
            ({ room: server.convert.room(room), sender: server.convert.user(user), text, ...extra }) as IMessage;
        const create = async (user: StoredUser, text: string, extra: Partial<IMessage> = {}, inRoom: StoredRoom = room) =>
            server.store.messages.get((await messages.create({ ...as(user, text, extra), room: server.convert.room(inRoom) }, 'app')) as string)!;
        const edit = (id: string, editor: StoredUser | undefined, text: string, extra: Partial<IMessage> = {}) =>
            messages.update(
                { ...as(server.store.users.get(server.store.messages.get(id)!.senderId)!, text), id, editor: editor && server.convert.user(editor), ...extra },
                'app',
            );
        const remove = (id: string, by: StoredUser) => messages.delete({ ...as(by, ''), id }, server.convert.user(by), 'app');
        return { alice, bot, room, as, create, edit, remove };
    }

    describe('app/apps/server/bridges/rooms.ts getMessages', () => {
        it('at most 100, oldest first unless asked, system messages excluded', async () => {
            const { alice, room } = world();
            for (let i = 0; i < 150; i++) {
                server.store.insertMessage({ rid: room.id, senderId: alice.id, text: `m${i}` });
            }
            server.store.insertMessage({ rid: room.id, senderId: alice.id, text: 'joined', t: 'uj' });
            await expect(rooms.getMessages(room.id, { limit: 101, skip: 0 })).rejects.toThrow('Expected number <= 100');
            const oldest = (await rooms.getMessages(room.id, { limit: 3, skip: 0 })) as Array<{ text: string }>;
            expect(oldest.map((m) => m.text)).toEqual(['m0', 'm1', 'm2']);
            const newest = (await rooms.getMessages(room.id, { limit: 3, skip: 0, sort: { createdAt: 'desc' } })) as Array<{ text: string }>;
            expect(newest.map((m) => m.text)).toEqual(['m149', 'm148', 'm147']);
            const paged = (await rooms.getMessages(room.id, { limit: 2, skip: 100, sort: { createdAt: 'desc' } })) as Array<{ text: string }>;
            expect(paged.map((m) => m.text)).toEqual(['m49', 'm48']);
        });

        it('thread replies only with showThreadMessages; without it "also send to channel" replies are left out too (no tshow clause)', async () => {
            const { alice, room } = world();
            const root = server.store.postMessage({ rid: room.id, senderId: alice.id, text: 'root' });
            server.store.postMessage({ rid: room.id, senderId: alice.id, text: 'reply', tmid: root.id });
            server.store.postMessage({ rid: room.id, senderId: alice.id, text: 'shown reply', tmid: root.id, tshow: true });
            const all = (await rooms.getMessages(room.id, { limit: 3, skip: 0, sort: { createdAt: 'desc' }, showThreadMessages: true })) as Array<{
                text: string;
            }>;
            expect(all.map((m) => m.text)).toEqual(['shown reply', 'reply', 'root']);
            const main = (await rooms.getMessages(room.id, { limit: 3, skip: 0, sort: { createdAt: 'desc' }, showThreadMessages: false })) as Array<{
                text: string;
            }>;
            expect(main.map((m) => m.text)).toEqual(['root']);
            // The bridge itself reads a missing flag as false (the engine's RoomRead defaults it to true first).
            const bare = (await rooms.getMessages(room.id, { limit: 3, skip: 0 })) as Array<{ text: string }>;
            expect(bare.map((m) => m.text)).toEqual(['root']);
            server.strict = false;
            const kind = (await rooms.getMessages(room.id, { limit: 3, skip: 0, sort: { createdAt: 'desc' }, showThreadMessages: false })) as Array<{
                text: string;
            }>;
            expect(kind.map((m) => m.text)).toEqual(['shown reply', 'root']);
        });

        it('leaves out edit-history copies and deletion stubs (_hidden: { $ne: true }, t: { $exists: false })', async () => {
            const { alice, bot, room, create, edit, remove } = world();
            server.setServerSetting('Message_KeepHistory', true);
            server.setServerSetting('Message_ShowDeletedStatus', true);
            const kept = await create(bot, 'draft');
            await edit(kept.id, bot, 'final');
            const gone = await create(bot, 'to delete');
            await remove(gone.id, bot);
            expect((server.store.roomMessages.get(room.id) ?? []).length).toBe(4);
            const read = (await rooms.getMessages(room.id, { limit: 10, skip: 0, showThreadMessages: true })) as Array<{ id: string; text: string } & Unmapped>;
            expect(read.map((m) => m.text)).toEqual(['final']);
            expect(read[0]._unmappedProperties_?._hidden).toBeUndefined();
            void alice;
        });
    });

    describe('app/apps/server/bridges/thread.ts + converters/threads.ts getThreadById', () => {
        it('returns every { $or: [{ _id }, { tmid }] } match: root twice, hidden edit copies and rm stubs, flagged only under _unmappedProperties_', async () => {
            const { alice, bot, create, edit, remove } = world();
            server.setServerSetting('Message_KeepHistory', true);
            const root = await create(alice, 'question');
            const answer = await create(bot, 'draft answer', { threadId: root.id });
            await edit(answer.id, bot, 'final answer');
            server.setServerSetting('Message_ShowDeletedStatus', true);
            const status = await create(bot, 'working…', { threadId: root.id });
            await remove(status.id, bot);

            const thread = (await threads.getById(root.id)) as Array<IMessage & Unmapped>;
            expect(thread.filter((m) => m.id === root.id)).toHaveLength(2);
            // root ×2, the answer, its pre-edit copy, the status stub, the status's pre-delete copy
            expect(thread).toHaveLength(6);
            const hidden = thread.filter((m) => m._unmappedProperties_?._hidden === true);
            expect(hidden.map((m) => m.text).sort()).toEqual(['draft answer', 'working…']);
            expect(hidden.every((m) => m.threadId === root.id && m._unmappedProperties_?.parent)).toBe(true);
            const stub = thread.find((m) => m.id === status.id)!;
            // The threads converter maps no `type`: the deletion shows only as `t` among the unmapped properties.
            expect(stub.type).toBeUndefined();
            expect(stub._unmappedProperties_).toMatchObject({ t: 'rm' });
            expect(stub.text).toBe('');
            expect(thread.find((m) => m.id === answer.id)!.text).toBe('final answer');
            expect(root.tcount).toBe(1);
        });

        it('getById (convertMessage) maps t to type and hands _hidden over under _unmappedProperties_', async () => {
            const { bot, create, edit } = world();
            server.setServerSetting('Message_KeepHistory', true);
            const message = await create(bot, 'v1');
            await edit(message.id, bot, 'v2');
            const copy = [...server.store.messages.values()].find((m) => m.parent === message.id)!;
            const read = (await messages.getById(copy.id)) as IMessage & Unmapped;
            expect(read).toMatchObject({ text: 'v1', _unmappedProperties_: { _hidden: true, parent: message.id } });
            expect(read).not.toHaveProperty('_hidden');
        });
    });

    describe('app/lib/server/lib/validateCustomMessageFields.ts (sendMessage.ts validateMessage, updateMessage.ts)', () => {
        it('refuses customFields on create and update unless enabled and declared in the schema', async () => {
            const { bot, create, edit } = world();
            await expect(create(bot, 'x', { customFields: { hermes: 'answer' } })).rejects.toThrow('Custom fields not enabled');
            const plain = await create(bot, 'plain');
            await expect(edit(plain.id, bot, 'plain 2', { customFields: { hermes: 'answer' } })).rejects.toThrow('Custom fields not enabled');

            server.setServerSetting('Message_CustomFields_Enabled', true);
            // An empty schema setting fails to parse, as on the server.
            await expect(create(bot, 'x', { customFields: { hermes: 'answer' } })).rejects.toThrow(SyntaxError);
            server.setServerSetting('Message_CustomFields', JSON.stringify({ properties: { hermes: { type: 'string' } } }));
            const tagged = await create(bot, 'tagged', { customFields: { hermes: 'answer' } });
            expect(tagged.customFields).toEqual({ hermes: 'answer' });
            await expect(create(bot, 'x', { customFields: { hermes: 'answer', turn: 't1' } })).rejects.toThrow('Invalid custom fields');
            await expect(create(bot, 'x', { customFields: { hermes: 3 } })).rejects.toThrow('Invalid custom fields');

            // The update validates the merged message: a stored custom field is checked again.
            server.setServerSetting('Message_CustomFields_Enabled', false);
            await expect(edit(tagged.id, bot, 'tagged 2')).rejects.toThrow('Custom fields not enabled');
            expect(server.store.messages.get(tagged.id)!.text).toBe('tagged');

            server.strict = false;
            await expect(create(bot, 'kind', { customFields: { anything: 1 } })).resolves.toMatchObject({ customFields: { anything: 1 } });
        });
    });

    describe('app/lib/server/methods/sendMessage.ts (executeSendMessage) and functions/updateMessage.ts', () => {
        it('checks Message_MaxAllowedSize on create only', async () => {
            const { bot, create, edit } = world();
            await expect(create(bot, 'x'.repeat(5001))).rejects.toThrow('error-message-size-exceeded');
            const short = await create(bot, 'x'.repeat(5000));
            await expect(edit(short.id, bot, 'y'.repeat(6000))).resolves.toBeUndefined();
            expect(server.store.messages.get(short.id)!.text).toHaveLength(6000);
        });

        it('an update needs an editor (bridges/messages.ts), marks the message edited by it, and may empty the text', async () => {
            const { alice, bot, create, edit } = world();
            const message = await create(bot, 'draft');
            await expect(edit(message.id, undefined, 'final')).rejects.toThrow('Invalid editor assigned to the message for the update.');
            await edit(message.id, alice, 'final');
            expect(server.store.messages.get(message.id)).toMatchObject({ text: 'final', editedAt: expect.any(Date), editorId: alice.id });
            // Nothing on the app bridge path (bridge → functions/updateMessage.ts) refuses an empty edit.
            await edit(message.id, bot, '');
            expect(server.store.messages.get(message.id)!.text).toBe('');
            server.strict = false;
            await expect(edit(message.id, undefined, 'kind')).resolves.toBeUndefined();
        });

        it('stores a reply to a reply under the thread root (tmid = parent.tmid || parent._id) and counts it on the root', async () => {
            const { alice, bot, room, create } = world();
            const other = world();
            const root = await create(alice, 'root');
            const reply = await create(alice, 'reply', { threadId: root.id });
            // Posted "in" another room: executeSendMessage takes the room from the parent message.
            const nested = await create(bot, 'nested', { threadId: reply.id }, other.room);
            expect(nested).toMatchObject({ tmid: root.id, rid: room.id });
            expect(server.store.messages.get(root.id)!.tcount).toBe(2);
        });

        it('refuses a tmid when Threads_enabled is false', async () => {
            const { alice, bot, create } = world();
            const root = await create(alice, 'root');
            server.setServerSetting('Threads_enabled', false);
            await expect(create(bot, 'reply', { threadId: root.id })).rejects.toThrow('not-allowed [error-not-allowed]');
            await expect(create(bot, 'not a reply')).resolves.toMatchObject({ text: 'not a reply' });
        });
    });

    describe('app/authorization/server/functions/canSendMessage.ts', () => {
        it('app users skip the room-access check in every room type; other users need a subscription outside public channels', async () => {
            for (const type of ['c', 'p', 'd'] as const) {
                const { bot, create } = world(type, { botIsMember: false });
                await expect(create(bot, `app in ${type}`)).resolves.toMatchObject({ text: `app in ${type}` });
            }
            const open = world('c');
            const outsider = server.store.addUser({ username: `outsider${n}` });
            await expect(open.create(outsider, 'hello')).resolves.toMatchObject({ text: 'hello' });
            const group = world('p');
            await expect(group.create(outsider, 'hello')).rejects.toThrow('error-not-allowed');
            await expect(group.create(group.alice, 'member')).resolves.toMatchObject({ text: 'member' });
            const dm = world('d');
            await expect(dm.create(outsider, 'hello')).rejects.toThrow('error-not-allowed');
        });

        it('a read-only room refuses senders without post-readonly (the app user included); its owner and admins may post', async () => {
            const { alice, bot, create } = world('c', { readOnly: true });
            await expect(create(bot, 'hi')).rejects.toThrow("You can't send messages because the room is readonly.");
            await expect(create(alice, 'owner speaks')).resolves.toMatchObject({ text: 'owner speaks' });
            const admin = server.store.addUser({ username: `admin${n}`, roles: ['admin', 'user'] });
            await expect(create(admin, 'admin speaks')).resolves.toMatchObject({ text: 'admin speaks' });
            server.strict = false;
            await expect(create(bot, 'kind')).resolves.toMatchObject({ text: 'kind' });
        });
    });

    describe('events: functions/sendMessage.ts, functions/updateMessage.ts, functions/deleteMessage.ts', () => {
        it("fires IPostMessageSent for the app's own messages and IPostMessageUpdated after every update", async () => {
            const { bot, create, edit, remove } = world();
            const fire = jest.spyOn(server, 'fire');
            try {
                const message = await create(bot, 'mine');
                await edit(message.id, bot, 'mine, edited');
                await edit(message.id, bot, 'mine, edited again');
                await remove(message.id, bot);
                const events = fire.mock.calls.map(([event, payload]) => [
                    event,
                    (payload as { id?: string; message?: { id: string } }).id ?? (payload as { message: { id: string } }).message.id,
                ]);
                expect(events).toEqual([
                    [AppInterface.IPostMessageSent, message.id],
                    [AppInterface.IPostMessageUpdated, message.id],
                    [AppInterface.IPostMessageUpdated, message.id],
                    [AppInterface.IPostMessageDeleted, message.id],
                ]);
            } finally {
                fire.mockRestore();
            }
        });

        it("a person's edit (updateMessage.ts): history copy first with Message_KeepHistory, then text, editedAt and editedBy, then IPostMessageUpdated with the editor", async () => {
            const { alice, create } = world();
            server.store.serverSettings.set('Message_KeepHistory', true);
            const message = await create(alice, 'v1');
            const fire = jest.spyOn(server, 'fire');
            try {
                const stored = server.editMessage(message.id, alice, 'v2');
                expect(stored).toMatchObject({ text: 'v2', editorId: alice.id });
                expect(stored.editedAt).toBeInstanceOf(Date);
                const copies = [...server.store.messages.values()].filter((m) => m.parent === message.id);
                expect(copies.map((m) => [m.text, m._hidden])).toEqual([['v1', true]]);
                const [event, payload] = fire.mock.calls[0];
                expect(event).toBe(AppInterface.IPostMessageUpdated);
                expect(payload).toMatchObject({ id: message.id, text: 'v2', editor: { id: alice.id } });
            } finally {
                fire.mockRestore();
            }
        });
    });

    describe('app/lib/server/functions/deleteMessage.ts', () => {
        it('removes, hides, or leaves a t: "rm" stub depending on Message_KeepHistory / Message_ShowDeletedStatus', async () => {
            const cases: Array<[boolean, boolean, string]> = [
                [false, false, 'removed'],
                [true, false, 'hidden'],
                [false, true, 'stub'],
                [true, true, 'stub+copy'],
            ];
            for (const [keepHistory, showDeleted, expected] of cases) {
                const { bot, room, create, remove } = world();
                server.setServerSetting('Message_KeepHistory', keepHistory);
                server.setServerSetting('Message_ShowDeletedStatus', showDeleted);
                const message = await create(bot, 'status', { blocks: [{ type: 'section' }] as IMessage['blocks'] });
                await remove(message.id, bot);
                const left = server.store.roomMessages.get(room.id) ?? [];
                const outcome =
                    left.length === 0
                        ? 'removed'
                        : left.length === 1 && left[0]._hidden
                          ? 'hidden'
                          : left.length === 1 && left[0].t === 'rm'
                            ? 'stub'
                            : left.length === 2 &&
                                left.some((m) => m.t === 'rm' && m.text === '' && !m.blocks) &&
                                left.some((m) => m._hidden && m.text === 'status')
                              ? 'stub+copy'
                              : JSON.stringify(left);
                expect([keepHistory, showDeleted, outcome]).toEqual([keepHistory, showDeleted, expected]);
            }
        });

        it('keeps a thread root with replies as a stub plus a hidden copy whatever the settings, and lowers the count for a deleted reply', async () => {
            const { alice, bot, room, create, remove } = world();
            const root = await create(bot, 'root');
            const reply = await create(alice, 'reply', { threadId: root.id });
            const other = await create(alice, 'another', { threadId: root.id });
            expect(server.store.messages.get(root.id)!.tcount).toBe(2);
            await remove(other.id, alice);
            expect(server.store.messages.get(other.id)).toBeUndefined();
            expect(server.store.messages.get(root.id)!.tcount).toBe(1);
            await remove(root.id, bot);
            expect(server.store.messages.get(root.id)).toMatchObject({ t: 'rm', text: '' });
            expect((server.store.roomMessages.get(room.id) ?? []).filter((m) => m._hidden && m.parent === root.id)).toHaveLength(1);
            expect(server.store.messages.get(reply.id)).toBeDefined();
        });
    });

    describe('app/apps/server/bridges/persistence.ts', () => {
        const assoc = (id: string) => new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, id);

        it('updateByAssociations matches the exact association array (order included) and updates one record', async () => {
            const appId = `app-persist-${++n}`;
            const [a, b] = [assoc(`a${n}`), assoc(`b${n}`)];
            await persistence.createWithAssociations({ v: 'ab' }, [a, b], appId);
            // A subset does not match: without upsert nothing changes, with it a new record is made.
            await expect(persistence.updateByAssociations([a], { v: 'a only' }, false, appId)).resolves.toBe('');
            expect(await persistence.readByAssociations([a], appId)).toEqual([{ v: 'ab' }]);
            await persistence.updateByAssociations([b, a], { v: 'reversed' }, true, appId);
            expect(await persistence.readByAssociations([a, b], appId)).toEqual([{ v: 'ab' }, { v: 'reversed' }]);
            await expect(persistence.updateByAssociations([a, b], { v: 'ab 2' }, true, appId)).resolves.toBe('');
            expect(await persistence.readByAssociations([a, b], appId)).toEqual([{ v: 'ab 2' }, { v: 'reversed' }]);
            await expect(persistence.update('any', { v: 1 }, false, appId)).rejects.toThrow('Not implemented.');
            await expect(persistence.removeByAssociations([assoc('none')], appId)).resolves.toBeUndefined();

            server.strict = false;
            await persistence.updateByAssociations([a], { v: 'kind' }, false, appId);
            expect(await persistence.readByAssociations([a, b], appId)).toEqual([{ v: 'kind' }, { v: 'kind' }]);
        });
    });

    describe('app/apps/server/converters/messages.ts attachments (_convertAppAttachments / _convertAttachmentsToApp)', () => {
        it('stores the server shape and reads back the app shape; links must be absolute or uploads', async () => {
            const { bot, create } = world();
            const message = await create(bot, 'see attached', {
                attachments: [
                    {
                        title: { value: 'report.pdf', link: '/file-upload/f1/report.pdf', displayDownloadLink: true },
                        type: 'file',
                        description: 'Q3 report',
                        imageUrl: 'https://example.test/p.png',
                        author: { name: 'alice', link: 'https://example.test/alice', icon: 'https://example.test/a.png' },
                        timestampLink: 'https://example.test/m/1',
                        _unmappedProperties_: { fileId: 'f1' },
                    } as IMessage['attachments'] extends Array<infer A> | undefined ? A : never,
                ],
            });
            expect(message.attachments).toEqual([
                {
                    title: 'report.pdf',
                    title_link: '/file-upload/f1/report.pdf',
                    title_link_download: true,
                    type: 'file',
                    description: 'Q3 report',
                    image_url: 'https://example.test/p.png',
                    author_name: 'alice',
                    author_link: 'https://example.test/alice',
                    author_icon: 'https://example.test/a.png',
                    message_link: 'https://example.test/m/1',
                    fileId: 'f1',
                },
            ]);
            const read = (await messages.getById(message.id)) as IMessage;
            expect(read.attachments?.[0]).toMatchObject({
                title: { value: 'report.pdf', link: '/file-upload/f1/report.pdf', displayDownloadLink: true },
                author: { name: 'alice', link: 'https://example.test/alice', icon: 'https://example.test/a.png' },
                imageUrl: 'https://example.test/p.png',
                timestampLink: 'https://example.test/m/1',
                type: 'file',
                description: 'Q3 report',
                _unmappedProperties_: { fileId: 'f1' },
            });
            const root = await create(bot, 'root');
            const inThread = await create(bot, 'in thread', { threadId: root.id, attachments: read.attachments });
            const thread = (await threads.getById(root.id)) as IMessage[];
            expect(thread.find((m) => m.id === inThread.id)!.attachments?.[0]).toMatchObject({ fileId: 'f1', title: { value: 'report.pdf' } });
            await expect(create(bot, 'bad link', { attachments: [{ title: { value: 'x', link: 'javascript:alert(1)' } }] })).rejects.toThrow(
                'Invalid href value provided',
            );
        });
    });

    it('carries member ids only on direct rooms', () => {
        const { alice, room } = world('c');
        const bob = server.store.addUser({ username: `bob${n}` });
        const dm = server.store.addRoom({ type: 'd', creatorId: alice.id, memberIds: [alice.id, bob.id] });
        expect(server.convert.roomById(dm.id)?.userIds).toEqual([alice.id, bob.id]);
        expect(server.convert.roomById(room.id)?.userIds).toBeUndefined();
    });
});
