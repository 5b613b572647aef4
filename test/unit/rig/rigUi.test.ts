import AdmZip from 'adm-zip';
import { build } from 'esbuild';
import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Ephemeral, OpenSurface, Rig, StoredRoom, StoredUpload, StoredUser, UiOutcome, UiSurfaceRecord, UiView, UploadInput } from '../../../rig';
import { UiProbeApp } from '../../../rig/probe/UiProbeApp';

const PROBE = UiProbeApp.ids;

/**
 * The rig's UIKit and upload paths end to end: a tiny probe app (rig/probe/UiProbeApp.ts)
 * runs in the real engine and Deno runtime and answers every interaction with what it
 * received. Pins what an app gets for each kind of click, submit and upload, what the web
 * client does with the answers, and what the engine's permission checks do.
 */

const GRANTED = ['ui.registerButtons', 'ui.interact', 'upload.read', 'user.read', 'persistence'];

async function packageProbe(id: string, slug: string, permissions: string[]): Promise<string> {
    const bundle = await build({
        entryPoints: [join(__dirname, '..', '..', '..', 'rig', 'probe', 'UiProbeApp.ts')],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'es2020',
        external: ['@rocket.chat/apps-engine/*'],
        write: false,
        logLevel: 'warning',
    });
    const zip = new AdmZip();
    const info = {
        id,
        version: '0.0.1',
        requiredApiVersion: '^1.44.0',
        iconFile: 'icon.png',
        author: { name: 'rig', homepage: 'https://example.test', support: 'https://example.test' },
        name: slug,
        nameSlug: slug,
        classFile: 'UiProbeApp.ts',
        description: 'The rig probe app',
        implements: ['IPostMessageSent', 'IUIKitInteractionHandler'],
        permissions: permissions.map((name) => ({ name })),
    };
    zip.addFile('app.json', Buffer.from(JSON.stringify(info)));
    zip.addFile('UiProbeApp.js', Buffer.from(bundle.outputFiles[0].text));
    const path = join(mkdtempSync(join(tmpdir(), 'rig-probe-')), `${slug}.zip`);
    zip.writeZip(path);
    return path;
}

/** A 2×1 PNG (header only matters to the rig: width 2, height 1). */
const PNG = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000020000000108060000005e7ed4a90000000d4944415478da63f8cfc0f01f0005fe02fe5a2f5d1f0000000049454e44ae426082',
    'hex',
);

type Received = Record<string, unknown> & { room?: { id: string } | null; message?: { id: string } | null; user?: { id: string } };

/** What the probe app echoed: the interaction data its handler got. */
const echo = (outcome: UiOutcome): Received => (outcome.response as { received: Received }).received;
/** The server interactions that reached the user, as [wire type, path, shown by the client]. */
const shape = (views: UiSurfaceRecord[]) => views.map((v) => [v.interaction, v.via, v.shown]);

describe('rig UIKit interactions and uploads through the real engine', () => {
    let rig: Rig;
    let bareAppId: string;
    let alice: StoredUser;
    let room: StoredRoom;
    /** The engine reports a denied permission only on the server console (AppPermissionManager.notifyAboutError). */
    const consoleErrors: string[] = [];

    beforeAll(async () => {
        jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void consoleErrors.push(args.map(String).join(' ')));
        rig = await Rig.start({ zipPath: await packageProbe('9d1f7a52-6a3c-4a55-9f43-0e3b1c2d4e51', 'rig-ui-probe', GRANTED) });
        // The same code without ui.*, upload.read: the engine's checks drop its calls.
        const bare = await rig.install(await packageProbe('1b6c2f0e-3d4a-4b8e-8c7d-5e6f7a8b9c0d', 'rig-ui-probe-bare', ['user.read', 'persistence']));
        bareAppId = bare.getID();
        alice = rig.user('alice');
        room = rig.room('general', [alice]);
    }, 90_000);

    afterAll(async () => {
        await rig?.stop();
        jest.restoreAllMocks();
    });

    const denied = (permission: string) =>
        consoleErrors.filter((line) => line.includes(bareAppId) && line.includes(`lacks the following permissions:\n["${permission}"]`)).length;

    it('lists the registered buttons as GET /api/apps/actionButtons does (the app without ui.registerButtons has none)', async () => {
        const buttons = await rig.actionButtons();
        expect(buttons.map((b) => [b.appId, b.actionId, b.context])).toEqual([
            [rig.appId, PROBE.messageButton, 'messageAction'],
            [rig.appId, PROBE.roomButton, 'roomAction'],
            [rig.appId, PROBE.boxButton, 'messageBoxAction'],
        ]);
        expect(buttons[1]).toMatchObject({ labelI18n: 'probe_room', when: { roomTypes: ['public_channel', 'private_channel'] } });
        // Dropped without an error to the app: one console line per registerButton.
        expect(denied('ui.registerButtons')).toBe(3);
    });

    it('a message action carries the message, its room and a fresh triggerId; a second surface call with that triggerId is dropped', async () => {
        const root = await rig.post(alice, room, 'root');
        const reply = await rig.post(alice, room, 'in thread', { tmid: root.id });
        const outcome = await rig.clickActionButton(alice, { actionId: PROBE.messageButton, message: reply });
        const received = echo(outcome);
        expect(received).toMatchObject({
            appId: rig.appId,
            actionId: PROBE.messageButton,
            buttonContext: 'messageAction',
            triggerId: outcome.triggerId,
            room: { id: room.id },
            message: { id: reply.id, threadId: root.id, text: 'in thread' },
            user: { id: alice.id, username: 'alice' },
        });
        // The server forwards tmid, but the engine passes it on only for messageBoxAction.
        expect(received).not.toHaveProperty('threadId');
        expect(shape(outcome.views)).toEqual([
            ['modal.open', 'notify', true],
            ['modal.update', 'notify', false],
        ]);
        const [open] = rig.openViews(alice);
        expect(open.type).toBe('modal');
        expect(open.view).toMatchObject({ id: PROBE.modalId, appId: rig.appId, type: 'modal', showIcon: true, title: { text: 'Note' } });
        // openSurfaceView gave every block the app's id.
        expect(open.view.blocks.every((b) => b.appId === rig.appId)).toBe(true);
    });

    it('a button under a private notice goes to the app its element or block names, else to `core`, which fails (fuselage-ui-kit useUiKitState)', async () => {
        // The notifier passes a notice's blocks through untouched (no UIHelper.assignIds), so the
        // app must name itself; without it the client posts to /api/apps/ui.interaction/core.
        const notice = (appId?: string): Ephemeral => ({
            userId: alice.id,
            roomId: room.id,
            text: 'notice',
            at: Date.now(),
            blocks: [{ type: 'actions', ...(appId ? { appId } : {}), elements: [{ type: 'button', actionId: 'probe-notice', value: 'v' }] }],
        });
        const unnamed = await rig.clickNotice(alice, notice(), 'probe-notice', 'v');
        expect(unnamed.status).toBe(500);
        const named = await rig.clickNotice(alice, notice(rig.appId), 'probe-notice', 'v');
        expect(named.status).toBe(200);
        // The notice is not a stored message: the server converts its id to nothing.
        expect(echo(named)).toMatchObject({ appId: rig.appId, actionId: 'probe-notice', value: 'v', room: { id: room.id } });
        expect(echo(named).message ?? undefined).toBeUndefined();
    });

    it('a submit carries view.state grouped by block and no room; a viewErrorResponse keeps the modal open, success closes it', async () => {
        const errors = await rig.submitView(alice, PROBE.modalId, { 'note-block': { note: '' } });
        expect(errors.response).toMatchObject({
            success: false,
            type: 'errors',
            viewId: PROBE.modalId,
            errors: { note: 'required' },
            triggerId: errors.triggerId,
        });
        const got = echo(errors);
        // Untouched fields: initial value, or nothing (undefined does not survive the JSON body).
        expect(got.view).toMatchObject({ id: PROBE.modalId, state: { 'note-block': { note: '' }, 'other-block': {} } });
        expect(got.room ?? undefined).toBeUndefined();
        expect(shape(errors.views)).toEqual([['errors', 'response', true]]);
        expect(rig.openViews(alice)[0]).toMatchObject({ type: 'modal', errors: { note: 'required' } });

        const saved = await rig.submitView(alice, PROBE.modalId, { 'note-block': { note: 'ship it' }, 'other-block': { other: 'x' } });
        expect(echo(saved)).toMatchObject({
            triggerId: saved.triggerId,
            view: { state: { 'note-block': { note: 'ship it' }, 'other-block': { other: 'x' } } },
        });
        expect(rig.openViews(alice)).toEqual([]);
        await expect(rig.submitView(alice, PROBE.modalId)).rejects.toThrow(`view ${PROBE.modalId} is not open on alice's client`);
    });

    it('a room action carries the room only; a contextual bar button is a blockAction from container view, with no room or message', async () => {
        const outcome = await rig.clickActionButton(alice, { actionId: PROBE.roomButton, room });
        expect(echo(outcome)).toMatchObject({ buttonContext: 'roomAction', room: { id: room.id } });
        expect(echo(outcome).message ?? undefined).toBeUndefined();
        await expect(rig.clickActionButton(alice, { actionId: PROBE.roomButton, room, tmid: 'x' })).rejects.toThrow('sends no tmid');
        const dm = rig.direct([alice, rig.user('bob')]);
        await expect(rig.clickActionButton(alice, { actionId: PROBE.roomButton, room: dm })).rejects.toThrow('when.roomTypes');

        const [bar]: OpenSurface[] = rig.openViews(alice);
        expect(bar).toMatchObject({ type: 'contextualBar', view: { id: PROBE.barId, type: 'contextualBar' } });
        // Any reference to the view will do (record, open surface, view, id): the client's current copy is used.
        const view: UiView = bar.view;
        const click = await rig.clickViewButton(alice, view, PROBE.barButton);
        const received = echo(click);
        expect(received).toMatchObject({
            actionId: PROBE.barButton,
            blockId: 'bar-actions',
            value: 'r1',
            container: { type: 'view', id: PROBE.barId },
            triggerId: click.triggerId,
        });
        expect(received.room ?? undefined).toBeUndefined();
        expect(received.message ?? undefined).toBeUndefined();
        expect(click.views.map((v) => [v.interaction, v.shown])).toEqual([['contextual_bar.update', true]]);
        expect(JSON.stringify(rig.openViews(alice)[0].view.blocks)).toContain('refreshed r1');

        const closed = await rig.closeView(alice, PROBE.barId, { isCleared: true });
        expect(echo(closed)).toMatchObject({ view: { id: PROBE.barId }, isCleared: true });
        expect(echo(closed)).not.toHaveProperty('triggerId');
        expect(rig.openViews(alice)).toEqual([]);
    });

    it('the UIKit route has the server limiter: over 10 × 60 calls a minute from one address, 429, and the app never hears of it (ee/server/apps/communication/uikit.ts)', async () => {
        const carol = rig.user('carol');
        const dave = rig.user('dave');
        const limited = rig.room('limited', [carol, dave]);
        // The rig's click helper throws on anything but 200, with the outcome attached.
        const click = (who: StoredUser): Promise<UiOutcome> =>
            rig.clickActionButton(who, { actionId: PROBE.roomButton, room: limited }).catch((error: { outcome?: UiOutcome }) => {
                if (!error.outcome) {
                    throw error;
                }
                return error.outcome;
            });
        // 600 calls take a while through the engine: the limit scales with the setting, as the server's does.
        rig.server.setServerSetting('API_Enable_Rate_Limiter_Limit_Calls_Default', 1);
        try {
            const outcomes: UiOutcome[] = [];
            for (let i = 0; i < 61; i++) {
                outcomes.push(await click(carol));
            }
            expect(outcomes.slice(0, 60).filter((o) => o.status === 200 && echo(o).room?.id === limited.id)).toHaveLength(60);
            const over = outcomes[60];
            expect(over).toMatchObject({ status: 429, response: 'Too many requests, please try again later.', views: [] });
            // Nothing reached the app, so nothing came back for that click's triggerId.
            expect(rig.server.uiClient(carol.id).records.some((r) => r.triggerId === over.triggerId)).toBe(false);
            // Another client address has its own window.
            expect((await click(dave)).status).toBe(200);
            expect((await click(carol)).status).toBe(429);
            // Off: no limit at all.
            rig.server.setServerSetting('API_Enable_Rate_Limiter', false);
            expect((await click(carol)).status).toBe(200);
            // On again, with a window that has already passed: a new one opens.
            rig.server.setServerSetting('API_Enable_Rate_Limiter', true);
            rig.server.setServerSetting('API_Enable_Rate_Limiter_Limit_Time_Default', 0);
            expect((await click(carol)).status).toBe(200);
        } finally {
            rig.server.setServerSetting('API_Enable_Rate_Limiter', true);
            rig.server.setServerSetting('API_Enable_Rate_Limiter_Limit_Calls_Default', 10);
            rig.server.setServerSetting('API_Enable_Rate_Limiter_Limit_Time_Default', 60000);
        }
    });

    it('a message box action carries the typed text and the thread; a view opened by the answer needs no ui.interact', async () => {
        const outcome = await rig.clickActionButton(alice, { actionId: PROBE.boxButton, room, tmid: 'T1', text: 'hello' });
        expect(echo(outcome)).toMatchObject({
            buttonContext: 'messageBoxAction',
            room: { id: room.id },
            threadId: 'T1',
            text: 'hello',
        });
        expect(shape(outcome.views)).toEqual([['modal.open', 'response', true]]);
        await rig.closeView(alice, PROBE.modalId);

        // The app without ui.interact: its bridge calls are dropped, its answers still work.
        const bob = rig.user('bob2');
        const bare = await rig.server.uiInteraction(bob, bareAppId, {
            type: 'actionButton',
            actionId: PROBE.messageButton,
            rid: room.id,
            payload: { context: 'messageAction' },
        });
        expect(bare.status).toBe(200);
        expect(bare.views).toEqual([]);
        expect(denied('ui.interact')).toBe(2);
        const boxed = await rig.server.uiInteraction(bob, bareAppId, {
            type: 'actionButton',
            actionId: PROBE.boxButton,
            rid: room.id,
            payload: { context: 'messageBoxAction' },
        });
        expect(boxed.views.map((v) => [v.interaction, v.shown])).toEqual([['modal.open', true]]);
    });

    it('an upload: the file message, the IUpload the app reads, getBuffer / getBufferById, and nothing without upload.read', async () => {
        const dot: UploadInput = { name: 'dot.png', type: 'image/png', content: PNG, text: 'look', description: 'a dot' };
        const { upload, message } = await rig.upload(alice, room, dot);
        await rig.settle();
        const stored: StoredUpload | undefined = rig.server.store.uploads.get(upload._id);
        expect(stored).toBe(upload);
        expect(message).toMatchObject({
            text: 'look',
            groupable: false,
            file: { _id: upload._id, name: 'dot.png', type: 'image/png', size: PNG.length, format: 'png' },
            attachments: [
                {
                    title: 'dot.png',
                    type: 'file',
                    description: 'a dot',
                    title_link: `/file-upload/${upload._id}/dot.png`,
                    title_link_download: true,
                    image_url: `/file-upload/${upload._id}/dot.png`,
                    image_type: 'image/png',
                    image_size: PNG.length,
                    image_dimensions: { width: 2, height: 1 },
                    fileId: upload._id,
                },
            ],
        });
        const records = [...rig.server.bridges.persistence.records.values()].filter((r) => (r.data as { messageId?: string }).messageId === message.id);
        const mine = records.find((r) => r.appId === rig.appId)?.data as Record<string, Record<string, unknown>>;
        expect(mine.file).toEqual({ _id: upload._id, name: 'dot.png', type: 'image/png', size: PNG.length, format: 'png' });
        expect(mine.unmapped).toMatchObject({ files: [mine.file] });
        expect(mine.upload.value).toMatchObject({
            id: upload._id,
            name: 'dot.png',
            size: PNG.length,
            type: 'image/png',
            store: 'GridFS:Uploads',
            description: 'a dot',
            complete: true,
            uploading: false,
            progress: 1,
            path: `/file-upload/${upload._id}/dot.png`,
            url: `http://127.0.0.1:3000/ufs/GridFS:Uploads/${upload._id}/dot.png`,
            room: { id: room.id },
            user: { id: alice.id },
            _unmappedProperties_: { identify: { format: 'png', size: { width: 2, height: 1 } } },
        });
        expect(mine.datesAreDates).toEqual([true, true]);
        expect(mine.bufferIsBuffer).toBe(true);
        expect(mine.bufferById).toEqual({ value: PNG.toString('base64') });
        expect(mine.buffer).toEqual({ value: PNG.toString('base64') });
        // A missing id reads as null; getBufferById on it fails in the bridge (upload.id of undefined).
        expect(mine.missing).toEqual({ value: null });
        expect(String(mine.missingBuffer.error)).toMatch(/reading 'id'/);
        expect(mine.forgedStore).toEqual({ error: 'Store is invalid' });

        const bare = records.find((r) => r.appId === bareAppId)?.data as Record<string, Record<string, unknown>>;
        expect(bare.upload).toEqual({ value: null });
        expect(bare.bufferById).toEqual({ value: null });
        expect(denied('upload.read')).toBeGreaterThan(0);
    });

    it('uploads follow the server: a generic file attachment, thumbnails for large images, refusals', async () => {
        const { message } = await rig.upload(alice, room, { name: 'notes.txt', type: 'text/plain', content: Buffer.from('hi') });
        expect(message.attachments?.[0]).toMatchObject({ title: 'notes.txt', type: 'file', format: 'TXT', size: 2, title_link_download: true });
        expect(message.attachments?.[0]).not.toHaveProperty('image_url');

        const big = Buffer.from(PNG);
        big.writeUInt32BE(1000, 16);
        big.writeUInt32BE(500, 20);
        const large = await rig.upload(alice, room, { name: 'big.png', type: 'image/png', content: big });
        expect(large.thumbnail).toMatchObject({ name: 'thumb-big.png', typeGroup: 'thumb', originalFileId: large.upload._id });
        expect(large.message.files?.map((f) => f.name)).toEqual(['big.png', 'thumb-big.png']);
        expect(large.message.attachments?.[0]).toMatchObject({
            image_url: `/file-upload/${large.thumbnail!._id}/big.png`,
            image_dimensions: { width: 480, height: 240 },
        });

        await expect(rig.upload(alice, room, { name: 'x.svg', type: 'image/svg+xml', content: Buffer.from('<svg/>') })).rejects.toThrow(
            'error-invalid-file-type',
        );
        await expect(rig.upload(alice, room, { name: 'empty.txt', type: 'text/plain', content: Buffer.alloc(0) })).rejects.toThrow('file-too-small');
        const secret = rig.room('secret', [rig.admin], 'p');
        await expect(rig.upload(alice, secret, { name: 'a.txt', type: 'text/plain', content: Buffer.from('a') })).rejects.toThrow('forbidden');
        rig.server.setServerSetting('FileUpload_Enabled', false);
        try {
            await expect(rig.upload(alice, room, { name: 'a.txt', type: 'text/plain', content: Buffer.from('a') })).rejects.toThrow(
                'error-file-upload-disabled',
            );
        } finally {
            rig.server.setServerSetting('FileUpload_Enabled', true);
        }
        await rig.settle();
    });
});
