import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { AppInterface, RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { IUpload } from '@rocket.chat/apps-engine/definition/uploads';
import { fileUploadIsValidContentType } from '../../../rig/rules';
import { uploadAsUser } from '../../../rig/fileUpload';
import { RigServer } from '../../../rig/server';
import { RoomTypeCode, StoredRoom, StoredUser } from '../../../rig/store';
import { UiView, viewState } from '../../../rig/uiClient';

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
    const ui = server.bridges.ui as unknown as Protected;
    const uploads = server.bridges.uploads as unknown as Protected;
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

    describe('app/apps/server/converters/users.ts convertToApp', () => {
        it('hands over settings.preferences with the language only when the person set one', () => {
            const set = server.store.addUser({ username: `lang${++n}`, language: 'fr' });
            const unset = server.store.addUser({ username: `nolang${++n}` });
            expect(server.convert.user(set).settings).toEqual({ preferences: { language: 'fr' } });
            expect(server.convert.user(unset).settings).toEqual({ preferences: {} });
        });
    });

    describe('app/apps/server/bridges/messages.ts addReaction / removeReaction → app/reactions/server/setReaction.ts', () => {
        it('refuses a name not written :name: at the bridge, and an emoji the server does not know', async () => {
            const { alice, bot, create } = world();
            const m = await create(alice, 'question');
            await expect(messages.addReaction(m.id, bot.id, 'eyes', 'app')).rejects.toThrow('Invalid reaction');
            await expect(messages.addReaction(m.id, bot.id, ':no_such_emoji:', 'app')).rejects.toThrow('Invalid emoji provided.');
        });

        it('adds and removes by username, idempotently, firing IPostMessageReacted only for a change (the app’s own included)', async () => {
            const { alice, bot, create } = world();
            const m = await create(alice, 'question');
            const fire = jest.spyOn(server, 'fire');
            try {
                await messages.addReaction(m.id, bot.id, ':eyes:', 'app');
                await messages.addReaction(m.id, bot.id, ':eyes:', 'app');
                expect(server.store.messages.get(m.id)?.reactions).toEqual({ ':eyes:': { usernames: [bot.username] } });
                // Removing one never given changes nothing and is no error.
                await messages.removeReaction(m.id, bot.id, ':x:', 'app');
                await messages.removeReaction(m.id, bot.id, ':eyes:', 'app');
                expect(server.store.messages.get(m.id)?.reactions).toBeUndefined();
                const events = fire.mock.calls.filter(([e]) => e === AppInterface.IPostMessageReacted).map(([, p]) => p as Record<string, unknown>);
                expect(events.map((p) => [p.reaction, p.isReacted, (p.user as { id: string }).id, (p.message as { id: string }).id])).toEqual([
                    [':eyes:', true, bot.id, m.id],
                    [':eyes:', false, bot.id, m.id],
                ]);
            } finally {
                fire.mockRestore();
            }
        });

        it('refuses a user who cannot access the room, a muted one, and anyone without post-readonly in a read-only room unless reactions are allowed there', async () => {
            const { alice, bot, create, room } = world('p');
            const m = await create(alice, 'question');
            const eve = server.store.addUser({ username: `eve${n}` });
            expect(() => server.setReaction(eve.id, ':thumbsup:', m.id)).toThrow('Not Authorized');
            room.muted = [bot.username];
            await expect(messages.addReaction(m.id, bot.id, ':eyes:', 'app')).rejects.toThrow('You_have_been_muted');
            room.muted = [];
            room.readOnly = true;
            await expect(messages.addReaction(m.id, bot.id, ':eyes:', 'app')).rejects.toThrow("You can't send messages because the room is readonly.");
            room.reactWhenReadOnly = true;
            await messages.addReaction(m.id, bot.id, ':eyes:', 'app');
            await expect(messages.addReaction('no-such-message', bot.id, ':eyes:', 'app')).rejects.toThrow('Not allowed');
        });

        it('a person’s click toggles (shouldReact undefined), and the converter hands the reactions to apps', async () => {
            const { alice, create } = world();
            const m = await create(alice, 'question');
            server.setReaction(alice.id, 'thumbsup', m.id);
            expect(server.convert.message(server.store.messages.get(m.id)!).reactions).toEqual({ ':thumbsup:': { usernames: [alice.username] } });
            server.setReaction(alice.id, ':thumbsup:', m.id);
            expect(server.store.messages.get(m.id)?.reactions).toBeUndefined();
        });
    });

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

        it('an app update keeps the message in its place, with no edit window and no rate limit (streamed answers rely on it)', async () => {
            // bridges/messages.ts update() calls functions/updateMessage.ts directly: Message_AllowEditing,
            // Message_AllowEditing_BlockEditInMinutes and the edit-message permission are checked only in
            // methods/updateMessage.ts (executeUpdateMessage, the DDP method and REST chat.update), and no
            // RateLimiter wraps updateMessage (only sendMessage's DDP method is limited, 5 per second).
            const { bot, create, edit } = world();
            server.setServerSetting('Message_AllowEditing', false);
            server.setServerSetting('Message_AllowEditing_BlockEditInMinutes', 1);
            const message = await create(bot, 'first words');
            const createdAt = server.store.messages.get(message.id)!.createdAt;
            for (let i = 0; i < 20; i++) {
                await edit(message.id, bot, `first words ${i}`);
            }
            // updateMessage.ts sets editedAt and editedBy, never ts: the message stays where it was posted.
            expect(server.store.messages.get(message.id)).toMatchObject({ text: 'first words 19', createdAt, editorId: bot.id });
            server.setServerSetting('Message_AllowEditing', true);
            server.setServerSetting('Message_AllowEditing_BlockEditInMinutes', 0);
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

        it('reads and removals match records holding every association ($all), of the calling app only, in insertion order, by index', async () => {
            const appId = `app-persist-${++n}`;
            const [a, b, c] = [assoc(`a${n}`), assoc(`b${n}`), assoc(`c${n}`)];
            await persistence.createWithAssociations({ v: 1 }, [a, b], appId);
            await persistence.createWithAssociations({ v: 2 }, [b], appId);
            await persistence.createWithAssociations({ v: 3 }, [c, b, a], appId);
            await persistence.createWithAssociations({ v: 'other app' }, [a, b], `${appId}-other`);
            expect(await persistence.readByAssociations([b], appId)).toEqual([{ v: 1 }, { v: 2 }, { v: 3 }]);
            expect(await persistence.readByAssociations([b, a], appId)).toEqual([{ v: 1 }, { v: 3 }]);
            expect(await persistence.readByAssociations([a, c], appId)).toEqual([{ v: 3 }]);
            expect(await persistence.removeByAssociations([a], appId)).toEqual([{ v: 1 }, { v: 3 }]);
            // Gone from every association's answer; the other app's record is untouched.
            expect(await persistence.readByAssociations([b], appId)).toEqual([{ v: 2 }]);
            expect(await persistence.readByAssociations([c], appId)).toEqual([]);
            expect(await persistence.readByAssociations([a], `${appId}-other`)).toEqual([{ v: 'other app' }]);
            await persistence.createWithAssociations({ v: 4 }, [a], appId);
            expect(await persistence.readByAssociations([a], appId)).toEqual([{ v: 4 }]);
            // A whole app's purge leaves no trace in the index either.
            await (persistence as unknown as { purge(id: string): Promise<void> }).purge(appId);
            expect(await persistence.readByAssociations([a], appId)).toEqual([]);
            expect(await persistence.readByAssociations([a], `${appId}-other`)).toEqual([{ v: 'other app' }]);
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

    /** A modal interaction as the engine's UIController formats it (formatModalInteraction). */
    const modalInteraction = (type: 'modal.open' | 'modal.update', triggerId: string, title = 'T'): Record<string, unknown> => ({
        type,
        triggerId,
        appId: 'app-ui',
        view: { appId: 'app-ui', type: 'modal', id: 'v1', title: { type: 'plain_text', text: title }, blocks: [], showIcon: true },
    });
    /** Pretends an app with this id is installed, for the bridges that check it. */
    const withApp = () => jest.spyOn(server.manager, 'getOneById').mockReturnValue({} as ReturnType<typeof server.manager.getOneById>);

    describe('app/apps/server/bridges/uiInteraction.ts (notifyUser) and the web client (app/ui-message/client/ActionManager.ts)', () => {
        it('needs an installed app; broadcasts to user.id without checking the user or the triggerId', async () => {
            const { alice } = world();
            await expect(ui.notifyUser(server.convert.user(alice), modalInteraction('modal.open', 'x'), 'no-such-app')).rejects.toThrow('Invalid app provided');
            const app = withApp();
            try {
                await expect(ui.notifyUser(undefined, modalInteraction('modal.open', 'x'), 'app-ui')).rejects.toThrow(TypeError);
                await ui.notifyUser({ id: 'nobody' }, modalInteraction('modal.open', 'x'), 'app-ui');
                // Sent, but no client generated that triggerId: dropped.
                expect(server.uiClient('nobody').records.map((r) => [r.interaction, r.via, r.shown])).toEqual([['modal.open', 'notify', false]]);
                expect(server.uiClient('nobody').open()).toEqual([]);
            } finally {
                app.mockRestore();
            }
        });

        it('the client takes a triggerId it generated once, within 5 s; updates reach only an open view', async () => {
            const { alice } = world();
            const client = server.uiClient(alice.id);
            const app = withApp();
            const now = jest.spyOn(Date, 'now');
            try {
                const t1 = client.generateTriggerId('app-ui');
                await ui.notifyUser(server.convert.user(alice), modalInteraction('modal.open', t1), 'app-ui');
                await ui.notifyUser(server.convert.user(alice), modalInteraction('modal.update', t1, 'T2'), 'app-ui');
                expect(client.records.slice(-2).map((r) => [r.interaction, r.shown])).toEqual([
                    ['modal.open', true],
                    ['modal.update', false],
                ]);
                const t2 = client.generateTriggerId('app-ui');
                await ui.notifyUser(server.convert.user(alice), modalInteraction('modal.update', t2, 'T2'), 'app-ui');
                expect(client.open()).toMatchObject([{ type: 'modal', view: { id: 'v1', title: { text: 'T2' } } }]);
                const t3 = client.generateTriggerId('app-ui');
                now.mockReturnValue(Date.now() + 5001);
                await ui.notifyUser(server.convert.user(alice), modalInteraction('modal.update', t3, 'late'), 'app-ui');
                expect(client.records.at(-1)?.shown).toBe(false);
                now.mockRestore();
                client.dispose('v1');
                const t4 = client.generateTriggerId('app-ui');
                await ui.notifyUser(server.convert.user(alice), modalInteraction('modal.update', t4, 'T4'), 'app-ui');
                expect(client.records.at(-1)?.shown).toBe(true);
                expect(client.open()).toEqual([]);
                server.strict = false;
                await ui.notifyUser(server.convert.user(alice), modalInteraction('modal.open', 'made-up'), 'app-ui');
                expect(client.open()).toHaveLength(1);
            } finally {
                now.mockRestore();
                app.mockRestore();
            }
        });

        it('the engine drops the call without ui.interact (doNotifyUser), silently for the app', async () => {
            const { alice } = world();
            const env = process.env.NODE_ENV;
            const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
            process.env.NODE_ENV = 'rig';
            try {
                const sent = server.bridges.ui.interactions.length;
                await expect(
                    server.bridges.ui.doNotifyUser(server.convert.user(alice), modalInteraction('modal.open', 'x') as never, 'app-ui'),
                ).resolves.toBeUndefined();
                expect(server.bridges.ui.interactions.length).toBe(sent);
                expect(String(errors.mock.calls[0]?.[0])).toContain('["ui.interact"]');
            } finally {
                process.env.NODE_ENV = env;
                errors.mockRestore();
            }
        });

        it("the submit/close state: every field's initial value, replaced by what was entered, grouped by block", () => {
            const view: UiView = {
                id: 'v',
                appId: 'a',
                type: 'modal',
                blocks: [
                    { type: 'input', blockId: 'b1', element: { type: 'plain_text_input', actionId: 'name', initialValue: 'x' } },
                    { type: 'input', blockId: 'b2', element: { type: 'static_select', actionId: 'pick', initialOption: { value: 'o1' } } },
                    { type: 'actions', blockId: 'b3', elements: [{ type: 'button', actionId: 'go', value: 'v' }] },
                    { type: 'section', text: { type: 'plain_text', text: 'no actionable element' } },
                ],
            };
            expect(viewState(view)).toEqual({ b1: { name: 'x' }, b2: { pick: 'o1' }, b3: { go: undefined } });
            expect(JSON.parse(JSON.stringify(viewState(view, { b1: { name: 'typed' } })))).toEqual({ b1: { name: 'typed' }, b2: { pick: 'o1' }, b3: {} });
        });
    });

    describe('ee/server/apps/communication/uikit.ts (AppUIKitInteractionApi.routeHandler)', () => {
        /** Runs one interaction with the engine's answer stubbed; returns the payload the server gave the engine. */
        async function route(user: StoredUser, body: Parameters<RigServer['uiInteraction']>[2], ...answers: unknown[]) {
            const answer = answers.length ? answers[0] : { success: true };
            const listeners = server.manager.getListenerManager();
            const spy = jest.spyOn(listeners, 'executeListener');
            spy.mockImplementation(async (_event, action) => {
                if (answer instanceof Error) {
                    throw answer;
                }
                return (typeof answer === 'function' ? answer(action) : answer) as never;
            });
            try {
                const outcome = await server.uiInteraction(user, 'app-ui', body);
                const [event, action] = spy.mock.calls[0];
                expect(event).toBe(AppInterface.IUIKitInteractionHandler);
                return { outcome, action: action as unknown as Record<string, unknown> };
            } finally {
                spy.mockRestore();
            }
        }

        it('actionButton: room and message converted by id, tmid passed on, the messageBox text under payload.message', async () => {
            const { alice, room, create } = world();
            const root = await create(alice, 'root');
            const reply = await create(alice, 'reply', { threadId: root.id });
            const { outcome, action } = await route(alice, {
                type: 'actionButton',
                actionId: 'a1',
                rid: room.id,
                mid: reply.id,
                tmid: root.id,
                payload: { context: 'messageAction' },
            });
            expect(action).toMatchObject({
                type: 'actionButton',
                appId: 'app-ui',
                actionId: 'a1',
                triggerId: outcome.triggerId,
                user: { id: alice.id },
                room: { id: room.id },
                message: { id: reply.id, threadId: root.id },
                tmid: root.id,
                payload: { context: 'messageAction' },
            });
            expect(outcome).toMatchObject({ status: 200, response: { success: true } });
            const box = await route(alice, { type: 'actionButton', actionId: 'a2', rid: room.id, payload: { context: 'messageBoxAction', message: 'hi' } });
            expect(box.action).toMatchObject({ message: undefined, payload: { context: 'messageBoxAction', message: 'hi' } });
            const empty = await route(alice, { type: 'actionButton', actionId: 'a2', rid: room.id, payload: { context: 'messageBoxAction', message: '' } });
            expect(empty.action.payload).toEqual({ context: 'messageBoxAction' });
        });

        it('blockAction: from a message with room and message; from a view with neither', async () => {
            const { alice, room, create } = world();
            const message = await create(alice, 'with buttons');
            const fromMessage = await route(alice, {
                type: 'blockAction',
                actionId: 'b',
                payload: { blockId: 'blk', value: 'v' },
                container: { type: 'message', id: message.id },
                rid: room.id,
                mid: message.id,
            });
            expect(fromMessage.action).toMatchObject({
                container: { type: 'message', id: message.id },
                room: { id: room.id },
                message: { id: message.id },
                payload: { blockId: 'blk', value: 'v' },
            });
            const fromView = await route(alice, {
                type: 'blockAction',
                actionId: 'b',
                payload: { blockId: 'blk', value: 'v' },
                container: { type: 'view', id: 'v1' },
            });
            expect(fromView.action).toMatchObject({
                container: { type: 'view', id: 'v1' },
                room: undefined,
                message: undefined,
                triggerId: fromView.outcome.triggerId,
            });
        });

        it('viewSubmit has no room and no actionId; viewClosed has no triggerId; a failing handler answers 500 { error }', async () => {
            const { alice } = world();
            const view = { id: 'v1', appId: 'app-ui', type: 'modal', blocks: [], state: { b: { a: 1 } } };
            const submit = await route(alice, { type: 'viewSubmit', viewId: 'v1', payload: { view } });
            expect(submit.action).toEqual({
                type: 'viewSubmit',
                appId: 'app-ui',
                actionId: undefined,
                triggerId: submit.outcome.triggerId,
                payload: { view },
                user: expect.any(Object),
            });
            const closed = await route(alice, { type: 'viewClosed', payload: { viewId: 'v1', view, isCleared: true } });
            expect(closed.action).toEqual({ type: 'viewClosed', appId: 'app-ui', user: expect.any(Object), payload: { view, isCleared: true } });
            const failed = await route(alice, { type: 'viewSubmit', viewId: 'v1', payload: { view } }, new Error('boom'));
            expect(failed.outcome).toMatchObject({ status: 500, response: { error: 'boom' } });
        });

        it("the client acts on the answer: 'errors' keeps a submitted view open, any other answer closes it, a 500 leaves it", async () => {
            const { alice } = world();
            const client = server.uiClient(alice.id);
            const open = async () => {
                const t = client.generateTriggerId('app-ui');
                client.receive(modalInteraction('modal.open', t), 'notify');
            };
            const view = { id: 'v1', appId: 'app-ui', type: 'modal', blocks: [], state: {} };
            await open();
            // viewErrorResponse carries the submit's triggerId, so the client shows the errors.
            const viewError = (action: { triggerId: string }) => ({
                success: false,
                type: 'errors',
                triggerId: action.triggerId,
                appId: 'app-ui',
                viewId: 'v1',
                errors: { a: 'bad' },
            });
            const rejected = await route(alice, { type: 'viewSubmit', viewId: 'v1', payload: { view } }, viewError);
            expect(rejected.outcome.views.map((v) => [v.interaction, v.via, v.shown])).toEqual([['errors', 'response', true]]);
            expect(client.open()).toMatchObject([{ view: { id: 'v1' }, errors: { a: 'bad' } }]);
            // No answer at all (the handler returned nothing): the view stays.
            await route(alice, { type: 'viewSubmit', viewId: 'v1', payload: { view } }, undefined);
            expect(client.open()).toHaveLength(1);
            await route(alice, { type: 'viewSubmit', viewId: 'v1', payload: { view } }, new Error('boom'));
            expect(client.open()).toHaveLength(1);
            await route(alice, { type: 'viewSubmit', viewId: 'v1', payload: { view } }, { success: false });
            expect(client.open()).toEqual([]);
            await open();
            await route(alice, { type: 'viewClosed', payload: { viewId: 'v1', view } }, { success: true });
            expect(client.open()).toEqual([]);
        });
    });

    describe('app/apps/server/bridges/uploads.ts + converters/uploads.ts', () => {
        it('getById converts the document (rid and userId become room and user, the rest unmapped); missing is undefined', async () => {
            const { alice, room } = world();
            const { upload } = await uploadAsUser(server, alice, room, { name: 'a b.txt', type: 'text/plain', content: Buffer.from('hello') });
            const read = (await uploads.getById(upload._id, 'app')) as IUpload & { _unmappedProperties_: Record<string, unknown>; description?: string };
            expect(read).toMatchObject({
                id: upload._id,
                name: 'a b.txt',
                size: 5,
                type: 'text/plain',
                store: 'GridFS:Uploads',
                complete: true,
                uploading: false,
                progress: 1,
                path: `/file-upload/${upload._id}/a%20b.txt`,
                url: `http://127.0.0.1:3000/ufs/GridFS:Uploads/${upload._id}/a%20b.txt`,
                room: { id: room.id },
                user: { id: alice.id },
                _unmappedProperties_: {},
            });
            expect(read.updatedAt).toBeInstanceOf(Date);
            expect(read.uploadedAt).toBeInstanceOf(Date);
            expect(read.token).toMatch(/^[0-9a-fA-F]{10}$/);
            expect(read).not.toHaveProperty('description');
            expect(read._unmappedProperties_).not.toHaveProperty('rid');
            await expect(uploads.getById('nope', 'app')).resolves.toBeUndefined();
        });

        it("getBuffer reads by the document's _id from the store it names; a missing upload fails on upload.id", async () => {
            const { alice, room } = world();
            const { upload } = await uploadAsUser(server, alice, room, { name: 'a.bin', type: 'application/octet-stream', content: Buffer.from([1, 2, 3]) });
            const read = (await uploads.getById(upload._id, 'app')) as IUpload;
            await expect(uploads.getBuffer(read, 'app')).resolves.toEqual(Buffer.from([1, 2, 3]));
            await expect(uploads.getBuffer(undefined, 'app')).rejects.toThrow("Cannot read properties of undefined (reading 'id')");
            await expect(uploads.getBuffer({ ...read, store: undefined }, 'app')).rejects.toThrow('Empty Upload handler does not exists');
            await expect(uploads.getBuffer({ ...read, store: 'Elsewhere' }, 'app')).rejects.toThrow('Store is invalid');
            await expect(uploads.createUpload({}, Buffer.alloc(0), 'app')).rejects.toThrow('does not model createUpload');
        });

        it('without upload.read the engine answers undefined (the app sees null)', async () => {
            const { alice, room } = world();
            const { upload } = await uploadAsUser(server, alice, room, { name: 'a.txt', type: 'text/plain', content: Buffer.from('x') });
            const env = process.env.NODE_ENV;
            const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
            process.env.NODE_ENV = 'rig';
            try {
                await expect(server.bridges.uploads.doGetById(upload._id, 'app-without-permissions')).resolves.toBeUndefined();
                expect(String(errors.mock.calls[0]?.[0])).toContain('["upload.read"]');
            } finally {
                process.env.NODE_ENV = env;
                errors.mockRestore();
            }
        });
    });

    describe('app/file-upload/server/methods/sendFileMessage.ts (via api/server/v1/rooms.ts rooms.media + rooms.mediaConfirm)', () => {
        const png = (width: number, height: number) => {
            const b = Buffer.alloc(33);
            b.writeUInt32BE(0x89504e47, 0);
            b.writeUInt32BE(width, 16);
            b.writeUInt32BE(height, 20);
            return b;
        };

        it('posts the file message: file, files, one attachment per type, groupable false, msg; fires IPostMessageSent', async () => {
            const { alice, room } = world();
            const fire = jest.spyOn(server, 'fire');
            try {
                const image = await uploadAsUser(server, alice, room, {
                    name: 'p.png',
                    type: 'image/png',
                    content: png(10, 20),
                    text: 'see',
                    description: 'd',
                });
                expect(image.message).toMatchObject({ text: 'see', groupable: false, file: image.message.files?.[0] });
                expect(image.message.files).toEqual([{ _id: image.upload._id, name: 'p.png', type: 'image/png', size: 33, format: 'png' }]);
                expect(image.message.attachments).toEqual([
                    {
                        title: 'p.png',
                        type: 'file',
                        description: 'd',
                        title_link: `/file-upload/${image.upload._id}/p.png`,
                        title_link_download: true,
                        image_url: `/file-upload/${image.upload._id}/p.png`,
                        image_type: 'image/png',
                        image_size: 33,
                        image_dimensions: { width: 10, height: 20 },
                        fileId: image.upload._id,
                    },
                ]);
                expect(image.upload.description).toBe('d');
                expect(fire.mock.calls.map(([event, payload]) => [event, (payload as IMessage).id])).toEqual([
                    [AppInterface.IPostMessageSent, image.message.id],
                ]);
                const read = server.convert.message(image.message) as IMessage & { _unmappedProperties_: Record<string, unknown> };
                expect(read.file).toEqual(image.message.files?.[0]);
                expect(read._unmappedProperties_.files).toEqual(image.message.files);
            } finally {
                fire.mockRestore();
            }
            const audio = await uploadAsUser(server, alice, room, { name: 'a.mp3', type: 'audio/mpeg', content: Buffer.from('a') });
            expect(audio.message.attachments?.[0]).toMatchObject({
                audio_url: `/file-upload/${audio.upload._id}/a.mp3`,
                audio_type: 'audio/mpeg',
                audio_size: 1,
            });
            const video = await uploadAsUser(server, alice, room, { name: 'v.mp4', type: 'video/mp4', content: Buffer.from('v') });
            expect(video.message.attachments?.[0]).toMatchObject({
                video_url: `/file-upload/${video.upload._id}/v.mp4`,
                video_type: 'video/mp4',
                video_size: 1,
            });
            // An image type sharp cannot preview is a plain file (isImagePreviewSupported).
            const dwg = await uploadAsUser(server, alice, room, { name: 'plan.dwg', type: 'image/vnd.dwg', content: Buffer.from('d') });
            expect(dwg.message.attachments?.[0]).toEqual({
                title: 'plan.dwg',
                type: 'file',
                format: 'DWG',
                title_link: `/file-upload/${dwg.upload._id}/plan.dwg`,
                title_link_download: true,
                size: 1,
                fileId: dwg.upload._id,
            });
            expect(dwg.message.files?.[0].format).toBe('');
        });

        it('a thread upload lands under the root; a large image gets a thumbnail upload fitted inside 480×360', async () => {
            const { alice, room, create } = world();
            const root = await create(alice, 'root');
            const reply = await create(alice, 'reply', { threadId: root.id });
            const inThread = await uploadAsUser(server, alice, room, { name: 'x.txt', type: 'text/plain', content: Buffer.from('x'), tmid: reply.id });
            expect(inThread.message.tmid).toBe(root.id);
            const big = await uploadAsUser(server, alice, room, { name: 'big.png', type: 'image/png', content: png(960, 360) });
            expect(big.thumbnail).toMatchObject({
                name: 'thumb-big.png',
                type: 'image/png',
                typeGroup: 'thumb',
                originalFileId: big.upload._id,
                identify: { size: { width: 480, height: 180 } },
            });
            expect(big.message.files?.[1]).toEqual({
                _id: big.thumbnail!._id,
                name: 'thumb-big.png',
                type: 'image/png',
                size: 33,
                format: 'png',
                typeGroup: 'thumb',
            });
            expect(big.message.attachments?.[0]).toMatchObject({
                image_url: `/file-upload/${big.thumbnail!._id}/big.png`,
                image_dimensions: { width: 480, height: 180 },
            });
            server.setServerSetting('Message_Attachments_Thumbnails_Enabled', false);
            const noThumb = await uploadAsUser(server, alice, room, { name: 'big.png', type: 'image/png', content: png(960, 360) });
            expect(noThumb.thumbnail).toBeUndefined();
        });

        it('refuses as the store filter and FileUpload.validateFileUpload do', async () => {
            const { alice, room } = world();
            const dm = world('d');
            const file = { name: 'a.txt', type: 'text/plain', content: Buffer.from('a') };
            await expect(uploadAsUser(server, alice, room, { ...file, content: Buffer.alloc(0) })).rejects.toThrow('[file-too-small]');
            server.setServerSetting('FileUpload_Enabled_Direct', false);
            await expect(uploadAsUser(server, dm.alice, dm.room, file)).rejects.toThrow('[error-direct-message-file-upload-not-allowed]');
            server.setServerSetting('FileUpload_MaxFileSize', 1);
            await expect(uploadAsUser(server, alice, room, { ...file, content: Buffer.from('ab') })).rejects.toThrow('[error-file-too-large]');
            server.setServerSetting('FileUpload_MediaTypeWhiteList', 'image/*');
            await expect(uploadAsUser(server, alice, room, file)).rejects.toThrow('[error-invalid-file-type]');
            server.setServerSetting('FileUpload_MediaTypeWhiteList', '');
            server.setServerSetting('FileUpload_MaxFileSize', 104857600);
            const group = world('p');
            const outsider = server.store.addUser({ username: `outsider${n}` });
            await expect(uploadAsUser(server, outsider, group.room, file)).rejects.toThrow('forbidden');
            await expect(uploadAsUser(server, alice, room, { ...file, description: 'x'.repeat(5001) })).rejects.toThrow('error-message-size-exceeded');
            expect(server.store.uploads.size).toBeGreaterThan(0);
        });

        it('fileUploadIsValidContentType (app/utils/lib/restrictions.ts): blacklist first, then the whitelist with group wildcards', () => {
            expect(fileUploadIsValidContentType('image/svg+xml', '', 'image/svg+xml')).toBe(false);
            expect(fileUploadIsValidContentType('image/png', '', 'image/svg+xml')).toBe(true);
            expect(fileUploadIsValidContentType('image/png', 'image/*', '')).toBe(true);
            expect(fileUploadIsValidContentType('text/plain', 'image/*, application/pdf', '')).toBe(false);
            expect(fileUploadIsValidContentType('text/plain', '*', '')).toBe(true);
            expect(fileUploadIsValidContentType(undefined, 'image/*', '')).toBe(false);
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
